"""The two assignment solvers behind step matching (for :mod:`openevals.rag.steps`).

* :func:`latest_class_matching` - steps whose comparison is an equality. Reference steps that
  expect the same thing form a *class* with a capacity (how many of them there are); an executed
  step may fit a few classes. The result is a maximum matching and, among maximum matchings, the
  one that uses the latest executed steps: executed steps are offered from the last to the first
  and each is kept when an augmenting path makes room for it (the greedy algorithm of the
  transversal matroid, exact for this objective). Near-linear in practice: a level of 1,000 x
  1,000 identical steps is a few milliseconds.
* :func:`max_weight_pairs` - steps scored with partial credit (recall of retrieval steps): an
  exact maximum-weight assignment (the package's vectorised solver,
  :func:`openevals._matching.max_weight_assignment_dense`; numpy is imported only then).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from typing import TypeVar

_Key = TypeVar("_Key", bound=Hashable)


def latest_class_matching(
    capacities: Sequence[int], fits: Sequence[Sequence[int]]
) -> list[int | None]:
    """Assign executed steps to reference classes.

    Args:
        capacities: ``capacities[c]`` = how many reference steps class ``c`` holds.
        fits: ``fits[j]`` = the classes executed step ``j`` matches (steps in execution order).

    Returns:
        For every executed step, its class or ``None``. At most ``capacities[c]`` steps get class
        ``c``; the number of assigned steps is maximal, and the set of assigned steps is the one
        with the latest steps (lexicographically, from the last step back).
    """
    spare = list(capacities)
    members: list[set[int]] = [set() for _ in capacities]
    assigned: list[int | None] = [None] * len(fits)
    dead = [False] * len(capacities)  # classes that can never take another step
    for j in range(len(fits) - 1, -1, -1):
        options = [c for c in fits[j] if not dead[c]]
        if not options:
            continue
        free = next((c for c in options if spare[c]), None)
        if free is not None:
            spare[free] -= 1
            members[free].add(j)
            assigned[j] = free
            continue
        # Breadth-first search for an augmenting path: step j enters a full class, one of that
        # class's steps moves to another class it fits, ... until a class with room is reached.
        via: dict[int, int] = {c: j for c in options}
        queue = deque(options)
        goal = None
        while queue:
            c = queue.popleft()
            if spare[c]:
                goal = c
                break
            for moved in members[c]:
                for other in fits[moved]:
                    if other not in via and not dead[other]:
                        via[other] = moved
                        queue.append(other)
        if goal is None:
            # Every class reached is full and all their steps fit only classes reached: no later
            # search can pass through them either (they never change again).
            for c in via:
                dead[c] = True
            continue
        spare[goal] -= 1
        c = goal
        while True:
            step = via[c]
            previous = assigned[step]
            if previous is not None:
                members[previous].discard(step)
            members[c].add(step)
            assigned[step] = c
            if step == j:
                break
            assert previous is not None
            c = previous
    return assigned


def max_weight_pairs(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """The ``(row, col)`` pairs with positive weight of a maximum-weight assignment.

    ``weights`` are finite and ``>= 0`` (0 = may not pair). Deterministic: the same matrix always
    gives the same pairs.
    """
    import numpy as np

    from openevals._matching import max_weight_assignment_dense

    matrix = np.asarray(weights, dtype=float)
    if matrix.size == 0:
        return []
    return [(r, c) for r, c in max_weight_assignment_dense(matrix) if matrix[r, c] > 0]


def group_by(keys: Sequence[_Key]) -> dict[_Key, list[int]]:
    """Positions of each distinct key, in order of first appearance."""
    groups: dict[_Key, list[int]] = {}
    for position, key in enumerate(keys):
        groups.setdefault(key, []).append(position)
    return groups
