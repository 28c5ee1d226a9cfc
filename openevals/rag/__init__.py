"""RAG evaluators: deterministic retrieval ranking metrics and agent step scoring.

Names are resolved lazily (PEP 562): importing ``openevals.rag`` loads nothing but this map, and
``from openevals.rag import create_recall_evaluator`` loads only the ranking module - no LLM code.
To export a new name, add one ``"name": "openevals.rag.<module>"`` line to ``_EXPORTS`` (and list
it in that module's ``__all__``; a new module also gets one star import under TYPE_CHECKING).
"""

# ruff: noqa: F403 - the TYPE_CHECKING star imports only tell type checkers what is re-exported

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_RANKING = "openevals.rag.ranking"
_STEPS = "openevals.rag.steps"
_LLM = "openevals.rag.llm_metrics"

_EXPORTS: dict[str, str] = {
    # ranking metrics: evaluators
    "create_recall_evaluator": _RANKING,
    "create_async_recall_evaluator": _RANKING,
    "create_precision_evaluator": _RANKING,
    "create_async_precision_evaluator": _RANKING,
    "create_hit_rate_evaluator": _RANKING,
    "create_async_hit_rate_evaluator": _RANKING,
    "create_reciprocal_rank_evaluator": _RANKING,
    "create_async_reciprocal_rank_evaluator": _RANKING,
    "create_average_precision_evaluator": _RANKING,
    "create_async_average_precision_evaluator": _RANKING,
    "create_ndcg_evaluator": _RANKING,
    "create_async_ndcg_evaluator": _RANKING,
    "create_retrieval_evaluator": _RANKING,
    "create_async_retrieval_evaluator": _RANKING,
    # ranking metrics: batch forms
    "BatchScores": _RANKING,
    "APNormalization": _RANKING,
    "EmptyReference": _RANKING,
    "PrecisionDenominator": _RANKING,
    "RecallMode": _RANKING,
    "recall_batch": _RANKING,
    "precision_batch": _RANKING,
    "hit_rate_batch": _RANKING,
    "reciprocal_rank_batch": _RANKING,
    "average_precision_batch": _RANKING,
    "ndcg_batch": _RANKING,
    # LLM-based metrics
    "create_answer_correctness_evaluator": _LLM,
    "create_async_answer_correctness_evaluator": _LLM,
    "create_faithfulness_evaluator": _LLM,
    "create_async_faithfulness_evaluator": _LLM,
    "create_context_relevance_evaluator": _LLM,
    "create_async_context_relevance_evaluator": _LLM,
    "create_answer_relevancy_evaluator": _LLM,
    "create_async_answer_relevancy_evaluator": _LLM,
    # agent step scoring (graphrag-eval)
    "create_steps_evaluator": _STEPS,
    "create_async_steps_evaluator": _STEPS,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Star imports re-export each module's ``__all__`` to type checkers (one line per module).
    from openevals.rag.llm_metrics import *
    from openevals.rag.ranking import *
    from openevals.rag.steps import *


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'openevals.rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
