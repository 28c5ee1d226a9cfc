"""Vectorised (numpy) pair weights and the assignment of large remainders, for JSON match.

Imported only when a list match is large enough to need it, so numpy loads on first use.

* :func:`dense_weights` runs the one weight formula, :func:`openevals.json._pairing.weights`,
  on blocks of rows held in numpy matrices (:class:`KeyColumn` is its view of one key).
* :func:`lexicographic_assignment` solves very large remainders without computing text
  similarity for every pair: first an optimal assignment on the two integer criteria (equal
  values, then differing keys), then, only where that optimum is not unique, the third
  criterion (text similarity) decides among the optimal pairings. Every optimal pairing of the
  integer criteria uses only "tight" pairs (reduced cost 0 under the final dual potentials) and
  covers every column whose potential is negative, so the refinement runs on the connected
  components of the tight pairs alone.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, Final

import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist

from openevals._matching import (
    max_weight_assignment,
    max_weight_assignment_dense,
    min_cost_rows_to_cols_dense,
)
from openevals._repr import show
from openevals._structure import Unfreezable, freeze
from openevals.json._pairing import (
    SCALARS,
    PairKey,
    Profile,
    equal_values,
    weights,
)

_CHUNK_CELLS: Final = 1 << 20  # cells per block of rows
_MAX_TIGHT: Final = 2_000_000  # more tight pairs than this: solve on the full weights instead


def _value_ids(values: Sequence[Any], names: Sequence[str]) -> np.ndarray | None:
    """Integers equal exactly when the values are ``==``; ``None`` if some value has no
    hashable form (the key is then compared pair by pair)."""
    ids: dict[Any, int] = {}
    out = np.empty(len(values), dtype=np.int64 if len(values) >= 2**30 else np.int32)
    unique = -1
    for index, value in enumerate(values):
        if type(value) is float and value != value:
            out[index] = unique  # NaN is not == itself
            unique -= 1
            continue
        try:
            frozen = value if type(value) in SCALARS else freeze(value, names[index])
        except Unfreezable:
            return None
        out[index] = ids.setdefault(frozen, len(ids))
    return out


class KeyColumn:
    """One key across the remaining records: presence, equality ids and similarity texts."""

    def __init__(
        self, key: Hashable, outs: Sequence[Profile], refs: Sequence[Profile], rubric: Any
    ) -> None:
        self.key = key
        self.graded = graded = key in rubric
        self.outs, self.refs = outs, refs
        self.out_present = np.array([key in p.lookup for p in outs], dtype=bool)
        self.ref_present = np.array([key in p.lookup for p in refs], dtype=bool)
        self.everywhere = bool(self.out_present.all() and self.ref_present.all())
        self.out_values = [p.lookup.get(key) for p in outs]
        self.ref_values = [p.lookup.get(key) for p in refs]
        self.out_ids: np.ndarray | None = None
        self.ref_ids: np.ndarray | None = None
        self._texts: tuple[list[str], np.ndarray, list[str], np.ndarray] | None = None
        if not graded:
            names = [f"{p.name}[{show(key)}]" for p in (*outs, *refs)]
            ids = _value_ids(self.out_values + self.ref_values, names)
            if ids is not None:
                self.out_ids, self.ref_ids = ids[: len(outs)], ids[len(outs) :]

    def texts(self) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
        """Distinct similarity texts of each side and each record's index into them."""
        if self._texts is None:
            sides: list[Any] = []
            for profiles in (self.outs, self.refs):
                distinct: dict[str, int] = {}
                ids = np.array(
                    [
                        distinct.setdefault(p.texts()[self.key], len(distinct))
                        if self.key in p.lookup
                        else 0
                        for p in profiles
                    ],
                    dtype=np.int64,
                )
                sides += [list(distinct), ids]
            self._texts = (sides[0], sides[1], sides[2], sides[3])
        return self._texts

    def shared(self, block: tuple[int, int]) -> np.ndarray:
        start, stop = block
        both: np.ndarray = self.out_present[start:stop, None] & self.ref_present[None, :]
        return both

    def same(self, block: tuple[int, int], shared: np.ndarray | None) -> np.ndarray:
        """Which pairs of the block of rows have ``==`` values (``shared=None``: all pairs
        have the key)."""
        start, stop = block
        if self.out_ids is not None and self.ref_ids is not None:
            same: np.ndarray = self.out_ids[start:stop, None] == self.ref_ids[None, :]
            return same if shared is None else same & shared
        if shared is None:
            shared = np.ones((stop - start, len(self.refs)), dtype=bool)
        result: np.ndarray = shared.copy()
        for row, col in zip(*shared.nonzero(), strict=True):
            i = start + int(row)
            j = int(col)
            result[row, col] = equal_values(
                self.key,
                self.out_values[i],
                self.ref_values[j],
                (self.outs[i].name, self.refs[j].name),
            )
        return result

    def similarity(self, block: tuple[int, int]) -> np.ndarray:
        start, stop = block
        out_texts, out_text_ids, ref_texts, ref_text_ids = self.texts()
        rows = out_text_ids[start:stop]
        wanted = np.unique(rows[self.out_present[start:stop]])
        table = cdist(
            [out_texts[t] for t in wanted],
            ref_texts,
            scorer=Indel.normalized_similarity,
            dtype=np.float64,
        )
        local = np.searchsorted(wanted, rows).clip(0, max(len(wanted) - 1, 0))
        result: np.ndarray = table[local[:, None], ref_text_ids[None, :]]
        return result

    @staticmethod
    def any(mask: np.ndarray) -> bool:
        return bool(mask.any())

    @staticmethod
    def where(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        return np.where(mask, values, 0.0)


def _row_blocks(n: int, m: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of blocks of rows holding about ``_CHUNK_CELLS`` cells each."""
    step = max(1, _CHUNK_CELLS // max(m, 1))
    for start in range(0, n, step):
        yield start, min(n, start + step)


def dense_weights(
    outs: Sequence[Profile],
    refs: Sequence[Profile],
    keys: Sequence[Hashable],
    rubric: Mapping[str, str],
    bound: int,
) -> np.ndarray:
    """:func:`~openevals.json._pairing.weights` of every pair, a block of rows at a time."""
    n, m = len(outs), len(refs)
    columns = [KeyColumn(k, outs, refs, rubric) for k in keys]
    out_sizes = np.array([len(p.items) for p in outs], dtype=np.int64)
    ref_sizes = np.array([len(p.lookup) for p in refs], dtype=np.int64)
    result = np.empty((n, m), dtype=np.float64)
    for start, stop in _row_blocks(n, m):
        sizes = out_sizes[start:stop, None], ref_sizes[None, :]
        result[start:stop] = weights(columns, (start, stop), *sizes, bound)
    return result


def integer_costs(
    columns: Sequence[KeyColumn], outs: Sequence[Profile], refs: Sequence[Profile], bound: int
) -> np.ndarray:
    """``differ - equal * bound`` for every pair: the first two criteria, as exact integers.

    Per key, ``-2 * shared + unequal`` (the key's part of ``differ``) is ``-shared - equal``
    for compared keys and ``-2 * shared`` for rubric keys, so only two counts are kept:
    ``cost = size_o + size_r - overlap - (1 + bound) * equal``.
    """
    n, m = len(outs), len(refs)
    out_sizes = np.array([len(p.items) for p in outs], dtype=np.float64)
    ref_sizes = np.array([len(p.lookup) for p in refs], dtype=np.float64)
    small = max([len(p.items) for p in (*outs, *refs)], default=0) < 16_000
    count_type = np.int16 if small else np.int64
    equal_unit = float(1 + bound)
    costs = np.empty((n, m), dtype=np.float64)
    for start, stop in _row_blocks(n, m):
        equal_count = np.zeros((stop - start, m), dtype=count_type)
        overlap: np.ndarray | None = None
        overlap_everywhere = 0
        for column in columns:
            weight = 2 if column.graded else 1
            shared = None
            if column.everywhere:
                overlap_everywhere += weight
            else:
                shared = column.shared((start, stop))
                if overlap is None:
                    overlap = np.zeros_like(equal_count)
                overlap += shared
                if weight == 2:
                    overlap += shared
            if not column.graded:
                equal_count += column.same((start, stop), shared)
        block = costs[start:stop]
        np.add(out_sizes[start:stop, None], ref_sizes[None, :] - overlap_everywhere, out=block)
        if overlap is not None:
            block -= overlap
        block -= equal_count * equal_unit
    return costs


def _components(n: int, m: int, rows: np.ndarray, cols: np.ndarray) -> dict[int, list[int]]:
    """Connected components of the tight pairs (union-find); node ``n + j`` is column ``j``."""
    parent = list(range(n + m))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        a, b = root(i), root(n + j)
        if a != b:
            parent[a] = b
    groups: dict[int, list[int]] = {}
    for node in range(n + m):
        groups.setdefault(root(node), []).append(node)
    return groups


def lexicographic_assignment(
    outs: Sequence[Profile],
    refs: Sequence[Profile],
    keys: Sequence[Hashable],
    rubric: Mapping[str, str],
    bound: int,
) -> list[tuple[int, int]]:
    """An optimal assignment under the three criteria, for remainders too large to weigh every
    pair with text similarity. Returns ``(row, col)`` pairs sorted by row."""
    if len(outs) > len(refs):  # the weights are symmetric: solve the transposed problem
        flipped = lexicographic_assignment(refs, outs, keys, rubric, bound)
        return sorted((c, r) for r, c in flipped)
    n, m = len(outs), len(refs)
    columns = [KeyColumn(k, outs, refs, rubric) for k in keys]
    costs = integer_costs(columns, outs, refs, bound)
    col_of_row, u, v = min_cost_rows_to_cols_dense(costs)
    tight_rows: list[np.ndarray] = []
    tight_cols: list[np.ndarray] = []
    count = 0
    for start, stop in _row_blocks(n, m):
        block = costs[start:stop] - u[start + 1 : stop + 1, None] - v[None, 1:]
        r, c = np.nonzero(block == 0)
        tight_rows.append(r + start)
        tight_cols.append(c)
        count += len(r)
        if count > _MAX_TIGHT:  # the integer criteria barely decide: weigh every pair
            return max_weight_assignment_dense(dense_weights(outs, refs, keys, rubric, bound))
    rows, cols = np.concatenate(tight_rows), np.concatenate(tight_cols)
    must_cover = v[1:] < 0
    tight_of_row: dict[int, list[int]] = {}
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        tight_of_row.setdefault(i, []).append(j)
    chosen = dict(enumerate(col_of_row))
    views = [PairKey(k, outs, refs, rubric) for k in keys]
    for nodes in _components(n, m, rows, cols).values():
        comp_rows = [x for x in nodes if x < n]
        if not comp_rows or all(len(tight_of_row[i]) == 1 for i in comp_rows):
            continue  # no choice: the integer optimum is the only one here
        comp_cols = [x - n for x in nodes if x >= n]
        position = {j: p for p, j in enumerate(comp_cols)}
        bonus = float(bound)  # covering a must-cover column beats any similarity gain
        penalty = 2.0 * (bonus + bound) * (len(comp_cols) + 1)
        table = [[-penalty] * len(comp_cols) for _ in comp_rows]
        for p, i in enumerate(comp_rows):
            for j in tight_of_row[i]:
                similarity = weights(views, (i, j), 0, 0, 0)  # bound 0: similarity alone
                table[p][position[j]] = similarity + (bonus if must_cover[j] else 0.0)
        for p, q in max_weight_assignment(table):
            chosen[comp_rows[p]] = comp_cols[q]
    return sorted(chosen.items())
