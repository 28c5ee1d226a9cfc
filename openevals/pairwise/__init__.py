"""Pairwise judging: compare two outputs with an LLM judge, and rank systems from the verdicts.

Names are resolved lazily (see :func:`openevals._lazy_exports`): importing ``openevals.pairwise`` loads
nothing but this map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.pairwise.judge import (
        PAIRWISE_CORRECTNESS_PROMPT as PAIRWISE_CORRECTNESS_PROMPT,
        PAIRWISE_HELPFULNESS_PROMPT as PAIRWISE_HELPFULNESS_PROMPT,
        PAIRWISE_PREFERENCE_PROMPT as PAIRWISE_PREFERENCE_PROMPT,
        create_async_pairwise_llm_as_judge as create_async_pairwise_llm_as_judge,
        create_pairwise_llm_as_judge as create_pairwise_llm_as_judge,
    )
    from openevals.pairwise.stats import (
        BradleyTerryRanking as BradleyTerryRanking,
        PairRecord as PairRecord,
        RankedSystem as RankedSystem,
        bradley_terry as bradley_terry,
        connected_groups as connected_groups,
        win_probability as win_probability,
        win_rates as win_rates,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
