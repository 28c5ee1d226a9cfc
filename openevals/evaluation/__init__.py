"""Batch evaluation: run evaluators over a dataset, aggregate, cache judge calls, report.

    from openevals.evaluation import evaluate

    result = evaluate("data.jsonl", ["exact_match", "levenshtein_distance"], output="results.jsonl")
    print(result.aggregates)
    result.report_html("report.html")

Names are resolved lazily: importing this package loads no evaluator, model or rich code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "evaluate": "openevals.evaluation.runner",
    "aevaluate": "openevals.evaluation.runner",
    "EvaluationResult": "openevals.evaluation.result",
    "EvaluationInterrupted": "openevals.evaluation.result",
    "EvaluatorSpec": "openevals.evaluation.spec",
    "SQLiteJudgeCache": "openevals.evaluation.cache",
    "default_cache_path": "openevals.evaluation.cache",
    "load_rows": "openevals.evaluation.data",
    "iter_rows": "openevals.evaluation.data",
    "build_evaluator": "openevals.evaluation.registry",
    "EVALUATOR_NAMES": "openevals.evaluation.registry",
    "DEFAULT_PRICES": "openevals.evaluation.pricing",
    "bootstrap_ci": "openevals.evaluation.aggregates",
    "describe": "openevals.evaluation.aggregates",
}

__all__ = [
    "DEFAULT_PRICES",
    "EVALUATOR_NAMES",
    "EvaluationInterrupted",
    "EvaluationResult",
    "EvaluatorSpec",
    "SQLiteJudgeCache",
    "aevaluate",
    "bootstrap_ci",
    "build_evaluator",
    "default_cache_path",
    "describe",
    "evaluate",
    "iter_rows",
    "load_rows",
]

if TYPE_CHECKING:
    from openevals.evaluation.aggregates import bootstrap_ci, describe
    from openevals.evaluation.cache import SQLiteJudgeCache, default_cache_path
    from openevals.evaluation.data import iter_rows, load_rows
    from openevals.evaluation.pricing import DEFAULT_PRICES
    from openevals.evaluation.registry import EVALUATOR_NAMES, build_evaluator
    from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult
    from openevals.evaluation.runner import aevaluate, evaluate
    from openevals.evaluation.spec import EvaluatorSpec


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'openevals.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
