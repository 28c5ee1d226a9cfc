"""openevals: ready-made evaluators for LLM applications.

Names are re-exported lazily (PEP 562): ``import openevals`` loads no model client, LangChain or
LangSmith code; each name's module is imported the first time the name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "exact_match": "openevals.exact",
    "exact_match_async": "openevals.exact",
    "levenshtein_distance": "openevals.string.levenshtein",
    "levenshtein_distance_async": "openevals.string.levenshtein",
    "create_json_match_evaluator": "openevals.json",
    "create_async_json_match_evaluator": "openevals.json",
    "create_llm_as_judge": "openevals.llm",
    "create_async_llm_as_judge": "openevals.llm",
    "create_trajectory_match_evaluator": "openevals.trajectory",
    "create_async_trajectory_match_evaluator": "openevals.trajectory",
    "create_trajectory_llm_as_judge": "openevals.trajectory",
    "create_async_trajectory_llm_as_judge": "openevals.trajectory",
    "evaluate": "openevals.evaluation.runner",
    "aevaluate": "openevals.evaluation.runner",
}

__all__ = [
    "aevaluate",
    "create_async_json_match_evaluator",
    "create_async_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_json_match_evaluator",
    "create_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "evaluate",
    "exact_match",
    "exact_match_async",
    "levenshtein_distance",
    "levenshtein_distance_async",
]

if TYPE_CHECKING:
    from openevals.evaluation.runner import aevaluate, evaluate
    from openevals.exact import exact_match, exact_match_async
    from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
    from openevals.string.levenshtein import levenshtein_distance, levenshtein_distance_async
    from openevals.trajectory import (
        create_async_trajectory_llm_as_judge,
        create_async_trajectory_match_evaluator,
        create_trajectory_llm_as_judge,
        create_trajectory_match_evaluator,
    )


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'openevals' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
