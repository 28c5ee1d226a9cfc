"""Deterministic retrieval ranking metrics: recall, precision, hit rate, reciprocal rank, average
precision and NDCG, as evaluators (sync and async) and as batch functions.

Every metric is one pure function of a *judged ranking* (the relevance gain found at each
retrieved position plus the reference's relevant gains). The evaluator factories, their async
twins and the ``*_batch`` functions all go through the same :class:`_Metric` object, so they can
never disagree.

Conventions (see ``docs/sections/rag_retrieval.md`` for the reasoning):

* ``outputs`` is the ranked list of retrieved items, ``reference_outputs`` the relevant items;
  items are identified as described in :mod:`openevals.rag._items`.
* A retrieved item that repeats an earlier one counts once: the first occurrence is judged, later
  occurrences are non-relevant positions (they still occupy a rank).
* Reference items may be graded; for binary metrics an item is relevant when its grade is > 0.
* ``k`` truncates the retrieved list to its first ``k`` positions; ``k=None`` uses the whole list.
* When the reference holds no relevant item, ``empty_reference`` decides: ``"zero"`` (default,
  score 0.0), ``"one"`` (1.0), ``"skip"`` (score ``None``, left out of batch means) or
  ``"raise"`` (``ValueError``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from openevals.rag._items import (
    ItemKey,
    prepare_reference,
    prepare_retrieved,
    validate_key,
)
from openevals.types import EvaluatorResult, SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator, _run_evaluator

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

RecallMode = Literal["multi_hit", "single_hit"]
PrecisionDenominator = Literal["k", "retrieved"]
APNormalization = Literal["relevant", "retrieved_relevant"]
EmptyReference = Literal["zero", "one", "skip", "raise"]

_EMPTY_REFERENCE = ("zero", "one", "skip", "raise")
DEFAULT_METRICS = ("recall", "precision", "mrr", "map", "ndcg", "hit_rate")


# --------------------------------------------------------------------------- judged ranking


@dataclass(frozen=True)
class _Judged:
    """A retrieved ranking judged against a reference."""

    gains: list[float]
    """Relevance found at each retrieved position (0.0: not relevant, or a repeat)."""
    ideal: list[float]
    """The reference's relevant gains, highest first."""
    duplicates: int

    @property
    def n_relevant(self) -> int:
        return len(self.ideal)


def _judge(outputs: Any, reference_outputs: Any, key: ItemKey) -> _Judged:
    reference = prepare_reference(reference_outputs, key)
    retrieved = prepare_retrieved(outputs, key)
    seen: set[Hashable] = set()
    gains: list[float] = []
    duplicates = 0
    for ident in retrieved:
        if ident in seen:
            duplicates += 1
            gains.append(0.0)
            continue
        seen.add(ident)
        gains.append(reference.relevance.get(ident, 0.0))
    return _Judged(gains=gains, ideal=reference.relevant_gains, duplicates=duplicates)


# --------------------------------------------------------------------------- metric formulas
# Each takes a judged ranking with at least one relevant reference item and returns
# (score, extra metadata).

Formula = Callable[[_Judged, int | None], tuple[float, dict[str, Any]]]


def _hits(gains: Sequence[float]) -> int:
    return sum(1 for g in gains if g > 0)


def _recall(mode: RecallMode) -> Formula:
    def formula(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
        hits = _hits(j.gains[:k])
        if mode == "single_hit":
            return (1.0 if hits else 0.0), {}
        return hits / j.n_relevant, {}

    return formula


def _precision(denominator: PrecisionDenominator) -> Formula:
    def formula(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
        top = j.gains[:k]
        hits = _hits(top)
        size = k if (k is not None and denominator == "k") else len(top)
        return (hits / size if size else 0.0), {"denominator": size}

    return formula


def _hit_rate(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
    return (1.0 if _hits(j.gains[:k]) else 0.0), {}


def _reciprocal_rank(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
    for rank, gain in enumerate(j.gains[:k], start=1):
        if gain > 0:
            return 1.0 / rank, {"first_relevant_rank": rank}
    return 0.0, {"first_relevant_rank": None}


def _average_precision(normalize_by: APNormalization) -> Formula:
    def formula(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
        total = 0.0
        hits = 0
        for rank, gain in enumerate(j.gains[:k], start=1):
            if gain > 0:
                hits += 1
                total += hits / rank
        if normalize_by == "retrieved_relevant":
            denominator = hits
        else:
            denominator = j.n_relevant if k is None else min(k, j.n_relevant)
        score = total / denominator if denominator else 0.0
        return score, {"denominator": denominator}

    return formula


def _dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1) if g > 0)


def _ndcg(j: _Judged, k: int | None) -> tuple[float, dict[str, Any]]:
    dcg = _dcg(j.gains[:k])
    idcg = _dcg(j.ideal[:k])
    return (min(1.0, dcg / idcg) if idcg > 0 else 0.0), {"dcg": dcg, "idcg": idcg}


# --------------------------------------------------------------------------- metric object


def _check_k(k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"`k` must be a positive int or None; got {type(k).__name__} {k!r}")
    if k < 1:
        raise ValueError(f"`k` must be >= 1 (or None for the whole list); got {k}")
    return k


def _check_choice(param: str, value: Any, allowed: Sequence[str]) -> Any:
    if value not in allowed:
        raise ValueError(f"`{param}` must be one of {list(allowed)!r}; got {value!r}")
    return value


def _check_feedback_key(feedback_key: Any, default: str) -> str:
    if feedback_key is None:
        return default
    if not isinstance(feedback_key, str) or not feedback_key:
        raise TypeError(f"`feedback_key` must be a non-empty string; got {feedback_key!r}")
    return feedback_key


@dataclass(frozen=True)
class _Metric:
    """One configured metric: validated options plus its formula."""

    name: str
    feedback_key: str
    k: int | None
    formula: Formula
    key: ItemKey
    empty_reference: EmptyReference

    def result(self, judged: _Judged) -> EvaluatorResult:
        top = judged.gains[: self.k]
        metadata: dict[str, Any] = {
            "k": self.k,
            "relevant": judged.n_relevant,
            "retrieved": len(judged.gains),
            "retrieved_relevant": _hits(top),
        }
        if judged.duplicates:
            metadata["duplicates"] = judged.duplicates
        if judged.n_relevant == 0:
            if self.empty_reference == "raise":
                raise ValueError(
                    f"{self.feedback_key}: `reference_outputs` holds no relevant item, so the "
                    "metric is undefined (empty_reference='raise'); pass relevant items or choose "
                    "empty_reference='zero'|'one'|'skip'"
                )
            score: float | None = {"zero": 0.0, "one": 1.0, "skip": None}[self.empty_reference]
            comment = (
                f"reference_outputs holds no relevant item; scored {score} "
                f"(empty_reference={self.empty_reference!r})"
            )
            return _result(self.feedback_key, score, comment, metadata)
        value, extra = self.formula(judged, self.k)
        metadata.update(extra)
        return _result(self.feedback_key, float(value), None, metadata)

    def judge(self, outputs: Any, reference_outputs: Any) -> _Judged:
        return _judge(outputs, reference_outputs, self.key)

    def score(
        self, *, outputs: Any = None, reference_outputs: Any = None
    ) -> tuple[float | None, str | None, dict[str, Any] | None]:
        r = self.result(self.judge(outputs, reference_outputs))
        return r["score"], r["comment"], r["metadata"]


def _result(
    key: str, score: float | None, comment: str | None, metadata: dict[str, Any]
) -> EvaluatorResult:
    # ``score`` is None only under empty_reference="skip" (LangSmith accepts score-less feedback).
    return cast(
        EvaluatorResult, {"key": key, "score": score, "comment": comment, "metadata": metadata}
    )


def _key_name(base: str, k: int | None) -> str:
    return base if k is None else f"{base}@{k}"


def _make(
    base: str,
    formula: Formula,
    *,
    k: Any,
    key: Any,
    empty_reference: Any,
    feedback_key: Any = None,
) -> _Metric:
    checked_k = _check_k(k)
    return _Metric(
        name=base,
        feedback_key=_check_feedback_key(feedback_key, _key_name(base, checked_k)),
        k=checked_k,
        formula=formula,
        key=validate_key(key),
        empty_reference=_check_choice("empty_reference", empty_reference, _EMPTY_REFERENCE),
    )


def _recall_metric(
    *, k: Any, mode: Any, key: Any, empty_reference: Any, feedback_key: Any = None
) -> _Metric:
    _check_choice("mode", mode, ("multi_hit", "single_hit"))
    return _make(
        "recall",
        _recall(mode),
        k=k,
        key=key,
        empty_reference=empty_reference,
        feedback_key=feedback_key,
    )


def _precision_metric(
    *, k: Any, denominator: Any, key: Any, empty_reference: Any, feedback_key: Any = None
) -> _Metric:
    _check_choice("denominator", denominator, ("k", "retrieved"))
    return _make(
        "precision",
        _precision(denominator),
        k=k,
        key=key,
        empty_reference=empty_reference,
        feedback_key=feedback_key,
    )


def _hit_rate_metric(
    *, k: Any, key: Any, empty_reference: Any, feedback_key: Any = None
) -> _Metric:
    return _make(
        "hit_rate",
        _hit_rate,
        k=k,
        key=key,
        empty_reference=empty_reference,
        feedback_key=feedback_key,
    )


def _reciprocal_rank_metric(
    *, k: Any, key: Any, empty_reference: Any, feedback_key: Any = None
) -> _Metric:
    return _make(
        "reciprocal_rank",
        _reciprocal_rank,
        k=k,
        key=key,
        empty_reference=empty_reference,
        feedback_key=feedback_key,
    )


def _average_precision_metric(
    *, k: Any, normalize_by: Any, key: Any, empty_reference: Any, feedback_key: Any = None
) -> _Metric:
    _check_choice("normalize_by", normalize_by, ("relevant", "retrieved_relevant"))
    return _make(
        "average_precision",
        _average_precision(normalize_by),
        k=k,
        key=key,
        empty_reference=empty_reference,
        feedback_key=feedback_key,
    )


def _ndcg_metric(*, k: Any, key: Any, empty_reference: Any, feedback_key: Any = None) -> _Metric:
    return _make(
        "ndcg", _ndcg, k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key
    )


# --------------------------------------------------------------------------- shells


@dataclass(frozen=True)
class _Suite:
    """Several metrics scored over one judged ranking (one judgement per call)."""

    metrics: tuple[_Metric, ...]
    key: ItemKey
    run_name: str = field(default="retrieval_metrics")

    def score(self, *, outputs: Any = None, reference_outputs: Any = None) -> list[Any]:
        judged = _judge(outputs, reference_outputs, self.key)
        return [m.result(judged) for m in self.metrics]


def _sync_shell(run_name: str, feedback_key: str, scorer: Callable[..., Any]) -> SimpleEvaluator:
    def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]:
        return _run_evaluator(
            run_name=run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )

    evaluator.__name__ = run_name
    return evaluator


def _async_shell(
    run_name: str, feedback_key: str, scorer: Callable[..., Any]
) -> SimpleAsyncEvaluator:
    async def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]:
        return await _arun_evaluator(
            run_name=run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )

    evaluator.__name__ = run_name
    return evaluator


def _sync(metric: _Metric) -> SimpleEvaluator:
    return _sync_shell(metric.feedback_key, metric.feedback_key, metric.score)


def _async(metric: _Metric) -> SimpleAsyncEvaluator:
    return _async_shell(metric.feedback_key, metric.feedback_key, metric.score)


# --------------------------------------------------------------------------- public factories


def create_recall_evaluator(
    *,
    k: int | None = None,
    mode: RecallMode = "multi_hit",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """Recall of the top ``k`` retrieved items, key ``recall@k`` (``recall`` when ``k`` is None).

    ``mode="multi_hit"``: relevant items found in the top k / relevant items.
    ``mode="single_hit"``: 1.0 when at least one relevant item is in the top k, else 0.0.
    """
    return _sync(
        _recall_metric(
            k=k, mode=mode, key=key, empty_reference=empty_reference, feedback_key=feedback_key
        )
    )


def create_async_recall_evaluator(
    *,
    k: int | None = None,
    mode: RecallMode = "multi_hit",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_recall_evaluator`."""
    return _async(
        _recall_metric(
            k=k, mode=mode, key=key, empty_reference=empty_reference, feedback_key=feedback_key
        )
    )


def create_precision_evaluator(
    *,
    k: int | None = None,
    denominator: PrecisionDenominator = "k",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """Precision of the top ``k``, key ``precision@k`` (``precision`` when ``k`` is None).

    Relevant items in the top k divided by ``k`` (``denominator="k"``, the standard P@k) or by
    the number of items actually retrieved in the top k (``denominator="retrieved"``). Without
    ``k`` the denominator is the length of the retrieved list.
    """
    return _sync(
        _precision_metric(
            k=k,
            denominator=denominator,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        )
    )


def create_async_precision_evaluator(
    *,
    k: int | None = None,
    denominator: PrecisionDenominator = "k",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_precision_evaluator`."""
    return _async(
        _precision_metric(
            k=k,
            denominator=denominator,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        )
    )


def create_hit_rate_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """1.0 when a relevant item is in the top ``k``, else 0.0; key ``hit_rate@k``."""
    return _sync(
        _hit_rate_metric(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


def create_async_hit_rate_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_hit_rate_evaluator`."""
    return _async(
        _hit_rate_metric(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


def create_reciprocal_rank_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """1 / rank of the first relevant item in the top ``k`` (0.0 if none); key
    ``reciprocal_rank`` (``reciprocal_rank@k`` with ``k``). Its batch mean is the MRR."""
    return _sync(
        _reciprocal_rank_metric(
            k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key
        )
    )


def create_async_reciprocal_rank_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_reciprocal_rank_evaluator`."""
    return _async(
        _reciprocal_rank_metric(
            k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key
        )
    )


def create_average_precision_evaluator(
    *,
    k: int | None = None,
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """Average precision, key ``average_precision`` (``average_precision@k`` with ``k``).

    The sum of precision@i over the ranks i (<= k) holding a relevant item, divided by the number
    of relevant items (``normalize_by="relevant"``, capped at ``k`` when ``k`` is given) or by
    the number of relevant items actually retrieved (``normalize_by="retrieved_relevant"``, the
    graphrag-eval convention). Its batch mean is the MAP.
    """
    return _sync(
        _average_precision_metric(
            k=k,
            normalize_by=normalize_by,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        )
    )


def create_async_average_precision_evaluator(
    *,
    k: int | None = None,
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_average_precision_evaluator`."""
    return _async(
        _average_precision_metric(
            k=k,
            normalize_by=normalize_by,
            key=key,
            empty_reference=empty_reference,
            feedback_key=feedback_key,
        )
    )


def create_ndcg_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleEvaluator:
    """Normalised discounted cumulative gain of the top ``k``, key ``ndcg@k`` (``ndcg``).

    Gain = the reference item's relevance (1 when ungraded), discount = log2(rank + 1); the ideal
    DCG ranks the reference relevances highest first, truncated to ``k``.
    """
    return _sync(
        _ndcg_metric(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


def create_async_ndcg_evaluator(
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
    feedback_key: str | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_ndcg_evaluator`."""
    return _async(
        _ndcg_metric(k=k, key=key, empty_reference=empty_reference, feedback_key=feedback_key)
    )


# --------------------------------------------------------------------------- several at once

_METRIC_ALIASES = {
    "recall": "recall",
    "precision": "precision",
    "hit_rate": "hit_rate",
    "mrr": "reciprocal_rank",
    "reciprocal_rank": "reciprocal_rank",
    "map": "average_precision",
    "average_precision": "average_precision",
    "ndcg": "ndcg",
}


def _suite(
    *,
    metrics: Any,
    k: Any,
    mode: Any,
    denominator: Any,
    normalize_by: Any,
    key: Any,
    empty_reference: Any,
) -> _Suite:
    if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)) or not metrics:
        raise TypeError(
            f"`metrics` must be a non-empty list/tuple of metric names from "
            f"{sorted(_METRIC_ALIASES)!r}; got {metrics!r}"
        )
    names: list[str] = []
    for m in metrics:
        if m not in _METRIC_ALIASES:
            raise ValueError(
                f"unknown metric {m!r} in `metrics`; accepted: {sorted(_METRIC_ALIASES)!r}"
            )
        if _METRIC_ALIASES[m] not in names:
            names.append(_METRIC_ALIASES[m])
    ks: list[Any]
    if isinstance(k, (list, tuple)):
        if not k:
            raise ValueError("`k` must be an int, None or a non-empty list of ints; got []")
        ks = list(dict.fromkeys(k))
    else:
        ks = [k]
    common = {"key": key, "empty_reference": empty_reference}
    built: list[_Metric] = []
    for name in names:
        for one_k in ks:
            if name == "recall":
                built.append(_recall_metric(k=one_k, mode=mode, **common))
            elif name == "precision":
                built.append(_precision_metric(k=one_k, denominator=denominator, **common))
            elif name == "hit_rate":
                built.append(_hit_rate_metric(k=one_k, **common))
            elif name == "reciprocal_rank":
                built.append(_reciprocal_rank_metric(k=one_k, **common))
            elif name == "average_precision":
                built.append(
                    _average_precision_metric(k=one_k, normalize_by=normalize_by, **common)
                )
            else:
                built.append(_ndcg_metric(k=one_k, **common))
    return _Suite(metrics=tuple(built), key=validate_key(key))


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
    """Several ranking metrics in one call; returns a list of results (one per metric and k).

    ``metrics`` names: ``recall``, ``precision``, ``hit_rate``, ``mrr`` (or ``reciprocal_rank``),
    ``map`` (or ``average_precision``), ``ndcg``. ``k`` may be a list, e.g. ``k=[1, 5, 10]``.
    The other options are passed to the metrics they concern.
    """
    suite = _suite(
        metrics=metrics,
        k=k,
        mode=mode,
        denominator=denominator,
        normalize_by=normalize_by,
        key=key,
        empty_reference=empty_reference,
    )
    return _sync_shell(suite.run_name, suite.run_name, suite.score)


def create_async_retrieval_evaluator(
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    k: int | Sequence[int] | None = None,
    mode: RecallMode = "multi_hit",
    denominator: PrecisionDenominator = "k",
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_retrieval_evaluator`."""
    suite = _suite(
        metrics=metrics,
        k=k,
        mode=mode,
        denominator=denominator,
        normalize_by=normalize_by,
        key=key,
        empty_reference=empty_reference,
    )
    return _async_shell(suite.run_name, suite.run_name, suite.score)


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


def _run_batch(metric: _Metric, retrieved_lists: Any, reference_lists: Any) -> BatchScores:
    for name, value in (("retrieved_lists", retrieved_lists), ("reference_lists", reference_lists)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(
                f"`{name}` must be a list with one entry per query; got {type(value).__name__}"
            )
    if len(retrieved_lists) != len(reference_lists):
        raise ValueError(
            f"`retrieved_lists` and `reference_lists` must have the same length (one entry per "
            f"query); got {len(retrieved_lists)} and {len(reference_lists)}"
        )
    if not retrieved_lists:
        raise ValueError("`retrieved_lists` is empty; a batch needs at least one query")
    scores: list[float | None] = []
    metadata: list[dict[str, Any]] = []
    for i, (retrieved, reference) in enumerate(zip(retrieved_lists, reference_lists, strict=True)):
        try:
            result = metric.result(metric.judge(retrieved, reference))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"query {i}: {exc}") from exc
        scores.append(cast("float | None", result["score"]))
        metadata.append(cast("dict[str, Any]", result["metadata"]))
    present = [s for s in scores if s is not None]
    mean = sum(present) / len(present) if present else None
    return BatchScores(key=metric.feedback_key, scores=scores, mean=mean, metadata=metadata)


def recall_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    mode: RecallMode = "multi_hit",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """Recall for each query (``retrieved_lists[i]`` against ``reference_lists[i]``) and the mean."""
    metric = _recall_metric(k=k, mode=mode, key=key, empty_reference=empty_reference)
    return _run_batch(metric, retrieved_lists, reference_lists)


def precision_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    denominator: PrecisionDenominator = "k",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """Precision for each query and the mean."""
    metric = _precision_metric(
        k=k, denominator=denominator, key=key, empty_reference=empty_reference
    )
    return _run_batch(metric, retrieved_lists, reference_lists)


def hit_rate_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """Hit (0/1) for each query; the mean is the hit rate."""
    metric = _hit_rate_metric(k=k, key=key, empty_reference=empty_reference)
    return _run_batch(metric, retrieved_lists, reference_lists)


def reciprocal_rank_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """Reciprocal rank for each query; the mean is the MRR."""
    metric = _reciprocal_rank_metric(k=k, key=key, empty_reference=empty_reference)
    return _run_batch(metric, retrieved_lists, reference_lists)


def average_precision_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    normalize_by: APNormalization = "relevant",
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """Average precision for each query; the mean is the MAP."""
    metric = _average_precision_metric(
        k=k, normalize_by=normalize_by, key=key, empty_reference=empty_reference
    )
    return _run_batch(metric, retrieved_lists, reference_lists)


def ndcg_batch(
    retrieved_lists: Sequence[Any],
    reference_lists: Sequence[Any],
    *,
    k: int | None = None,
    key: ItemKey = None,
    empty_reference: EmptyReference = "zero",
) -> BatchScores:
    """NDCG for each query and the mean."""
    metric = _ndcg_metric(k=k, key=key, empty_reference=empty_reference)
    return _run_batch(metric, retrieved_lists, reference_lists)
