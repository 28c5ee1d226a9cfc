"""Batch scoring: judge every query, lay the gains out as numpy arrays, apply a vector formula.

Imported only by the ``*_batch`` functions (numpy is loaded on their first call, never by
``import openevals.rag``). Each query is judged exactly as the per-item evaluators judge it
(:func:`openevals.rag._items.judge`), so inputs are accepted and rejected the same way; error
messages name what the caller passed (``retrieved_lists[3][0]``, ``reference_lists[7]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openevals.rag._items import judge
from openevals.rag._ranking_formulas import Gains
from openevals.rag._ranking_metrics import EMPTY_SCORES, Metric, empty_reference_error

__all__ = ["run_batch"]

RETRIEVED = "retrieved_lists"
REFERENCE = "reference_lists"


def _check_lists(retrieved_lists: Any, reference_lists: Any) -> None:
    for name, value in ((RETRIEVED, retrieved_lists), (REFERENCE, reference_lists)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(
                f"`{name}` must be a list with one entry per query; got {type(value).__name__}"
            )
    if len(retrieved_lists) != len(reference_lists):
        raise ValueError(
            f"`{RETRIEVED}` and `{REFERENCE}` must have the same length (one entry per "
            f"query); got {len(retrieved_lists)} and {len(reference_lists)}"
        )
    if not retrieved_lists:
        raise ValueError(f"`{RETRIEVED}` is empty; a batch needs at least one query")


class _Columns:
    """What the batch keeps of each judged query: flat lists and counts only, so that judging
    10,000 queries leaves no per-query container objects for the garbage collector to scan."""

    def __init__(self) -> None:
        self.ranks: list[int] = []
        self.gains: list[float] = []
        self.hits: list[int] = []
        self.relevant: list[int] = []
        self.retrieved: list[int] = []
        self.duplicates: list[int] = []
        self.ideal: list[float] = []
        self.ideal_lengths: list[int] = []
        self.binary = True


def _judge_all(metric: Metric, retrieved_lists: Any, reference_lists: Any) -> _Columns:
    c = _Columns()
    raise_on_empty = metric.empty_reference == "raise"
    keep_ideal = metric.spec.uses_ideal
    key, k = metric.key, metric.k
    add_ranks, add_gains, add_hits = c.ranks.extend, c.gains.extend, c.hits.append
    add_relevant, add_retrieved = c.relevant.append, c.retrieved.append
    add_duplicates = c.duplicates.append
    for q, (retrieved, reference) in enumerate(zip(retrieved_lists, reference_lists, strict=True)):
        j = judge(
            retrieved,
            reference,
            key,
            k,
            retrieved_param=f"{RETRIEVED}[{q}]",
            reference_param=f"{REFERENCE}[{q}]",
        )
        if raise_on_empty and not j.ideal:
            raise empty_reference_error(metric.feedback_key, f"{REFERENCE}[{q}]")
        add_ranks(j.ranks)
        add_gains(j.gains)
        add_hits(len(j.ranks))
        add_relevant(len(j.ideal))
        add_retrieved(j.retrieved)
        add_duplicates(j.duplicates)
        if keep_ideal:
            ideal = j.ideal[:k]
            c.ideal.extend(ideal)
            c.ideal_lengths.append(len(ideal))
            c.binary = c.binary and j.binary
    return c


def _rows(lengths: Any) -> Any:
    """The row index of each entry of rows of these lengths, concatenated."""
    return np.repeat(np.arange(len(lengths)), lengths)


def _gains(columns: _Columns, k: int | None) -> Gains:
    retrieved = np.array(columns.retrieved, dtype=np.int64)
    top = retrieved if k is None else np.minimum(retrieved, k)
    # At least one column, so that formulas never reduce over an empty axis.
    gains = np.zeros((len(top), max(1, int(top.max()))))
    hits = np.array(columns.hits, dtype=np.int64)
    gains[_rows(hits), np.array(columns.ranks, dtype=np.int64) - 1] = columns.gains
    ideal = None
    if not columns.binary:
        lengths = np.array(columns.ideal_lengths, dtype=np.int64)
        ideal = np.zeros((len(lengths), max(1, int(lengths.max()))))
        ideal[np.arange(ideal.shape[1]) < lengths[:, None]] = columns.ideal
    relevant = np.array(columns.relevant, dtype=np.int64)
    return Gains(gains, top, relevant, ideal)


def run_batch(
    metric: Metric, retrieved_lists: Any, reference_lists: Any
) -> tuple[list[float | None], float | None, list[dict[str, Any]]]:
    """Per-query scores, their mean (None when all were skipped) and per-query metadata,
    identical to what ``metric`` gives each query on its own."""
    _check_lists(retrieved_lists, reference_lists)
    columns = _judge_all(metric, retrieved_lists, reference_lists)
    batch = _gains(columns, metric.k)
    values, extra = metric.spec.vector(batch, metric.k, **metric.options)
    scores: list[float | None] = values.tolist()
    metadata = [
        {"k": metric.k, "relevant": relevant, "retrieved": retrieved, "retrieved_relevant": hits}
        for relevant, retrieved, hits in zip(
            columns.relevant, columns.retrieved, columns.hits, strict=True
        )
    ]
    for q in np.flatnonzero(np.array(columns.duplicates)).tolist():
        metadata[q]["duplicates"] = columns.duplicates[q]
    for name, column in extra.items():
        for entry, value in zip(metadata, column, strict=True):
            entry[name] = value
    if 0 in columns.relevant:
        empty_score = EMPTY_SCORES.get(metric.empty_reference)
        for q in np.flatnonzero(batch.n_relevant == 0).tolist():
            scores[q] = empty_score
            for name in extra:  # no formula ran for this query
                del metadata[q][name]
    present = [s for s in scores if s is not None]
    mean = sum(present) / len(present) if present else None
    return scores, mean, metadata
