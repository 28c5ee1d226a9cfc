from __future__ import annotations

import copy
import itertools
import math
import random
import time
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals._matching import max_weight_assignment, maximum_bipartite_matching

# --------------------------------------------------------------------------- brute force


def brute_force_matching_size(n_left: int, n_right: int, adjacency: list[list[int]]) -> int:
    rights = list(range(n_right))
    # Try every injective partial map left -> right (sizes here are tiny).
    for size in range(min(n_left, n_right), 0, -1):
        for lefts in itertools.combinations(range(n_left), size):
            for chosen in itertools.permutations(rights, size):
                if all(j in adjacency[i] for i, j in zip(lefts, chosen, strict=True)):
                    return size
    return 0


def brute_force_assignment_weight(weights: list[list[float]]) -> float:
    n_rows = len(weights)
    n_cols = len(weights[0]) if weights else 0
    if n_rows == 0 or n_cols == 0:
        return 0.0
    if n_rows <= n_cols:
        return max(
            sum(weights[r][c] for r, c in enumerate(cols))
            for cols in itertools.permutations(range(n_cols), n_rows)
        )
    return max(
        sum(weights[r][c] for c, r in enumerate(rows))
        for rows in itertools.permutations(range(n_rows), n_cols)
    )


def assert_valid_matching(
    n_right: int, adjacency: list[list[int]], result: list[int | None]
) -> None:
    assert len(result) == len(adjacency)
    used = [j for j in result if j is not None]
    assert len(used) == len(set(used)), "a right item is matched twice"
    for i, j in enumerate(result):
        if j is not None:
            assert 0 <= j < n_right
            assert j in adjacency[i], f"left {i} matched to non-adjacent right {j}"


@st.composite
def bipartite_graphs(draw: st.DrawFn) -> tuple[int, int, list[list[int]]]:
    n_left = draw(st.integers(0, 6))
    n_right = draw(st.integers(0, 6))
    if n_right == 0:
        return n_left, n_right, [[] for _ in range(n_left)]
    adjacency = [
        draw(st.lists(st.integers(0, n_right - 1), max_size=2 * n_right)) for _ in range(n_left)
    ]
    return n_left, n_right, adjacency


@st.composite
def weight_matrices(draw: st.DrawFn) -> list[list[float]]:
    n_rows = draw(st.integers(0, 5))
    n_cols = draw(st.integers(0, 5))
    value = st.one_of(
        st.integers(-5, 5).map(float),
        st.floats(-100, 100, allow_nan=False, allow_infinity=False),
        st.just(0.0),
    )
    return [[draw(value) for _ in range(n_cols)] for _ in range(n_rows)]


# --------------------------------------------------------------------------- bipartite matching


@settings(max_examples=400, deadline=None)
@given(bipartite_graphs())
def test_matching_is_maximum_against_brute_force(
    graph: tuple[int, int, list[list[int]]],
) -> None:
    n_left, n_right, adjacency = graph
    result = maximum_bipartite_matching(n_left, n_right, adjacency)
    assert_valid_matching(n_right, adjacency, result)
    size = sum(j is not None for j in result)
    assert size == brute_force_matching_size(n_left, n_right, adjacency)


@settings(max_examples=100, deadline=None)
@given(bipartite_graphs())
def test_matching_is_deterministic_and_does_not_mutate(
    graph: tuple[int, int, list[list[int]]],
) -> None:
    n_left, n_right, adjacency = graph
    snapshot = copy.deepcopy(adjacency)
    first = maximum_bipartite_matching(n_left, n_right, adjacency)
    assert adjacency == snapshot
    assert maximum_bipartite_matching(n_left, n_right, adjacency) == first


def test_matching_needs_augmenting_paths() -> None:
    # Greedy first-fit would pair left 0 with right 0 and strand left 1.
    adjacency = [[0, 1], [0]]
    assert maximum_bipartite_matching(2, 2, adjacency) == [1, 0]
    # A longer chain: only one perfect matching exists.
    adjacency = [[0, 1], [1, 2], [2, 3], [3]]
    assert maximum_bipartite_matching(4, 4, adjacency) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("n_left", "n_right", "adjacency", "expected"),
    [
        (0, 0, [], []),
        (0, 3, [], []),
        (2, 0, [[], []], [None, None]),
        (3, 3, [[], [], []], [None, None, None]),
        (3, 1, [[0], [0], [0]], None),  # exactly one of them is matched
        (1, 3, [[2, 1, 0]], None),
        (2, 2, [[1, 1, 1], [1]], None),  # duplicates are harmless
    ],
)
def test_matching_edge_cases(
    n_left: int,
    n_right: int,
    adjacency: list[list[int]],
    expected: list[int | None] | None,
) -> None:
    result = maximum_bipartite_matching(n_left, n_right, adjacency)
    assert_valid_matching(n_right, adjacency, result)
    if expected is not None:
        assert result == expected
    else:
        assert sum(j is not None for j in result) == 1


def test_matching_accepts_tuples_and_ranges() -> None:
    result = maximum_bipartite_matching(3, 3, (range(3), (0,), (0, 1)))
    assert sorted(result) == [0, 1, 2]  # type: ignore[type-var]
    assert result[1] == 0


def _random_half(n: int) -> list[list[int]]:
    rng = random.Random(7)
    rows = [[j for j in range(n) if rng.random() < 0.5] for _ in range(n)]
    for row in rows:
        rng.shuffle(row)
    return rows


DENSE_FAMILIES: dict[str, Callable[[int], list[list[int]]]] = {
    "complete": lambda n: [list(range(n)) for _ in range(n)],
    "random_half": _random_half,
    "staircase_up": lambda n: [list(range(i, n)) for i in range(n)],
    "staircase_down": lambda n: [list(range(i + 1)) for i in range(n)],
    "staircase_reversed": lambda n: [list(range(n - 1, i - 1, -1)) for i in range(n)],
    "two_blocks": lambda n: [
        list(range(n // 2, n)) if i < n // 2 else list(range(n)) for i in range(n)
    ],
}


@pytest.mark.parametrize("family", list(DENSE_FAMILIES))
def test_dense_1000_by_1000_is_fast(family: str) -> None:
    n = 1000
    adjacency = DENSE_FAMILIES[family](n)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        result = maximum_bipartite_matching(n, n, adjacency)
        best = min(best, time.perf_counter() - start)
    assert sorted(j for j in result if j is not None) == list(range(n))
    # Typically 0.5-3 ms; the bound only guards against quadratic blow-ups on a loaded machine.
    assert best < 0.25, f"{family}: {best * 1000:.1f} ms"


def test_dense_graph_without_perfect_matching() -> None:
    # 600 lefts compete for the same 400 rights (Hall's condition fails), 400 more are free.
    n = 1000
    adjacency = [list(range(400)) if i < 600 else list(range(400, 1000)) for i in range(n)]
    result = maximum_bipartite_matching(n, n, adjacency)
    assert_valid_matching(n, adjacency, result)
    assert sum(j is not None for j in result) == 400 + 400


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((-1, 2, []), ValueError, "n_left"),
        ((1, -2, [[]]), ValueError, "n_right"),
        ((True, 2, [[]]), ValueError, "n_left"),
        ((2, 2, [[0]]), ValueError, "one entry per left item"),
        ((1, 2, [[2]]), ValueError, r"adjacency\[0\].*right index 2"),
        ((1, 2, [[-1]]), ValueError, r"adjacency\[0\].*right index -1"),
        ((1, 2, [["0"]]), TypeError, r"adjacency\[0\].*int"),
        ((1, 2, [[0.0]]), TypeError, r"adjacency\[0\].*int"),
        # Out of range entry found by the augmenting search (left 0 takes right 0 greedily).
        ((2, 1, [[0], [0, 5]]), ValueError, r"adjacency\[1\].*right index 5"),
        ((2, 1, [[0], [0, "x"]]), TypeError, r"adjacency\[1\]"),
    ],
)
def test_matching_rejects_bad_input(args: tuple[object, ...], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        maximum_bipartite_matching(*args)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- assignment


@settings(max_examples=400, deadline=None)
@given(weight_matrices())
def test_assignment_is_optimal_against_brute_force(weights: list[list[float]]) -> None:
    snapshot = copy.deepcopy(weights)
    pairs = max_weight_assignment(weights)
    assert weights == snapshot
    n_rows = len(weights)
    n_cols = len(weights[0]) if weights else 0
    assert len(pairs) == min(n_rows, n_cols)
    rows = [r for r, _ in pairs]
    cols = [c for _, c in pairs]
    assert rows == sorted(rows)
    assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)
    assert all(0 <= r < n_rows and 0 <= c < n_cols for r, c in pairs)
    total = sum(weights[r][c] for r, c in pairs)
    assert total == pytest.approx(brute_force_assignment_weight(weights), abs=1e-7)
    assert max_weight_assignment(weights) == pairs  # deterministic


def test_assignment_prefers_global_optimum_over_greedy() -> None:
    # Greedy (row 0 takes its best, 10) would leave row 1 with 0: total 10 instead of 17.
    weights = [[10.0, 9.0], [8.0, 0.0]]
    assert max_weight_assignment(weights) == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("weights", "expected_len"),
    [
        ([], 0),
        ([[], [], []], 0),
        ([[0.0] * 4 for _ in range(4)], 4),
        ([[0, 0, 0]], 1),
        ([[0], [0], [0]], 1),
        ([[-1.0, -5.0], [-2.0, -1.0], [-9.0, -9.0]], 2),
    ],
)
def test_assignment_edge_cases(weights: list[list[float]], expected_len: int) -> None:
    pairs = max_weight_assignment(weights)
    assert len(pairs) == expected_len
    if weights and weights[0]:
        total = sum(weights[r][c] for r, c in pairs)
        assert total == brute_force_assignment_weight(weights)


def test_assignment_rectangular_both_ways() -> None:
    wide = [[1.0, 5.0, 3.0], [4.0, 6.0, 1.0]]
    assert max_weight_assignment(wide) == [(0, 1), (1, 0)]
    tall = [list(col) for col in zip(*wide, strict=True)]
    assert max_weight_assignment(tall) == [(0, 1), (1, 0)]


def test_assignment_negative_weights_still_pair_everything() -> None:
    pairs = max_weight_assignment([[-3.0, -1.0], [-2.0, -10.0]])
    assert pairs == [(0, 1), (1, 0)]


def test_assignment_accepts_other_real_numbers() -> None:
    pairs = max_weight_assignment([[Fraction(1, 3), 1], [2, Fraction(1, 2)]])
    assert pairs == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ([[1.0, 2.0], [3.0]], ValueError, "rectangular"),
        ([[1.0, math.nan]], ValueError, r"weights\[0\]\[1\].*finite"),
        ([[math.inf]], ValueError, "finite"),
        ([[1.0], ["2"]], TypeError, r"weights\[1\]\[0\].*number"),
        ([[True]], TypeError, "number"),
    ],
)
def test_assignment_rejects_bad_input(weights: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        max_weight_assignment(weights)  # type: ignore[arg-type]


def test_assignment_200_by_200_is_reasonably_fast() -> None:
    rng = random.Random(11)
    weights = [[float(rng.randint(0, 10)) for _ in range(200)] for _ in range(200)]
    start = time.perf_counter()
    pairs = max_weight_assignment(weights)
    elapsed = time.perf_counter() - start
    assert len(pairs) == 200
    assert elapsed < 3.0, f"{elapsed:.2f} s"


# --------------------------------------------------------------------------- numpy form


@settings(max_examples=150)
@given(
    n=st.integers(0, 7),
    m=st.integers(0, 7),
    values=st.lists(st.integers(-3, 3) | st.floats(-1e6, 1e6), min_size=49, max_size=49),
)
def test_dense_form_returns_the_same_pairs(n: int, m: int, values: list[float]) -> None:
    import numpy as np

    from openevals._matching import max_weight_assignment_dense

    weights = [[float(values[i * 7 + j]) for j in range(m)] for i in range(n)]
    expected = max_weight_assignment(weights)  # small integers: many ties, same tie-breaks
    assert max_weight_assignment_dense(np.array(weights).reshape(n, m)) == expected


@settings(max_examples=80)
@given(
    n=st.integers(1, 6),
    extra=st.integers(0, 3),
    values=st.lists(st.integers(0, 4), min_size=54, max_size=54),
)
def test_dense_duals_certify_optimality(n: int, extra: int, values: list[int]) -> None:
    import numpy as np

    from openevals._matching import min_cost_rows_to_cols_dense

    m = n + extra
    cost = np.array(values[: n * m], dtype=float).reshape(n, m)
    col_of_row, u, v = min_cost_rows_to_cols_dense(cost)
    reduced = cost - u[1:, None] - v[None, 1:]
    assert (reduced >= 0).all()
    assert all(reduced[i, j] == 0 for i, j in enumerate(col_of_row))
    unused = set(range(m)) - set(col_of_row)
    assert all(v[j + 1] == 0 for j in unused) and (v <= 0).all()
    best = min(
        sum(cost[i, j] for i, j in enumerate(cols)) for cols in itertools.permutations(range(m), n)
    )
    assert sum(cost[i, j] for i, j in enumerate(col_of_row)) == best


def test_dense_form_validates_its_input() -> None:
    import numpy as np

    from openevals._matching import max_weight_assignment_dense

    with pytest.raises(ValueError, match="2-D"):
        max_weight_assignment_dense(np.zeros(3))
    with pytest.raises(ValueError, match=r"`weights\[1\]\[0\]` must be finite"):
        max_weight_assignment_dense(np.array([[1.0, 2.0], [math.inf, 0.0]]))
    assert max_weight_assignment_dense(np.zeros((0, 4))) == []
