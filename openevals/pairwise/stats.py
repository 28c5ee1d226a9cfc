"""Statistics over pairwise verdicts: win/tie/loss rates and a Bradley-Terry ranking, with CIs.

A *comparison* is one verdict between two systems on one row: ``("sys_a", "sys_b", "sys_a")``
means sys_a won, a winner of ``None`` is a tie. From many comparisons:

* :func:`win_rates` gives, for each pair of systems that met, the rates of wins, ties and losses
  (from the first system's side) with bootstrap intervals over comparisons;
* :func:`bradley_terry` fits a Bradley-Terry model (P(i beats j) = p_i / (p_i + p_j)), counting a
  tie as half a win for each side, and ranks every system by its log-strength, with bootstrap
  intervals for the strength and for the rank.

The fit is Hunter's minorise-maximise iteration, run for all bootstrap resamples at once. A weak
prior keeps strengths finite when a system never won or never lost: every pair of systems that
met is credited with ``prior`` extra drawn games (0.5 by default), which shrinks strengths towards
each other by a negligible amount once there are more than a handful of comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals._stats import Estimate, bootstrap_weights, check_resampling, estimate

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "BradleyTerryRanking",
    "PairRecord",
    "RankedSystem",
    "bradley_terry",
    "connected_groups",
    "win_probability",
    "win_rates",
]

Comparison = tuple[Hashable, Hashable, "Hashable | None"]
_MAX_ITERATIONS = 2000
_TOLERANCE = 1e-10


@dataclass(frozen=True)
class PairRecord:
    """How ``a`` fared against ``b`` (rates from ``a``'s side)."""

    a: Hashable
    b: Hashable
    n: int
    wins: int
    ties: int
    losses: int
    win_rate: Estimate
    tie_rate: Estimate
    loss_rate: Estimate


@dataclass(frozen=True)
class RankedSystem:
    system: Hashable
    rank: int
    strength: Estimate
    """Log-strength (natural log of p), centred so that the systems' mean is 0."""
    rank_low: int | None
    rank_high: int | None


@dataclass(frozen=True)
class BradleyTerryRanking:
    systems: tuple[RankedSystem, ...]
    n: int
    confidence: float

    def order(self) -> list[Hashable]:
        return [s.system for s in self.systems]


def _check(
    comparisons: Iterable[Comparison], resamples: int, confidence: float
) -> list[Comparison]:
    rows = list(comparisons)
    for i, row in enumerate(rows):
        if not (isinstance(row, Sequence) and not isinstance(row, str) and len(row) == 3):
            raise TypeError(
                f"`comparisons` row {i} must be (system_a, system_b, winner); got {show(row)}"
            )
        a, b, winner = row
        if a == b:
            raise ValueError(f"`comparisons` row {i} compares {show(a)} with itself")
        if winner is not None and winner not in (a, b):
            raise ValueError(
                f"`comparisons` row {i}: winner {show(winner)} is neither {show(a)} nor {show(b)} "
                "(use None for a tie)"
            )
    if not rows:
        raise ValueError("`comparisons` is empty; pass at least one verdict")
    check_resampling(resamples, confidence)
    return [(a, b, w) for a, b, w in rows]


def _systems(rows: Sequence[Comparison]) -> list[Hashable]:
    seen = list(dict.fromkeys(s for a, b, _ in rows for s in (a, b)))
    try:
        return sorted(seen)  # type: ignore[type-var]
    except TypeError:
        return seen


def connected_groups(comparisons: Iterable[Comparison]) -> list[tuple[Hashable, ...]]:
    """The groups of systems linked by comparisons: two systems share a group when a chain of
    comparisons (in either direction, whatever the verdict) joins them.

    A Bradley-Terry ranking compares strengths only within a group: systems of two groups that
    never met have no comparison to set their relative strength, and no prior can supply one.
    Groups are listed largest first (ties: in the systems' sort order), each sorted.
    """
    rows = [(a, b) for a, b, _ in comparisons]
    systems = _systems([(a, b, None) for a, b in rows])
    parent = {s: s for s in systems}

    def root(s: Hashable) -> Hashable:
        while parent[s] != s:
            parent[s] = parent[parent[s]]
            s = parent[s]
        return s

    for a, b in rows:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[rb] = ra
    groups: dict[Hashable, list[Hashable]] = {}
    for s in systems:  # in sort order, so each group comes out sorted
        groups.setdefault(root(s), []).append(s)
    order = {s: i for i, s in enumerate(systems)}
    found = sorted(groups.values(), key=lambda g: (-len(g), order[g[0]]))
    return [tuple(g) for g in found]


def _score_matrix(rows: Sequence[Comparison], index: dict[Hashable, int]) -> NDArray[np.float64]:
    """(n_rows, m*m): row r puts the points system i took from j at column i*m + j."""
    import numpy as np

    m = len(index)
    out = np.zeros((len(rows), m * m))
    for r, (a, b, winner) in enumerate(rows):
        i, j = index[a], index[b]
        if winner is None:
            out[r, i * m + j] = out[r, j * m + i] = 0.5
        elif winner == a:
            out[r, i * m + j] = 1.0
        else:
            out[r, j * m + i] = 1.0
    return out


def win_rates(
    comparisons: Iterable[Comparison],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[PairRecord]:
    """Win, tie and loss rates for every pair of systems that met, with bootstrap intervals.

    Each unordered pair is reported once, from the side of the system that sorts first.
    """
    import numpy as np

    rows = _check(comparisons, resamples, confidence)
    systems = _systems(rows)
    rank = {s: i for i, s in enumerate(systems)}
    records = []
    pairs: dict[tuple[Hashable, Hashable], list[int]] = {}
    for a, b, winner in rows:
        first, second = (a, b) if rank[a] < rank[b] else (b, a)
        code = 2 if winner is None else (0 if winner == first else 1)  # 0 win, 1 loss, 2 tie
        pairs.setdefault((first, second), []).append(code)
    for (a, b), codes in sorted(pairs.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])):
        n = len(codes)
        onehot = np.eye(3)[codes]
        weights = bootstrap_weights(n, resamples, seed)
        rates = weights @ onehot / n
        wins, losses, ties = (int(c) for c in onehot.sum(axis=0))
        records.append(
            PairRecord(
                a=a,
                b=b,
                n=n,
                wins=wins,
                ties=ties,
                losses=losses,
                win_rate=estimate(rates[:, 0], confidence, ""),
                tie_rate=estimate(rates[:, 2], confidence, ""),
                loss_rate=estimate(rates[:, 1], confidence, ""),
            )
        )
    return records


def _fit(points: NDArray[np.float64], met: NDArray[np.float64]) -> NDArray[np.float64]:
    """Log-strengths (B, m) from points won (B, m, m) by minorise-maximise iteration."""
    import numpy as np

    games = points + points.transpose(0, 2, 1)
    wins = points.sum(axis=2)
    present = met.sum(axis=2) > 0
    count = np.maximum(present.sum(axis=1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # diverging fits are caught below
        p = np.ones(wins.shape)
        for _ in range(_MAX_ITERATIONS):
            denominator = (games / (p[:, :, None] + p[:, None, :])).sum(axis=2)
            updated = np.where(denominator > 0, wins / np.where(denominator > 0, denominator, 1), p)
            # Centre the log-strengths of the systems present in each resample on 0.
            centre = np.where(present, np.log(updated), 0.0).sum(axis=1, keepdims=True) / count
            updated = np.where(present, updated / np.exp(centre), 1.0)
            if np.max(np.abs(updated - p)) < _TOLERANCE:
                p = updated
                break
            p = updated
        strengths: NDArray[np.float64] = np.log(p)
    # Systems that met nobody in a resample have no strength there; a resample whose win graph
    # is not strongly connected has no finite maximum (someone never lost to the rest).
    strengths[~present] = np.nan
    strengths[~_strongly_connected(points, present)] = np.nan
    return strengths


def _strongly_connected(
    points: NDArray[np.float64], present: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """Per resample: can every present system reach every other along 'took points from' edges?

    This is Ford's condition for the Bradley-Terry likelihood to have a finite maximum.
    """
    import numpy as np

    m = points.shape[1]
    reach = (points > 0) | np.eye(m, dtype=bool)[None, :, :]
    for _ in range(max(1, math.ceil(math.log2(m)))):
        reach = (reach.astype(np.float64) @ reach.astype(np.float64)) > 0
    both = present[:, :, None] & present[:, None, :]
    return np.asarray(np.where(both, reach, True).all(axis=(1, 2)), dtype=bool)


def bradley_terry(
    comparisons: Iterable[Comparison],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    prior: float = 0.5,
) -> BradleyTerryRanking:
    """Rank systems by a Bradley-Terry fit, with bootstrap intervals for strength and rank.

    Args:
        comparisons: ``(system_a, system_b, winner)`` verdicts; ``winner=None`` is a tie.
        resamples, seed, confidence: the bootstrap over comparisons (``resamples=0``: no CIs).
        prior: drawn games credited to every pair of systems that met (keeps strengths finite
            for systems that never won or never lost); ``0`` fits the plain maximum likelihood,
            which is undefined (infinite) in those cases.

    Raises:
        ValueError: bad arguments; comparisons that form several groups of systems that never
            met (named in the message: see :func:`connected_groups`); with ``prior=0``, a
            system that never won or never lost.
    """
    import numpy as np

    rows = _check(comparisons, resamples, confidence)
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not prior >= 0:
        raise ValueError(f"`prior` must be a number >= 0; got {show(prior)}")
    systems = _systems(rows)
    if len(systems) < 2:
        raise ValueError("a ranking needs at least two systems")
    groups = connected_groups(rows)
    if len(groups) > 1:
        raise ValueError(
            f"the comparisons form {len(groups)} groups of systems that never met each other: "
            f"{' | '.join(show(list(g)) for g in groups)}; strengths across groups are undefined whatever the prior. "
            "Add comparisons between the groups, or rank each group on its own "
            "(`connected_groups(comparisons)` lists them)"
        )
    m = len(systems)
    index = {s: i for i, s in enumerate(systems)}
    points = _score_matrix(rows, index)
    weights = bootstrap_weights(len(rows), resamples, seed)
    won = (weights @ points).reshape(-1, m, m)
    met = won + won.transpose(0, 2, 1)
    won = won + np.where(met > 0, prior / 2.0, 0.0)
    strengths = _fit(won, met)
    if np.isnan(strengths[0]).any() or not np.isfinite(strengths[0]).all():
        # Connected, so only prior=0 gets here: some system never won or never lost.
        never = [
            s
            for i, s in enumerate(systems)
            if not (won[0, i, :] > 0).any() or not (won[0, :, i] > 0).any()
        ]
        raise ValueError(
            "the Bradley-Terry fit with prior=0 has no finite solution: "
            f"{never or 'a subset of systems'} never won or never lost against the rest; "
            "use prior > 0 (the default 0.5 credits each pair that met with half a drawn game)"
        )
    # Ranks per resample: 1 = strongest. Systems missing from a resample get no rank there.
    order = np.argsort(-np.nan_to_num(strengths, nan=-np.inf), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, m + 1)[None, :].repeat(len(order), 0), axis=1)
    ranked = []
    tail = (1.0 - confidence) / 2.0 * 100.0
    for i, system in enumerate(systems):
        boot_ranks = ranks[1:, i][~np.isnan(strengths[1:, i])]
        low = high = None
        if boot_ranks.size:
            lo, hi = np.percentile(boot_ranks, [tail, 100.0 - tail], method="nearest")
            low, high = int(lo), int(hi)
        ranked.append(
            RankedSystem(
                system=system,
                rank=int(ranks[0, i]),
                strength=estimate(strengths[:, i], confidence, "never compared"),
                rank_low=low,
                rank_high=high,
            )
        )
    ranked.sort(key=lambda r: r.rank)
    return BradleyTerryRanking(systems=tuple(ranked), n=len(rows), confidence=confidence)


def win_probability(ranking: BradleyTerryRanking, a: Hashable, b: Hashable) -> float:
    """The fitted probability that ``a`` beats ``b``."""
    strength: dict[Any, float] = {
        s.system: s.strength.value for s in ranking.systems if s.strength.value is not None
    }
    for name in (a, b):
        if name not in strength:
            raise ValueError(f"{show(name)} is not a ranked system; known: {show(list(strength))}")
    return 1.0 / (1.0 + math.exp(strength[b] - strength[a]))
