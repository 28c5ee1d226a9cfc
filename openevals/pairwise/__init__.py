"""Pairwise judging: compare two outputs with an LLM judge, and rank systems from the verdicts.

Names are resolved lazily (see :func:`openevals._lazy_exports`): importing ``openevals.pairwise`` loads
nothing but this map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_JUDGE = "openevals.pairwise.judge"
_STATS = "openevals.pairwise.stats"

_EXPORTS: dict[str, str] = {
    "create_pairwise_llm_as_judge": _JUDGE,
    "create_async_pairwise_llm_as_judge": _JUDGE,
    "PAIRWISE_PREFERENCE_PROMPT": _JUDGE,
    "PAIRWISE_HELPFULNESS_PROMPT": _JUDGE,
    "PAIRWISE_CORRECTNESS_PROMPT": _JUDGE,
    "bradley_terry": _STATS,
    "connected_groups": _STATS,
    "win_rates": _STATS,
    "win_probability": _STATS,
    "BradleyTerryRanking": _STATS,
    "PairRecord": _STATS,
    "RankedSystem": _STATS,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
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

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
