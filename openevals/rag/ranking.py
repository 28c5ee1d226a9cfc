"""Deterministic retrieval ranking metrics: recall, precision, hit rate, reciprocal rank, average
precision and NDCG, as evaluators (sync and async) and as batch functions.

This module is the public surface. Each metric is described once, in the table of
:mod:`openevals.rag._ranking_metrics` (name, feedback key, formula, options and defaults, doc
line); its formulas are pure functions in :mod:`openevals.rag._ranking_formulas`. The signatures
below are explicit for readers and type checkers, checked against the table by a test, and their
docstrings come from the table. The async twins take the signature of their sync factory.

Conventions (see ``docs/rag-retrieval.md`` for the reasoning):

* ``outputs`` is the ranked list of retrieved items, ``reference_outputs`` the relevant items;
  items are identified as described in :mod:`openevals.rag._items`.
* A retrieved item that repeats an earlier one counts once: the first occurrence is judged, later
  occurrences are non-relevant positions (they still occupy a rank).
* Reference items may be graded; for binary metrics an item is relevant when its grade is > 0.
* ``k`` truncates the retrieved list to its first ``k`` positions; ``k=None`` uses the whole list.
* When the reference holds no relevant item, ``empty_reference`` decides: ``"zero"`` (default,
  score 0.0), ``"one"`` (1.0), ``"skip"`` (score ``None``, left out of batch means) or
  ``"raise"`` (``ValueError``).
* The ``*_batch`` functions score many queries at once with numpy (imported on first use) and
  give exactly the per-query results of the evaluators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ParamSpec

from openevals._contract import EvaluatorInfo, make_async_evaluator, make_evaluator
from openevals._declare import async_twin
from openevals.rag._items import ItemKey
from openevals.rag._ranking_metrics import (
    DEFAULT_METRICS,
    APNormalization,
    EmptyReference,
    Metric,
    PrecisionDenominator,
    RecallMode,
    Suite,
    build_metric,
    build_suite,
    documented,
)
from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator

__all__ = [
    "APNormalization",
    "BatchScores",
    "EmptyReference",
    "PrecisionDenominator",
    "RecallMode",
    "average_precision_batch",
    "create_async_average_precision_evaluator",
    "create_async_hit_rate_evaluator",
    "create_async_ndcg_evaluator",
    "create_async_precision_evaluator",
    "create_async_recall_evaluator",
    "create_async_reciprocal_rank_evaluator",
    "create_async_retrieval_evaluator",
    "create_average_precision_evaluator",
    "create_hit_rate_evaluator",
    "create_ndcg_evaluator",
    "create_precision_evaluator",
    "create_recall_evaluator",
    "create_reciprocal_rank_evaluator",
    "create_retrieval_evaluator",
    "hit_rate_batch",
    "ndcg_batch",
    "precision_batch",
    "recall_batch",
    "reciprocal_rank_batch",
]

_P = ParamSpec("_P")


# --------------------------------------------------------------------------- shells


def _scorer(what: str, options: Mapping[str, Any]) -> Metric | Suite:
    """The configured metric ``what`` (a table name), or the suite for ``"retrieval"``."""
    return build_suite(options) if what == "retrieval" else build_metric(what, options)


def _info(scorer: Metric | Suite) -> EvaluatorInfo:
    keys = (
        tuple(m.feedback_key for m in scorer.metrics)
        if isinstance(scorer, Suite)
        else (scorer.feedback_key,)
    )
    return EvaluatorInfo(run_name=scorer.run_name, feedback_keys=keys, pure=True)


_PASSES = ("outputs", "reference_outputs")
_RETURNS = "EvaluatorResult | list[EvaluatorResult]"


def _sync(what: str, options: Mapping[str, Any]) -> SimpleEvaluator:
    scorer = _scorer(what, options)
    info = _info(scorer)
    evaluator = make_evaluator(
        scorer.score, info, passes=_PASSES, returns=_RETURNS, name=scorer.run_name, module=__name__
    )
    if isinstance(scorer, Metric):
        _attach_batch(evaluator, scorer)
    return evaluator


def _attach_batch(evaluator: SimpleEvaluator, metric: Metric) -> None:
    """Give a one-metric evaluator a ``batch`` form (the batch runner's columnar path):
    ``evaluator.batch(outputs, reference_outputs)`` scores many queries with the numpy batch
    formula, one result per query equal to a per-query call's (comment and metadata included).
    One bad query raises for the whole call."""

    def batch(outputs: Sequence[Any], reference_outputs: Sequence[Any]) -> list[dict[str, Any]]:
        from openevals.rag._ranking_batch import run_batch  # loads numpy

        scores, _, metadata = run_batch(metric, list(outputs), list(reference_outputs))
        return [
            {
                "key": metric.feedback_key,
                "score": score,
                "comment": metric.empty_comment() if found["relevant"] == 0 else None,
                "metadata": found,
            }
            for score, found in zip(scores, metadata, strict=True)
        ]

    setattr(evaluator, "batch", batch)  # noqa: B010 (an attribute of a function object)


def _async(what: str, options: Mapping[str, Any]) -> SimpleAsyncEvaluator:
    scorer = _scorer(what, options)
    info = _info(scorer).as_async()
    return make_async_evaluator(
        scorer.score, info, passes=_PASSES, returns=_RETURNS, name=scorer.run_name, module=__name__
    )


def _async_twin(factory: Callable[_P, SimpleEvaluator]) -> Callable[_P, SimpleAsyncEvaluator]:
    """``create_async_<what>_evaluator``: the options of ``factory``, an async evaluator."""
    what = factory.__name__.removeprefix("create_").removesuffix("_evaluator")
    return async_twin(factory, partial(_async, what), returns="SimpleAsyncEvaluator")


# --------------------------------------------------------------------------- evaluators


@documented
def create_recall_evaluator(
    *,
    k: int | None = None,
    mode: RecallMode = "multi_hit",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "recall",
        dict(k=k, mode=mode, key=key, empty_reference=empty_reference, feedback_key=feedback_key),
    )


@documented
def create_precision_evaluator(
    *,
    k: int | None = None,
    denominator: PrecisionDenominator = "k",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "precision",
        dict(
            k=k,
            denominator=denominator,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        ),
    )


@documented
def create_hit_rate_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "hit_rate", dict(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


@documented
def create_reciprocal_rank_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "reciprocal_rank",
        dict(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key),
    )


@documented
def create_average_precision_evaluator(
    *,
    k: int | None = None,
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "average_precision",
        dict(
            k=k,
            normalize_by=normalize_by,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        ),
    )


@documented
def create_ndcg_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    return _sync(
        "ndcg", dict(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


@documented
def create_retrieval_evaluator(
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    k: int | Sequence[int] | None = None,
    mode: RecallMode = "multi_hit",
    denominator: PrecisionDenominator = "k",
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> SimpleEvaluator:
    return _sync(
        "retrieval",
        dict(
            metrics=metrics,
            k=k,
            mode=mode,
            denominator=denominator,
            normalize_by=normalize_by,
            key=key,
            empty_reference=empty_reference,
        ),
    )


create_async_recall_evaluator = _async_twin(create_recall_evaluator)
create_async_precision_evaluator = _async_twin(create_precision_evaluator)
create_async_hit_rate_evaluator = _async_twin(create_hit_rate_evaluator)
create_async_reciprocal_rank_evaluator = _async_twin(create_reciprocal_rank_evaluator)
create_async_average_precision_evaluator = _async_twin(create_average_precision_evaluator)
create_async_ndcg_evaluator = _async_twin(create_ndcg_evaluator)
create_async_retrieval_evaluator = _async_twin(create_retrieval_evaluator)


# --------------------------------------------------------------------------- batch forms


@dataclass(frozen=True)
class BatchScores:
    """Per-query scores of one metric over a batch, and their mean.

    ``scores[i]`` is ``None`` only for a query skipped by ``empty_reference="skip"``; ``mean``
    averages the other scores (``None`` when every query was skipped).
    """

    key: str
    scores: list[float | None]
    mean: float | None
    metadata: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _batch(what: str, arguments: Mapping[str, Any]) -> BatchScores:
    metric = build_metric(what, arguments)
    from openevals.rag._ranking_batch import run_batch  # loads numpy

    scores, mean, metadata = run_batch(
        metric, arguments["retrieved_lists"], arguments["reference_lists"]
    )
    return BatchScores(key=metric.feedback_key, scores=scores, mean=mean, metadata=metadata)


@documented
def recall_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    mode: RecallMode = "multi_hit",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "recall",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            mode=mode,
            key=key,
            empty_reference=empty_reference,
        ),
    )


@documented
def precision_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    denominator: PrecisionDenominator = "k",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "precision",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            denominator=denominator,
            key=key,
            empty_reference=empty_reference,
        ),
    )


@documented
def hit_rate_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "hit_rate",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            key=key,
            empty_reference=empty_reference,
        ),
    )


@documented
def reciprocal_rank_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "reciprocal_rank",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            key=key,
            empty_reference=empty_reference,
        ),
    )


@documented
def average_precision_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "average_precision",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            normalize_by=normalize_by,
            key=key,
            empty_reference=empty_reference,
        ),
    )


@documented
def ndcg_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    return _batch(
        "ndcg",
        dict(
            retrieved_lists=retrieved_lists,
            reference_lists=reference_lists,
            k=k,
            key=key,
            empty_reference=empty_reference,
        ),
    )
