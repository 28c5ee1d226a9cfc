"""Optimal matching primitives shared by the structural matchers.

Two classic assignment problems show up whenever two collections must be aligned (trajectory
tool calls, list elements of JSON outputs, claims):

* :func:`maximum_bipartite_matching` — the largest set of pairs when an item may only pair with
  certain partners (Hopcroft–Karp, ``O(E * sqrt(V))``).
* :func:`max_weight_assignment` — the pairing of ``min(rows, cols)`` items with the largest total
  weight (shortest augmenting paths with dual potentials, the Jonker–Volgenant form of the
  Hungarian method, ``O(n^2 * m)``).

Both are pure Python, iterative (no recursion limits) and deterministic: the same input always
produces the same answer. :func:`max_weight_assignment_dense` is the numpy form of
:func:`max_weight_assignment` for large matrices: the same algorithm step for step (same
floating-point operations in the same order), so it returns the very same pairs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

from openevals._repr import show

if TYPE_CHECKING:
    import numpy as np

_FREE = -1


def _check_sizes(n_left: int, n_right: int, adjacency: Sequence[Sequence[int]]) -> None:
    for name, value in (("n_left", n_left), ("n_right", n_right)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"`{name}` must be a non-negative int; got {show(value)}")
    if len(adjacency) != n_left:
        raise ValueError(
            f"`adjacency` must have one entry per left item (n_left={n_left}); "
            f"got {len(adjacency)} entries"
        )


def _bad_index(i: int, j: object, n_right: int) -> Exception:
    if isinstance(j, bool) or not isinstance(j, int):
        return TypeError(f"`adjacency[{i}]` must contain int right indices; got {show(j)}")
    return ValueError(
        f"`adjacency[{i}]` holds right index {show(j)}, outside [0, n_right={n_right})"
    )


def _check_row(i: int, row: Sequence[int], n_right: int) -> None:
    """Validate one adjacency row with two C-speed passes."""
    if not row:
        return
    try:
        low, high = min(row), max(row)
    except TypeError:
        bad = next(j for j in row if isinstance(j, bool) or not isinstance(j, int))
        raise _bad_index(i, bad, n_right) from None
    for j in (low, high):
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n_right:
            raise _bad_index(i, j, n_right)


def maximum_bipartite_matching(
    n_left: int, n_right: int, adjacency: Sequence[Sequence[int]]
) -> list[int | None]:
    """Return a maximum matching of a bipartite graph (Hopcroft–Karp).

    Args:
        n_left: number of left items (``0..n_left-1``).
        n_right: number of right items (``0..n_right-1``).
        adjacency: ``adjacency[i]`` lists the right indices left item ``i`` may pair with
            (duplicates are harmless).

    Returns:
        For every left index, the right index it is matched to, or ``None`` when it stays
        unmatched. The number of non-``None`` entries is the size of a maximum matching.

    Raises:
        ValueError: negative sizes, ``len(adjacency) != n_left``, or a right index outside
            ``[0, n_right)``.
        TypeError: a right index that is not an int.

    Entries are validated as the algorithm reads them (a whole row the first time it is
    searched), which keeps dense inputs fast: a left matched by the greedy start after reading
    ``k`` entries only has those ``k`` entries checked. Entries that are never read cannot
    influence the result.

    Speed: a greedy start (fewest-options-first, rotating scan offsets) matches most dense
    graphs almost completely in linear time; Hopcroft–Karp phases then finish the job in
    ``O(E * sqrt(V))``. A complete 1000 x 1000 graph takes about a millisecond.
    """
    _check_sizes(n_left, n_right, adjacency)
    match_l = [_FREE] * n_left
    match_r = [_FREE] * n_right
    checked = [False] * n_left

    # Greedy start: lefts with the fewest options first (this alone solves staircase-shaped
    # graphs). A row continues scanning just after the position where the previous row of the
    # same length found its partner (rows of equal length are often the same candidate list),
    # otherwise from a rotating offset, so lefts sharing long rows do not all re-probe the same
    # taken rights.
    order = sorted(range(n_left), key=lambda i: len(adjacency[i]))
    resume: dict[int, int] = {}
    for rank, u in enumerate(order):
        row = adjacency[u]
        size = len(row)
        if not size:
            continue
        start = resume.get(size, rank) % size
        for k in range(start, start + size):
            j = row[k - size] if k >= size else row[k]
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n_right:
                raise _bad_index(u, j, n_right)
            if match_r[j] == _FREE:
                match_r[j] = u
                match_l[u] = j
                resume[size] = k + 1
                break
        else:
            checked[u] = True  # every entry of the row was read and validated

    while True:
        free = [u for u in range(n_left) if match_l[u] == _FREE]
        if not free:
            break
        # BFS: layer the left vertices by alternating-path distance from the free ones. The
        # first free right reached fixes the shortest augmenting length; every left of the
        # current layer is already labelled at that point, so the search stops right there.
        dist = [_FREE] * n_left
        for u in free:
            dist[u] = 0
        queue = list(free)
        found = False
        head = 0
        while head < len(queue) and not found:
            u = queue[head]
            head += 1
            next_layer = dist[u] + 1
            row = adjacency[u]
            if not checked[u]:
                _check_row(u, row, n_right)
                checked[u] = True
            for j in row:
                w = match_r[j]
                if w == _FREE:
                    found = True
                    break
                if dist[w] == _FREE:
                    dist[w] = next_layer
                    queue.append(w)
        if not found:
            break

        # DFS (explicit stack) along the layers; every success augments the matching by one.
        pointer = [0] * n_left
        dead = -2
        for s in free:
            stack = [s]
            while stack:
                u = stack[-1]
                row = adjacency[u]
                if not checked[u]:
                    _check_row(u, row, n_right)
                    checked[u] = True
                k = pointer[u]
                next_layer = dist[u] + 1
                pushed = False
                free_right = _FREE
                while k < len(row):
                    j = row[k]
                    k += 1
                    w = match_r[j]
                    if w == _FREE:
                        free_right = j
                        break
                    if dist[w] == next_layer:
                        stack.append(w)
                        pushed = True
                        break
                pointer[u] = k
                if free_right != _FREE:
                    j = free_right
                    for v in reversed(stack):
                        previous = match_l[v]
                        match_l[v] = j
                        match_r[j] = v
                        dist[v] = dead  # vertex-disjoint paths within one phase
                        j = previous
                    break
                if not pushed:
                    dist[u] = dead
                    stack.pop()

    return [None if j == _FREE else j for j in match_l]


def _check_weights(weights: Sequence[Sequence[float]]) -> int:
    n_cols = len(weights[0]) if len(weights) else 0
    for i, row in enumerate(weights):
        if len(row) != n_cols:
            raise ValueError(
                f"`weights` must be rectangular; row 0 has {n_cols} entries but row {i} has "
                f"{len(row)}"
            )
        for j, value in enumerate(row):
            kind = type(value)  # exact float / int skip the slow ABC check
            if (kind is not float and kind is not int) and (
                kind is bool or not isinstance(value, numbers.Real)
            ):
                raise TypeError(f"`weights[{i}][{j}]` must be a number; got {show(value)}")
            if not math.isfinite(value):
                raise ValueError(f"`weights[{i}][{j}]` must be finite; got {show(value)}")
    return n_cols


def _min_cost_rows_to_cols(cost: list[list[float]], n: int, m: int) -> list[int]:
    """Min-cost assignment of every row to a distinct column (requires ``n <= m``).

    ``cost`` rows are 1-based (``cost[i][0]`` is padding). Rows are inserted one at a time; each
    insertion runs a Dijkstra-like search for the shortest augmenting path over reduced costs
    ``cost[i][j] - u[i] - v[j]`` and then updates the potentials. Returns ``col_of_row``
    (0-based columns).
    """
    inf = math.inf
    # Feasible start: each row's potential is its cheapest cost (all reduced costs >= 0), and
    # rows whose cheapest column is still free take it at once (a tight edge). Only the rows
    # left over need an augmenting search.
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    row_of_col = [0] * (m + 1)  # 0 = unassigned; column 0 is the search's virtual source
    way = [0] * (m + 1)
    pending: list[int] = []
    for i in range(1, n + 1):
        cost_row = cost[i]
        low = min(cost_row[1:])
        u[i] = low
        for j in range(1, m + 1):
            if cost_row[j] == low and not row_of_col[j]:
                row_of_col[j] = i
                break
        else:
            pending.append(i)
    for i in pending:
        row_of_col[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        unused = list(range(1, m + 1))
        used = [0]
        while True:
            i0 = row_of_col[j0]
            cost_row = cost[i0]
            u_i0 = u[i0]
            delta = inf
            j1 = 0
            for j in unused:
                cur = cost_row[j] - u_i0 - v[j]
                best = minv[j]
                if cur < best:
                    minv[j] = best = cur
                    way[j] = j0
                if best < delta:
                    delta = best
                    j1 = j
            for j in used:
                u[row_of_col[j]] += delta
                v[j] -= delta
            for j in unused:
                minv[j] -= delta
            unused.remove(j1)
            used.append(j1)
            j0 = j1
            if row_of_col[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            row_of_col[j0] = row_of_col[j1]
            j0 = j1
    col_of_row = [0] * n
    for j in range(1, m + 1):
        if row_of_col[j]:
            col_of_row[row_of_col[j] - 1] = j - 1
    return col_of_row


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Pair ``min(n_rows, n_cols)`` rows and columns so that the total weight is maximal.

    Args:
        weights: a rectangular matrix, ``weights[r][c]`` = gain of pairing row ``r`` with column
            ``c``. Any finite numbers (negative included) are accepted; every row (or every
            column, whichever side is smaller) is always paired.

    Returns:
        The ``(row, col)`` pairs of an optimal assignment, sorted by row. Ties between equally
        good assignments are broken deterministically: the result is a pure function of the
        matrix (rows are inserted in index order, and the scans prefer lower column indices).

    Raises:
        ValueError: a ragged matrix or a non-finite weight.
        TypeError: a weight that is not a number.
    """
    n_rows = len(weights)
    n_cols = _check_weights(weights)
    if n_rows == 0 or n_cols == 0:
        return []
    if n_rows <= n_cols:
        cost = [[0.0]] + [[0.0, *(-float(x) for x in row)] for row in weights]
        col_of_row = _min_cost_rows_to_cols(cost, n_rows, n_cols)
        return list(enumerate(col_of_row))
    transposed = [[0.0]] + [
        [0.0, *(-float(weights[r][c]) for r in range(n_rows))] for c in range(n_cols)
    ]
    row_of_col = _min_cost_rows_to_cols(transposed, n_cols, n_rows)
    return sorted((r, c) for c, r in enumerate(row_of_col))


def min_cost_rows_to_cols_dense(cost: np.ndarray) -> tuple[list[int], np.ndarray, np.ndarray]:
    """:func:`_min_cost_rows_to_cols` on a 0-based ``(n, m)`` array (``n <= m``), vectorised
    over columns: each scan of the pure-Python version becomes one array operation, with the
    same arithmetic in the same order and the same lowest-index tie-breaking.

    Returns ``col_of_row`` and the final dual potentials ``u`` (rows) and ``v`` (columns),
    1-based like the algorithm's arrays (index 0 is padding): ``cost[i][j] - u[i+1] - v[j+1]``
    is >= 0 everywhere and 0 on the chosen pairs; ``v`` is 0 on unchosen columns.
    """
    import numpy as np

    n, m = cost.shape
    inf = math.inf
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    row_of_col = np.zeros(m + 1, dtype=np.int64)  # 0 = unassigned; column 0 = virtual source
    way = np.zeros(m + 1, dtype=np.int64)
    pending: list[int] = []
    lows = cost.min(axis=1)
    for i in range(1, n + 1):
        low = lows[i - 1]
        u[i] = low
        tight = np.flatnonzero(cost[i - 1] == low) + 1
        free = tight[row_of_col[tight] == 0]
        if free.size:
            row_of_col[free[0]] = i
        else:
            pending.append(i)
    minv = np.empty(m + 1)
    used = np.empty(m + 1, dtype=bool)
    for i in pending:
        row_of_col[0] = i
        j0 = 0
        minv.fill(inf)
        used.fill(False)
        used[0] = True
        used_cols = [0]
        while True:
            i0 = int(row_of_col[j0])
            current = cost[i0 - 1] - u[i0] - v[1:]
            better = (current < minv[1:]) & ~used[1:]
            minv[1:][better] = current[better]
            way[1:][better] = j0
            candidates = np.where(used[1:], inf, minv[1:])
            j1 = int(candidates.argmin()) + 1
            delta = candidates[j1 - 1]
            columns = np.array(used_cols)
            u[row_of_col[columns]] += delta
            v[columns] -= delta
            minv[1:][~used[1:]] -= delta
            used[j1] = True
            used_cols.append(j1)
            j0 = j1
            if row_of_col[j0] == 0:
                break
        while j0:
            j1 = int(way[j0])
            row_of_col[j0] = row_of_col[j1]
            j0 = j1
    col_of_row = [0] * n
    for j in np.flatnonzero(row_of_col[1:]):
        col_of_row[int(row_of_col[j + 1]) - 1] = int(j)
    return col_of_row, u, v


def max_weight_assignment_dense(weights: np.ndarray) -> list[tuple[int, int]]:
    """:func:`max_weight_assignment` for a 2-D numpy array of finite weights (same pairs).

    Raises:
        ValueError: not a 2-D array, or a non-finite weight.
    """
    import numpy as np

    matrix = np.asarray(weights, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"`weights` must be a 2-D array; got {matrix.ndim} dimension(s)")
    if not np.isfinite(matrix).all():
        r, c = np.argwhere(~np.isfinite(matrix))[0]
        raise ValueError(f"`weights[{r}][{c}]` must be finite; got {show(matrix[r, c])}")
    n_rows, n_cols = matrix.shape
    if n_rows == 0 or n_cols == 0:
        return []
    if n_rows <= n_cols:
        return list(enumerate(min_cost_rows_to_cols_dense(-matrix)[0]))
    row_of_col = min_cost_rows_to_cols_dense(np.ascontiguousarray(-matrix.T))[0]
    return sorted((r, c) for c, r in enumerate(row_of_col))
