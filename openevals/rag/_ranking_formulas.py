"""The ranking metric formulas, as pure functions: per query, and vectorised over a batch.

Each metric has two forms that compute the same numbers:

* the *scalar* form takes one :class:`~openevals.rag._items.Judged` ranking (plain Python, used
  by the per-item evaluators: no numpy, so importing and calling an evaluator stays cheap);
* the *vector* form takes a :class:`Gains` batch (numpy arrays, one row per query holding only
  the query's hits, so a row is as wide as the most hits any query has, not as its list; used by
  the ``*_batch`` functions) and returns one score per row.

Both return ``(scores, extra)`` where ``extra`` holds the metric's own metadata entries (per
query lists for the vector form). They are called only for queries with at least one relevant
reference item; ``empty_reference`` is applied by the caller. Sums run left to right over the
hits in rank order in both forms (no pairwise or compensated summation; a row's padding adds
0.0 at its end), so the two forms agree to the last bit.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openevals.rag._items import Judged

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]
    IntArray = NDArray[np.int64]

__all__ = [
    "Gains",
    "average_precision",
    "average_precision_vector",
    "discounts",
    "hit_rate",
    "hit_rate_vector",
    "hits",
    "ndcg",
    "ndcg_vector",
    "precision",
    "precision_vector",
    "recall",
    "recall_vector",
    "reciprocal_rank",
    "reciprocal_rank_vector",
]

Extra = dict[str, Any]


# --------------------------------------------------------------------------- shared pieces


@dataclass(frozen=True)
class Gains:
    """A batch of judged rankings, one row per query."""

    ranks: IntArray
    """(queries, width): the ranks of a query's hits (its relevant items in the top k, 1-based)
    in ascending order, then 0 past its last hit."""
    gains: FloatArray
    """(queries, width): the gain at each of ``ranks`` (all > 0), then 0.0 past the last hit."""
    found: IntArray
    """Hits per query: relevant items in the top k."""
    top: IntArray
    """Positions actually scored per query: min(k, retrieved)."""
    n_relevant: IntArray
    """Relevant reference items per query (>= 1 for every row a formula sees)."""
    ideal: FloatArray | None
    """(queries, width): relevant gains highest first, truncated to k; None when every gain is
    1.0 (the ideal list is then all ones)."""


def hits(j: Judged, k: int | None) -> int:
    """Relevant items in the top ``k`` (all ranks when None)."""
    return len(j.ranks) if k is None else bisect_right(j.ranks, k)


def _scored(j: Judged, k: int | None) -> int:
    """Positions scored: min(k, retrieved)."""
    return j.retrieved if k is None else min(k, j.retrieved)


def discounts(n: int) -> list[float]:
    """log2(rank + 1) for ranks 1..n, the NDCG discounts (math.log2, as the scalar form uses)."""
    return [math.log2(rank + 1) for rank in range(1, n + 1)]


def _row_sums(matrix: FloatArray) -> FloatArray:
    """Left-to-right sum of each row (np.sum would sum pairwise, and differ in the last bit)."""
    import numpy as np

    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0])
    return np.cumsum(matrix, axis=1)[:, -1]


def _ratio(numerator: Any, denominator: Any) -> FloatArray:
    """numerator / denominator, 0.0 where the denominator is 0."""
    import numpy as np

    out = np.zeros(len(denominator))
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


# --------------------------------------------------------------------------- recall


def recall(j: Judged, k: int | None, *, mode: str) -> tuple[float, Extra]:
    found = hits(j, k)
    if mode == "single_hit":
        return (1.0 if found else 0.0), {}
    return found / j.n_relevant, {}


def recall_vector(b: Gains, k: int | None, *, mode: str) -> tuple[FloatArray, Extra]:
    if mode == "single_hit":
        return (b.found > 0).astype(float), {}
    return _ratio(b.found, b.n_relevant), {}


# --------------------------------------------------------------------------- precision


def precision(j: Judged, k: int | None, *, denominator: str) -> tuple[float, Extra]:
    size = k if (k is not None and denominator == "k") else _scored(j, k)
    return (hits(j, k) / size if size else 0.0), {"denominator": size}


def precision_vector(b: Gains, k: int | None, *, denominator: str) -> tuple[FloatArray, Extra]:
    import numpy as np

    size = np.full(len(b.top), k) if (k is not None and denominator == "k") else b.top
    return _ratio(b.found, size), {"denominator": size.tolist()}


# --------------------------------------------------------------------------- hit rate


def hit_rate(j: Judged, k: int | None) -> tuple[float, Extra]:
    return (1.0 if hits(j, k) else 0.0), {}


def hit_rate_vector(b: Gains, k: int | None) -> tuple[FloatArray, Extra]:
    return (b.found > 0).astype(float), {}


# --------------------------------------------------------------------------- reciprocal rank


def reciprocal_rank(j: Judged, k: int | None) -> tuple[float, Extra]:
    if hits(j, k):
        return 1.0 / j.ranks[0], {"first_relevant_rank": j.ranks[0]}
    return 0.0, {"first_relevant_rank": None}


def reciprocal_rank_vector(b: Gains, k: int | None) -> tuple[FloatArray, Extra]:
    import numpy as np

    first = b.ranks[:, 0]  # 0 when the query has no hit
    ranks = [rank or None for rank in first.tolist()]
    return _ratio(np.ones(len(first)), first), {"first_relevant_rank": ranks}


# --------------------------------------------------------------------------- average precision


def _ap_denominator(normalize_by: str, k: int | None, n_relevant: int, found: int) -> int:
    """retrieved_relevant: hits; all_relevant: R; relevant: min(k, R) (R without k)."""
    if normalize_by == "retrieved_relevant":
        return found
    if normalize_by == "all_relevant" or k is None:
        return n_relevant
    return min(k, n_relevant)


def average_precision(j: Judged, k: int | None, *, normalize_by: str) -> tuple[float, Extra]:
    total = 0.0
    found = hits(j, k)
    for i in range(found):
        total += (i + 1) / j.ranks[i]
    denominator = _ap_denominator(normalize_by, k, j.n_relevant, found)
    return (total / denominator if denominator else 0.0), {"denominator": denominator}


def average_precision_vector(
    b: Gains, k: int | None, *, normalize_by: str
) -> tuple[FloatArray, Extra]:
    import numpy as np

    # The i-th hit (1-based) at rank r adds i / r.
    found_so_far = np.broadcast_to(np.arange(1, b.ranks.shape[1] + 1), b.ranks.shape)
    terms = np.zeros(b.ranks.shape)
    np.divide(found_so_far, b.ranks, out=terms, where=b.ranks > 0)
    total = _row_sums(terms)
    if normalize_by == "retrieved_relevant":
        denominator = b.found
    elif normalize_by == "all_relevant" or k is None:
        denominator = b.n_relevant
    else:
        denominator = np.minimum(b.n_relevant, k)
    return _ratio(total, denominator), {"denominator": denominator.tolist()}


# --------------------------------------------------------------------------- NDCG


def _dcg(ranks: Iterable[int], gains: Iterable[float]) -> float:
    total = 0.0
    for rank, gain in zip(ranks, gains, strict=True):
        total += gain / math.log2(rank + 1)
    return total


def ndcg(j: Judged, k: int | None) -> tuple[float, Extra]:
    found = hits(j, k)
    dcg = _dcg(j.ranks[:found], j.gains[:found])
    ideal = j.ideal[:k]
    idcg = _dcg(range(1, len(ideal) + 1), ideal)
    return (min(1.0, dcg / idcg) if idcg > 0 else 0.0), {"dcg": dcg, "idcg": idcg}


def ndcg_vector(b: Gains, k: int | None) -> tuple[FloatArray, Extra]:
    import numpy as np

    width = max(1, int(b.ranks.max()))
    if b.ideal is None:  # every gain is 1.0: IDCG is a prefix sum of 1 / discount
        longest = int(b.n_relevant.max()) if k is None else min(k, int(b.n_relevant.max()))
        width = max(width, longest)
    else:
        width = max(width, b.ideal.shape[1])
    discount = np.array(discounts(width))
    dcg = _row_sums(b.gains / discount[b.ranks - 1])  # padding: 0.0 / discount[-1]
    if b.ideal is None:
        prefix = np.concatenate(([0.0], np.cumsum(1.0 / discount)))
        cut = b.n_relevant if k is None else b.n_relevant.clip(max=k)
        idcg = prefix[cut]
    else:
        idcg = _row_sums(b.ideal / discount[: b.ideal.shape[1]])
    scores = np.minimum(1.0, _ratio(dcg, idcg))
    return scores, {"dcg": dcg.tolist(), "idcg": idcg.tolist()}
