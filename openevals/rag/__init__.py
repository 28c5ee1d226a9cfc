"""RAG evaluators: deterministic retrieval ranking metrics and agent step scoring.

Names are resolved lazily (see :func:`openevals._lazy_exports`): importing ``openevals.rag`` loads
nothing but this map, and ``from openevals.rag import create_recall_evaluator`` loads only the
ranking module - no LLM code. To export a new name, add one ``name as name`` line under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.rag.llm_metrics import (
        create_answer_correctness_evaluator as create_answer_correctness_evaluator,
        create_answer_relevancy_evaluator as create_answer_relevancy_evaluator,
        create_async_answer_correctness_evaluator as create_async_answer_correctness_evaluator,
        create_async_answer_relevancy_evaluator as create_async_answer_relevancy_evaluator,
        create_async_context_relevance_evaluator as create_async_context_relevance_evaluator,
        create_async_faithfulness_evaluator as create_async_faithfulness_evaluator,
        create_context_relevance_evaluator as create_context_relevance_evaluator,
        create_faithfulness_evaluator as create_faithfulness_evaluator,
    )
    from openevals.rag.ranking import (
        APNormalization as APNormalization,
        BatchScores as BatchScores,
        EmptyReference as EmptyReference,
        PrecisionDenominator as PrecisionDenominator,
        RecallMode as RecallMode,
        average_precision_batch as average_precision_batch,
        create_async_average_precision_evaluator as create_async_average_precision_evaluator,
        create_async_hit_rate_evaluator as create_async_hit_rate_evaluator,
        create_async_ndcg_evaluator as create_async_ndcg_evaluator,
        create_async_precision_evaluator as create_async_precision_evaluator,
        create_async_recall_evaluator as create_async_recall_evaluator,
        create_async_reciprocal_rank_evaluator as create_async_reciprocal_rank_evaluator,
        create_async_retrieval_evaluator as create_async_retrieval_evaluator,
        create_average_precision_evaluator as create_average_precision_evaluator,
        create_hit_rate_evaluator as create_hit_rate_evaluator,
        create_ndcg_evaluator as create_ndcg_evaluator,
        create_precision_evaluator as create_precision_evaluator,
        create_recall_evaluator as create_recall_evaluator,
        create_reciprocal_rank_evaluator as create_reciprocal_rank_evaluator,
        create_retrieval_evaluator as create_retrieval_evaluator,
        hit_rate_batch as hit_rate_batch,
        ndcg_batch as ndcg_batch,
        precision_batch as precision_batch,
        recall_batch as recall_batch,
        reciprocal_rank_batch as reciprocal_rank_batch,
    )
    from openevals.rag.steps import (
        create_async_steps_evaluator as create_async_steps_evaluator,
        create_steps_evaluator as create_steps_evaluator,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
