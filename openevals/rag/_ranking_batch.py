"""Batch scoring: judge every query, lay the hits out as numpy arrays, apply the metric's formula.

Imported only by the ``*_batch`` functions (numpy is loaded on their first call, never by
``import openevals.rag``). Results are exactly what the per-item evaluators give each query.

Two ways to judge a query, one set of rules:

* the common case - every reference list holds plain ids or ``(id, grade)`` pairs (checked for
  the whole batch at once, :func:`~openevals.rag._items.plain_pairs`), no callable ``key``, and
  the query's retrieved list holds distinct plain ids and its reference distinct ids - is judged
  by looking each reference id up among the retrieved positions; nothing here can be invalid;
* any other query (duplicates, dicts, documents, a callable key, ...) is judged by
  :func:`openevals.rag._items.judge`, exactly as an evaluator judges it, so inputs are accepted
  and rejected the same way; error messages name what the caller passed
  (``retrieved_lists[3][0]``, ``reference_lists[7]``).
"""

from __future__ import annotations

import sys
from itertools import chain, repeat
from typing import Any

import numpy as np

from openevals.rag._items import judge, plain_ids, plain_pairs
from openevals.rag._ranking_formulas import Gains, log2_table
from openevals.rag._ranking_metrics import EMPTY_SCORES, Metric, empty_reference_error

RETRIEVED = "retrieved_lists"
REFERENCE = "reference_lists"
_POSITIONS = range(sys.maxsize)  # zipped with a retrieved list: each item's 0-based position
_MISSING = -1  # a reference id not among the scored positions
_JUDGED = -2  # a reference item of a query judged by `judge` instead


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


class _Plain:
    """Every reference item of the batch, flattened: its id, grade and query."""

    def __init__(self, ids: Any, grades: Any, lengths: list[int]) -> None:
        self.ids: Any = ids
        self.grades: Any = grades
        self.lengths = lengths
        self.query = np.repeat(np.arange(len(lengths)), lengths)
        self.positions: list[int] = []
        """Per reference item: its 0-based position among the scored ones, _MISSING, or
        _JUDGED (filled while judging; `_gains` empties it and ``ids`` once it has arrays)."""


def _plain_references(reference_lists: Any) -> _Plain | None:
    """The batch's references as flat columns, when each is a list or tuple of plain ids or of
    ``(id, grade)`` pairs (one kind for the whole batch); None otherwise."""
    if not set(map(type, reference_lists)) <= {list, tuple}:
        return None
    flat = list(chain.from_iterable(reference_lists))
    lengths = list(map(len, reference_lists))
    if not flat or type(flat[0]) is not tuple:
        return _Plain(flat, np.ones(len(flat)), lengths) if plain_ids(flat) else None
    columns = plain_pairs(flat)
    if columns is None:
        return None
    ids, grades = columns
    return _Plain(ids, np.array(grades, dtype=np.float64), lengths)


class _Columns:
    """What the batch keeps of each judged query: flat lists and counts only, so that judging
    10,000 queries leaves no per-query container objects for the garbage collector to scan."""

    def __init__(self) -> None:
        self.retrieved: list[int] = []
        self.duplicates: list[int] = []
        self.plain: _Plain | None = None
        # queries judged by `judge`:
        self.judged: list[int] = []
        self.relevant: list[int] = []
        self.hit_query: list[int] = []
        self.ranks: list[int] = []
        self.gains: list[float] = []
        self.ideal_query: list[int] = []
        self.ideal: list[float] = []
        self.binary = True


def _judge_one(c: _Columns, metric: Metric, q: int, retrieved: Any, reference: Any) -> None:
    j = judge(
        retrieved,
        reference,
        metric.key,
        metric.k,
        retrieved_param=f"{RETRIEVED}[{q}]",
        reference_param=f"{REFERENCE}[{q}]",
    )
    if metric.empty_reference == "raise" and not j.ideal:
        raise empty_reference_error(metric.feedback_key, f"{REFERENCE}[{q}]")
    c.judged.append(q)
    c.relevant.append(len(j.ideal))
    c.hit_query.extend(repeat(q, len(j.ranks)))
    c.ranks.extend(j.ranks)
    c.gains.extend(j.gains)
    c.retrieved.append(j.retrieved)
    c.duplicates.append(j.duplicates)
    if metric.spec.uses_ideal:
        ideal = j.ideal[: metric.k]
        c.ideal_query.extend(repeat(q, len(ideal)))
        c.ideal.extend(ideal)
        c.binary = c.binary and j.binary


def _judge_all(metric: Metric, retrieved_lists: Any, reference_lists: Any) -> _Columns:
    c = _Columns()
    plain = None if callable(metric.key) else _plain_references(reference_lists)
    if plain is None:
        for q, (retrieved, reference) in enumerate(
            zip(retrieved_lists, reference_lists, strict=True)
        ):
            _judge_one(c, metric, q, retrieved, reference)
        return c
    c.plain = plain
    n = stop = len(retrieved_lists)
    if metric.empty_reference == "raise":
        # Judge up to the first query without a relevant reference item (its retrieved list is
        # checked first, as `judge` does), then raise for it.
        relevant = np.bincount(plain.query[plain.grades > 0], minlength=n)
        stop = int(np.argmin(relevant)) if relevant.min() == 0 else n
    k, ids, numbering = metric.k, plain.ids, _POSITIONS
    add_positions, add_retrieved = plain.positions.extend, c.retrieved.append
    add_duplicates = c.duplicates.append
    start = 0
    for q, retrieved, size in zip(
        range(min(stop + 1, n)), retrieved_lists, plain.lengths, strict=False
    ):
        reference_ids = ids[start : start + size]
        start += size
        if plain_ids(retrieved):
            top = retrieved if k is None or k >= len(retrieved) else retrieved[:k]
            position = dict(zip(top, numbering, strict=False))
            if (
                len(position) == len(top)
                and (top is retrieved or len(set(retrieved)) == len(retrieved))
                and len(set(reference_ids)) == size
            ):
                add_positions(map(position.get, reference_ids, repeat(_MISSING, size)))
                add_retrieved(len(retrieved))
                add_duplicates(0)
                continue
        add_positions(repeat(_JUDGED, size))
        _judge_one(c, metric, q, retrieved, reference_lists[q])
    if stop < n:
        raise empty_reference_error(metric.feedback_key, f"{REFERENCE}[{stop}]")
    return c


def _within(query: Any, n: int) -> tuple[Any, Any]:
    """For entries sorted by query: each one's index within its query, and the count per
    query."""
    counts = np.bincount(query, minlength=n)
    starts = np.cumsum(counts) - counts
    return np.arange(len(query)) - starts[query], counts


class _NumpyOps:
    """The column operations of :class:`~openevals.rag._ranking_formulas.Ops` on the numpy
    layout: 1-d columns, and rows padded with 0 to the batch's widest."""

    def ratio(self, num: Any, den: Any) -> Any:
        out = np.zeros(len(den))
        with np.errstate(invalid="ignore"):  # inf / inf: ndcg scores such queries again
            np.divide(num, den, out=out, where=den > 0)
        return out

    def indicator(self, col: Any) -> Any:
        return (col > 0).astype(np.float64)

    def cap(self, col: Any, bound: float) -> Any:
        return np.minimum(col, bound)

    def full(self, like: Any, value: int) -> Any:
        return np.full(len(like), value)

    def first(self, rows: Any) -> Any:
        return rows[:, 0]

    def largest(self, col: Any) -> int:
        return int(col.max())

    def take(self, table: list[float], index: Any) -> Any:
        return np.array(table)[index]

    def positions(self, rows: Any) -> Any:
        return np.broadcast_to(np.arange(1, rows.shape[1] + 1), rows.shape)

    def discounts(self, rows: Any) -> Any:
        return np.array(log2_table(int(rows.max())))[rows]

    def sum_ratios(self, num: Any, den: Any) -> Any:
        terms = np.zeros(den.shape)
        np.divide(num, den, out=terms, where=den > 0)
        # cumsum adds left to right (np.sum would sum pairwise, and differ in the last bit); a
        # sum past the float range is inf, as in a batch of one
        with np.errstate(over="ignore"):
            return np.cumsum(terms, axis=1)[:, -1]

    def tolist(self, col: Any) -> list[Any]:
        return col.tolist()  # type: ignore[no-any-return]

    def overflowed(self, col: Any) -> Any:
        return ~np.isfinite(col)

    def scaled(self, rows: Any, col: Any) -> Any:
        out = np.zeros(rows.shape)
        np.divide(rows, col[:, None], out=out, where=col[:, None] > 0)
        return out

    def anywhere(self, mask: Any) -> bool:
        return bool(mask.any())

    def where(self, mask: Any, yes: Any, no: Any) -> Any:
        return np.where(mask, yes, no)


NUMPY = _NumpyOps()


def _gains(c: _Columns, metric: Metric) -> Gains:
    k, n = metric.k, len(c.retrieved)
    retrieved = np.array(c.retrieved, dtype=np.int64)
    top = retrieved if k is None else np.minimum(retrieved, k)
    judged = np.array(c.judged, dtype=np.int64)
    n_relevant = np.zeros(n, dtype=np.int64)
    n_relevant[judged] = c.relevant
    hit_query = np.array(c.hit_query, dtype=np.int64)
    ranks = np.array(c.ranks, dtype=np.int64)
    gains = np.array(c.gains, dtype=np.float64)
    ideal_query = np.array(c.ideal_query, dtype=np.int64)
    ideal = np.array(c.ideal, dtype=np.float64)
    binary = c.binary
    if c.plain is not None:
        p = c.plain
        positions = np.fromiter(p.positions, dtype=np.int64, count=len(p.positions))
        p.positions = p.ids = []  # no long lists for the garbage collector to traverse
        relevant = (positions != _JUDGED) & (p.grades > 0)
        n_relevant += np.bincount(p.query[relevant], minlength=n)
        hit = relevant & (positions >= 0)
        hit_query = np.concatenate((hit_query, p.query[hit]))
        ranks = np.concatenate((ranks, positions[hit] + 1))
        gains = np.concatenate((gains, p.grades[hit]))
        if metric.spec.uses_ideal:
            ideal_query = np.concatenate((ideal_query, p.query[relevant]))
            ideal = np.concatenate((ideal, p.grades[relevant]))
            binary = binary and bool((p.grades[relevant] == 1.0).all())
    # Rank order within each query (a stable sort of nearly sorted keys is quick).
    order = np.argsort(hit_query * (int(top.max()) + 1) + ranks, kind="stable")
    hit_query = hit_query[order]
    index, found = _within(hit_query, n)
    width = max(1, int(found.max()))
    rank_matrix = np.zeros((n, width), dtype=np.int64)
    rank_matrix[hit_query, index] = ranks[order]
    gain_matrix = np.zeros((n, width))
    gain_matrix[hit_query, index] = gains[order]
    ideal_matrix = None
    if not binary:  # relevant gains per query, highest first, the first k of them
        order = np.lexsort((-ideal, ideal_query))
        ideal_query = ideal_query[order]
        index, counts = _within(ideal_query, n)
        lengths = counts if k is None else np.minimum(counts, k)
        ideal_matrix = np.zeros((n, max(1, int(lengths.max()))))
        kept = index < ideal_matrix.shape[1]
        ideal_matrix[ideal_query[kept], index[kept]] = ideal[order][kept]
    return Gains(NUMPY, rank_matrix, gain_matrix, found, top, n_relevant, ideal_matrix)


def run_batch(
    metric: Metric, retrieved_lists: Any, reference_lists: Any
) -> tuple[list[float | None], float | None, list[dict[str, Any]]]:
    """Per-query scores, their mean (None when all were skipped) and per-query metadata,
    identical to what ``metric`` gives each query on its own."""
    _check_lists(retrieved_lists, reference_lists)
    columns = _judge_all(metric, retrieved_lists, reference_lists)
    batch = _gains(columns, metric)
    values, extra = metric.formula(batch, metric.k)
    scores: list[float | None] = values.tolist()
    relevant_counts = batch.n_relevant.tolist()
    metadata = [
        {"k": metric.k, "relevant": relevant, "retrieved": retrieved, "retrieved_relevant": hits}
        for relevant, retrieved, hits in zip(
            relevant_counts, columns.retrieved, batch.found.tolist(), strict=True
        )
    ]
    if any(columns.duplicates):
        for q in np.flatnonzero(np.array(columns.duplicates)).tolist():
            metadata[q]["duplicates"] = columns.duplicates[q]
    for name, column in extra.items():
        for entry, value in zip(metadata, column, strict=True):
            entry[name] = value
    if 0 in relevant_counts:
        empty_score = EMPTY_SCORES.get(metric.empty_reference)
        for q in np.flatnonzero(batch.n_relevant == 0).tolist():
            scores[q] = empty_score
            for name in extra:  # no formula ran for this query
                del metadata[q][name]
    present = [s for s in scores if s is not None]
    mean = sum(present) / len(present) if present else None
    return scores, mean, metadata
