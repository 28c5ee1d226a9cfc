"""The ranking metric formulas: one pure function per metric, over a batch of judged queries.

A formula takes a :class:`Gains` batch and returns one score per query and the metric's own
metadata columns. It is written once, against the few column operations of :class:`Ops`, and
runs on either layout of a batch:

* :data:`ONE` - a batch of one query, where a column is the query's value (a number) and a row
  is its list. A per-item evaluator scores its query in this layout (plain Python, no numpy:
  importing and calling an evaluator stays cheap);
* the numpy layout of :mod:`openevals.rag._ranking_batch` - padded matrices, which the
  ``*_batch`` functions build for many queries.

Sums run left to right over a query's hits in rank order in both layouts (no pairwise or
compensated summation; a padded row adds 0.0 at its end), so a query scores the same to the last
bit in either. Formulas see only queries with at least one relevant reference item (the caller
applies ``empty_reference`` to the others).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, NamedTuple, Protocol

from openevals.rag._items import Judged

Column = Any  # one value per query: a 1-d numpy array, or the query's value in a batch of one
Rows = Any  # one row per query: a 2-d numpy array padded with 0, or the query's list
Extra = dict[str, list[Any]]


class Ops(Protocol):
    """The column operations a formula uses; each layout of :class:`Gains` provides them."""

    def ratio(self, num: Column, den: Column) -> Column:
        """num / den per query, 0.0 where den is 0."""

    def indicator(self, col: Column) -> Column:
        """1.0 where the value is > 0, else 0.0."""

    def cap(self, col: Column, bound: float) -> Column:
        """min(value, bound) per query."""

    def full(self, like: Column, value: int) -> Column:
        """``value`` for every query of ``like``."""

    def first(self, rows: Rows) -> Column:
        """The first entry of each row (0 for an empty row)."""

    def largest(self, col: Column) -> int:
        """The largest value of the column."""

    def take(self, table: list[float], index: Column) -> Column:
        """table[i] for each i of ``index``."""

    def positions(self, rows: Rows) -> Rows:
        """1, 2, ... along each row."""

    def discounts(self, rows: Rows) -> Rows:
        """log2(r + 1) for each rank r (the NDCG discounts; 0.0 for padding)."""

    def sum_ratios(self, num: Rows, den: Rows) -> Column:
        """Per row, the sum of num / den over its entries, left to right (padding, where den
        is 0, is passed over)."""

    def tolist(self, col: Column) -> list[Any]:
        """The column as a list of Python numbers."""

    def overflowed(self, col: Column) -> Any:
        """Where a sum passed the float range: the queries whose value is not finite (a bool
        in a batch of one, a mask in the numpy layout; :meth:`where` reads either)."""

    def scaled(self, rows: Rows, col: Column) -> Rows:
        """Each query's row divided by the query's value in ``col`` (> 0 where it is read)."""

    def anywhere(self, mask: Any) -> bool:
        """Whether ``mask`` holds any query."""

    def where(self, mask: Any, yes: Column, no: Column) -> Column:
        """``yes`` for the queries of ``mask``, else ``no``."""


class Gains(NamedTuple):
    """A batch of judged rankings (a NamedTuple: a batch of one is built per evaluator call)."""

    ops: Ops
    """The layout's column operations."""
    ranks: Rows
    """Per query: the ranks of its hits (its relevant items in the top k, 1-based), ascending."""
    gains: Rows
    """Per query: the gain at each of ``ranks`` (all > 0)."""
    found: Column
    """Hits per query: relevant items in the top k."""
    top: Column
    """Positions actually scored per query: min(k, retrieved)."""
    n_relevant: Column
    """Relevant reference items per query (>= 1 for every query a formula scores)."""
    ideal: Rows | None
    """Per query: relevant gains highest first, the first k of them; None when every gain of
    the batch is 1.0 (the ideal list is then all ones)."""


# --------------------------------------------------------------------------- a batch of one


def log2_table(n: int) -> list[float]:
    """log2(r + 1) for r = 0..n (math.log2 in both layouts, so their discounts agree)."""
    return [math.log2(r + 1) for r in range(n + 1)]


_UNIT_IDCG = [0.0]
_CACHED_IDCG = 4096  # longest table kept between calls


def unit_idcg(n: int) -> list[float]:
    """The ideal DCG of i relevant items of gain 1.0, for i = 0..n (at least): a prefix sum of
    1 / log2(rank + 1), added left to right."""
    global _UNIT_IDCG
    table = _UNIT_IDCG
    if n >= len(table):
        table = [*table]
        total = table[-1]
        for rank in range(len(table), n + 1):
            total += 1.0 / math.log2(rank + 1)
            table.append(total)
        if n <= _CACHED_IDCG:
            _UNIT_IDCG = table  # rebinding is atomic: a concurrent reader sees either table
    return table


class _OneOps:
    """The operations on a batch of one, where a column is the query's value and a row its
    list."""

    def ratio(self, num: Column, den: Column) -> Column:
        return num / den if den else 0.0

    def indicator(self, col: Column) -> Column:
        return 1.0 if col > 0 else 0.0

    def cap(self, col: Column, bound: float) -> Column:
        return min(bound, col)

    def full(self, like: Column, value: int) -> Column:
        return value

    def first(self, rows: Rows) -> Column:
        return rows[0] if rows else 0

    def largest(self, col: Column) -> int:
        return int(col)

    def take(self, table: list[float], index: Column) -> Column:
        return table[index]

    def positions(self, rows: Rows) -> Rows:
        return range(1, len(rows) + 1)

    def discounts(self, rows: Rows) -> Rows:
        return map(math.log2, map(_PLUS_ONE, rows))  # read once, by sum_ratios

    def sum_ratios(self, num: Rows, den: Rows) -> Column:
        total = 0.0
        for n, d in zip(num, den, strict=True):  # a batch of one has no padding
            total += n / d
        return total

    def tolist(self, col: Column) -> list[Any]:
        return [col]

    def overflowed(self, col: Column) -> Any:
        return not math.isfinite(col)

    def scaled(self, rows: Rows, col: Column) -> Rows:
        return [value / col for value in rows]

    def anywhere(self, mask: Any) -> bool:
        return bool(mask)

    def where(self, mask: Any, yes: Column, no: Column) -> Column:
        return yes if mask else no


_PLUS_ONE = (1).__add__


ONE: Ops = _OneOps()


def hits(j: Judged, k: int | None) -> int:
    """Relevant items in the top ``k`` (all ranks when None)."""
    return len(j.ranks) if k is None else bisect_right(j.ranks, k)


def batch_of_one(j: Judged, k: int | None) -> Gains:
    """One judged ranking as a batch of one, in the :data:`ONE` layout."""
    ranks, gains, ideal, retrieved, _, binary = j
    n_relevant = len(ideal)
    if k is None:
        found, top = len(ranks), retrieved
    else:
        found, top = bisect_right(ranks, k), k if k < retrieved else retrieved
        if found < len(ranks):  # judged up to a larger limit (a suite's largest k)
            ranks, gains = ranks[:found], gains[:found]
        if not binary:
            ideal = ideal[:k]
    return Gains(ONE, ranks, gains, found, top, n_relevant, None if binary else ideal)


# --------------------------------------------------------------------------- the formulas


def recall(b: Gains, k: int | None, *, mode: str) -> tuple[Column, Extra]:
    if mode == "single_hit":
        return b.ops.indicator(b.found), {}
    return b.ops.ratio(b.found, b.n_relevant), {}


def precision(b: Gains, k: int | None, *, denominator: str) -> tuple[Column, Extra]:
    size = b.ops.full(b.top, k) if (k is not None and denominator == "k") else b.top
    return b.ops.ratio(b.found, size), {"denominator": b.ops.tolist(size)}


def hit_rate(b: Gains, k: int | None) -> tuple[Column, Extra]:
    return recall(b, k, mode="single_hit")


def reciprocal_rank(b: Gains, k: int | None) -> tuple[Column, Extra]:
    first = b.ops.first(b.ranks)  # 0 when the query has no hit
    ranks = [rank or None for rank in b.ops.tolist(first)]
    return b.ops.ratio(b.ops.indicator(first), first), {"first_relevant_rank": ranks}


def average_precision(b: Gains, k: int | None, *, normalize_by: str) -> tuple[Column, Extra]:
    ops = b.ops
    total = ops.sum_ratios(ops.positions(b.ranks), b.ranks)  # the i-th hit at rank r adds i / r
    if normalize_by == "retrieved_relevant":
        denominator = b.found
    elif normalize_by == "all_relevant" or k is None:
        denominator = b.n_relevant
    else:
        denominator = ops.cap(b.n_relevant, k)
    return ops.ratio(total, denominator), {"denominator": ops.tolist(denominator)}


def ndcg(b: Gains, k: int | None) -> tuple[Column, Extra]:
    ops = b.ops
    dcg = ops.sum_ratios(b.gains, ops.discounts(b.ranks))
    if b.ideal is None:  # every gain is 1.0: the ideal DCG depends on the count alone
        cut = b.n_relevant if k is None else ops.cap(b.n_relevant, k)
        idcg = ops.take(unit_idcg(ops.largest(cut)), cut)
        scores = ops.ratio(dcg, idcg)
    else:
        idcg = ops.sum_ratios(b.ideal, ops.discounts(ops.positions(b.ideal)))
        scores = ops.ratio(dcg, idcg)
        over = ops.overflowed(idcg)
        if ops.anywhere(over):
            # Grades so large that the ideal DCG passes the float range: the queries concerned
            # are scored again with their gains divided by their largest grade (the ratio is
            # the same, and every sum stays finite); the others keep their bits.
            top = ops.first(b.ideal)
            scaled_dcg = ops.sum_ratios(ops.scaled(b.gains, top), ops.discounts(b.ranks))
            ideal = ops.scaled(b.ideal, top)
            scaled_idcg = ops.sum_ratios(ideal, ops.discounts(ops.positions(ideal)))
            scores = ops.where(over, ops.ratio(scaled_dcg, scaled_idcg), scores)
    scores = ops.cap(scores, 1.0)
    return scores, {"dcg": ops.tolist(dcg), "idcg": ops.tolist(idcg)}
