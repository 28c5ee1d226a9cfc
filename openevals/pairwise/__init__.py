"""Pairwise judging: compare two outputs with an LLM judge, and rank systems from the verdicts.

Names are resolved lazily (PEP 562): importing ``openevals.pairwise`` loads nothing but this map.
"""

# ruff: noqa: F403 - the TYPE_CHECKING star imports only tell type checkers what is re-exported

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_JUDGE = "openevals.pairwise.judge"
_STATS = "openevals.pairwise.stats"

_EXPORTS: dict[str, str] = {
    "create_pairwise_llm_as_judge": _JUDGE,
    "create_async_pairwise_llm_as_judge": _JUDGE,
    "PAIRWISE_PREFERENCE_PROMPT": _JUDGE,
    "PAIRWISE_HELPFULNESS_PROMPT": _JUDGE,
    "PAIRWISE_CORRECTNESS_PROMPT": _JUDGE,
    "bradley_terry": _STATS,
    "win_rates": _STATS,
    "win_probability": _STATS,
    "BradleyTerryRanking": _STATS,
    "PairRecord": _STATS,
    "RankedSystem": _STATS,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from openevals.pairwise.judge import *
    from openevals.pairwise.stats import *


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
