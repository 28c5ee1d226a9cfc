"""Deterministic retrieval ranking metrics: recall, precision, hit rate, reciprocal rank, average
precision and NDCG, as evaluators (sync and async) and as batch functions.

This module is the public surface. Each metric is described once, in the table of
:mod:`openevals.rag._ranking_metrics` (name, feedback key, formula, options and defaults, doc
line); its formulas are pure functions in :mod:`openevals.rag._ranking_formulas`. The public
functions are derived from the option dataclasses below (their signatures, for readers and type
checkers, are the dataclasses' fields, checked against the table by a test), and their docstrings
come from the table. The async twins take the signature of their sync factory.

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
from openevals._declare import async_twin, derive
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
    docstring,
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
_Q = ParamSpec("_Q")


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


# --------------------------------------------------------------------------- options, declared once
# Each public function is derived (openevals._declare.derive) from a dataclass whose fields are its
# options; a dataclass's constructor takes its bases' fields first (the last base's first), and
# keyword-only fields after positional ones. So each option is declared once, and a factory's
# options read: k, the metric's own option, key, empty_reference, feedback_key.


@dataclass(frozen=True)
class _Lists:
    """The data of a batch form (its positional parameters)."""

    retrieved_lists: Sequence[Any]
    reference_lists: Sequence[Any]


@dataclass(frozen=True, kw_only=True)
class _Cutoff:
    k: int | None = None


@dataclass(frozen=True, kw_only=True)
class _Recall(_Cutoff):
    mode: RecallMode = "multi_hit"


@dataclass(frozen=True, kw_only=True)
class _Precision(_Cutoff):
    denominator: PrecisionDenominator = "k"


@dataclass(frozen=True, kw_only=True)
class _AveragePrecision(_Cutoff):
    normalize_by: APNormalization = "relevant"


@dataclass(frozen=True, kw_only=True)
class _Judging:
    """The options after a metric's own: how items are judged, what an empty reference scores."""

    key: ItemKey = None
    empty_reference: EmptyReference = "zero"


@dataclass(frozen=True, kw_only=True)
class _Keyed(_Judging):
    feedback_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class _RecallEvaluator(_Keyed, _Recall):
    """Options of create_recall_evaluator."""


@dataclass(frozen=True, kw_only=True)
class _RecallBatch(_Judging, _Recall, _Lists):
    """Arguments of recall_batch."""


@dataclass(frozen=True, kw_only=True)
class _PrecisionEvaluator(_Keyed, _Precision):
    """Options of create_precision_evaluator."""


@dataclass(frozen=True, kw_only=True)
class _PrecisionBatch(_Judging, _Precision, _Lists):
    """Arguments of precision_batch."""


@dataclass(frozen=True, kw_only=True)
class _AveragePrecisionEvaluator(_Keyed, _AveragePrecision):
    """Options of create_average_precision_evaluator."""


@dataclass(frozen=True, kw_only=True)
class _AveragePrecisionBatch(_Judging, _AveragePrecision, _Lists):
    """Arguments of average_precision_batch."""


@dataclass(frozen=True, kw_only=True)
class _Evaluator(_Keyed, _Cutoff):
    """Options of the factories of the metrics without an option of their own."""


@dataclass(frozen=True, kw_only=True)
class _Batch(_Judging, _Cutoff, _Lists):
    """Arguments of the batch forms of the metrics without an option of their own."""


@dataclass(frozen=True, kw_only=True)
class _Retrieval:
    """Options of create_retrieval_evaluator: every metric's own options."""

    metrics: Sequence[str] = DEFAULT_METRICS
    k: int | Sequence[int] | None = None
    mode: RecallMode = "multi_hit"
    denominator: PrecisionDenominator = "k"
    normalize_by: APNormalization = "relevant"
    key: ItemKey = None
    empty_reference: EmptyReference = "zero"


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


# --------------------------------------------------------------------------- the public functions


def _forms(
    what: str, options: Callable[_P, object], arguments: Callable[_Q, object]
) -> tuple[
    Callable[_P, SimpleEvaluator], Callable[_P, SimpleAsyncEvaluator], Callable[_Q, BatchScores]
]:
    """``create_<what>_evaluator`` (taking ``options``), its async twin, and ``<what>_batch``
    (taking ``arguments``), documented from the table."""
    factory = derive(
        options,
        partial(_sync, what),
        name=f"create_{what}_evaluator",
        returns="SimpleEvaluator",
        doc=docstring(f"create_{what}_evaluator"),
    )
    batch = derive(
        arguments,
        partial(_batch, what),
        name=f"{what}_batch",
        returns="BatchScores",
        doc=docstring(f"{what}_batch"),
    )
    return factory, _async_twin(factory), batch


create_recall_evaluator, create_async_recall_evaluator, recall_batch = _forms(
    "recall", _RecallEvaluator, _RecallBatch
)
create_precision_evaluator, create_async_precision_evaluator, precision_batch = _forms(
    "precision", _PrecisionEvaluator, _PrecisionBatch
)
create_hit_rate_evaluator, create_async_hit_rate_evaluator, hit_rate_batch = _forms(
    "hit_rate", _Evaluator, _Batch
)
create_reciprocal_rank_evaluator, create_async_reciprocal_rank_evaluator, reciprocal_rank_batch = (
    _forms("reciprocal_rank", _Evaluator, _Batch)
)
(
    create_average_precision_evaluator,
    create_async_average_precision_evaluator,
    average_precision_batch,
) = _forms("average_precision", _AveragePrecisionEvaluator, _AveragePrecisionBatch)
create_ndcg_evaluator, create_async_ndcg_evaluator, ndcg_batch = _forms("ndcg", _Evaluator, _Batch)
create_retrieval_evaluator = derive(
    _Retrieval,
    partial(_sync, "retrieval"),
    name="create_retrieval_evaluator",
    returns="SimpleEvaluator",
    doc=docstring("create_retrieval_evaluator"),
)
create_async_retrieval_evaluator = _async_twin(create_retrieval_evaluator)
