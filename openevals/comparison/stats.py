"""Paired statistics for comparing two runs, written with numpy only.

Every function takes the per-pair differences ``d = candidate - baseline`` (or counts derived
from them) and is checked in the tests against scipy.stats and statsmodels, which are
development-only references:

* :func:`mcnemar_exact` - exact McNemar test for boolean scores: a two-sided binomial test with
  p = 0.5 on the discordant pairs (statsmodels ``mcnemar(exact=True)``).
* :func:`sign_test` - the sign test on non-zero differences (scipy ``binomtest(k, n, 0.5)``).
* :func:`wilcoxon_signed_rank` - Wilcoxon signed-rank test for continuous scores, with scipy's
  defaults: zero differences are dropped (``zero_method="wilcox"``), tied absolute differences get
  their average rank; with at most 50 pairs and neither zeros nor ties the exact null
  distribution is used, with at most 13 pairs and zeros or ties all 2**n sign flips are
  enumerated (an exact permutation test), otherwise the normal approximation with the tie
  correction of the variance and no continuity correction.
* :func:`holm` - Holm's step-down adjustment across keys (statsmodels ``multipletests``).
* :func:`paired_bootstrap` - percentile bootstrap interval of the mean difference, seeded.
* :func:`minimum_detectable_difference` - the smallest mean difference a two-sided paired test
  at ``alpha`` detects with the given power (normal approximation).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

from openevals._stats import Estimate

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "TestResult",
    "binomial_two_sided",
    "holm",
    "mcnemar_exact",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "sign_test",
    "wilcoxon_signed_rank",
]

_EXACT_MAX = 50
_PERMUTATION_MAX = 13
_BOOT_CATEGORIES = 2048


@dataclass(frozen=True)
class TestResult:
    """A paired test: its name, statistic, two-sided p-value and how it was computed."""

    test: str
    statistic: float
    p_value: float
    method: str
    n_used: int
    """Pairs the test used (non-zero differences for Wilcoxon and the sign test, discordant pairs
    for McNemar)."""


def binomial_two_sided(k: int, n: int) -> float:
    """Two-sided p-value of ``k`` successes in ``n`` trials with p = 0.5 (exact)."""
    import numpy as np

    if n == 0:
        return 1.0
    low = min(k, n - k)
    if 2 * low == n:
        return 1.0
    # log C(n, i) for i = 0..low by cumulative sums of log((n - i + 1) / i).
    i = np.arange(1, low + 1, dtype=np.float64)
    log_c = np.concatenate([[0.0], np.cumsum(np.log((n - i + 1.0) / i))])
    log_terms = log_c - n * math.log(2.0)
    top = float(log_terms.max())
    tail = math.exp(top) * float(np.exp(log_terms - top).sum())
    return min(1.0, 2.0 * tail)


def mcnemar_exact(baseline: NDArray[np.bool_], candidate: NDArray[np.bool_]) -> TestResult:
    """Exact McNemar test on paired booleans; the statistic is the smaller discordant count."""
    import numpy as np

    lost = int(np.count_nonzero(baseline & ~candidate))
    gained = int(np.count_nonzero(~baseline & candidate))
    return TestResult(
        "mcnemar",
        float(min(lost, gained)),
        binomial_two_sided(gained, lost + gained),
        "exact binomial on discordant pairs",
        lost + gained,
    )


def sign_test(d: NDArray[np.float64]) -> TestResult:
    """Sign test: the count of positive differences among the non-zero ones, exact binomial."""
    import numpy as np

    positive = int(np.count_nonzero(d > 0))
    negative = int(np.count_nonzero(d < 0))
    return TestResult(
        "sign",
        float(positive),
        binomial_two_sided(positive, positive + negative),
        "exact binomial, zero differences dropped",
        positive + negative,
    )


def _average_ranks(values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Ranks 1..n with ties given their average rank, and the size of each tie group."""
    import numpy as np

    n = values.size
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    bounds = np.concatenate([np.flatnonzero(starts), [n]])
    average = (bounds[:-1] + 1 + bounds[1:]) / 2.0
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = average[np.cumsum(starts) - 1]
    return ranks, np.diff(bounds)


def _signed_rank_distribution(n: int) -> NDArray[np.float64]:
    """Counts of the subsets of {1..n} by their sum (exact in float64 for n <= 50)."""
    import numpy as np

    top = n * (n + 1) // 2
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for rank in range(1, n + 1):
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    return counts


def wilcoxon_signed_rank(d: NDArray[np.float64]) -> TestResult:
    """Wilcoxon signed-rank test on the differences ``d`` (see the module docstring).

    The statistic is min(R+, R-), as scipy reports it for the two-sided test.
    """
    import numpy as np

    zeros = int(np.count_nonzero(d == 0))
    nonzero = d[d != 0]
    count = nonzero.size
    if count == 0:
        return TestResult("wilcoxon", 0.0, 1.0, "no non-zero differences", 0)
    ranks, ties = _average_ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    statistic = min(r_plus, r_minus)
    has_ties = bool((ties > 1).any())
    if d.size <= _EXACT_MAX and not has_ties and zeros == 0:
        dist = _signed_rank_distribution(count)
        total = dist.sum()
        k = round(r_plus)
        cdf = dist[: k + 1].sum() / total
        sf = dist[k:].sum() / total
        p = min(1.0, 2.0 * min(cdf, sf))
        return TestResult("wilcoxon", statistic, p, "exact", count)
    if d.size <= _PERMUTATION_MAX:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=count)))
        stats = (signs > 0).astype(np.float64) @ ranks
        tol = 1e-12 * max(1.0, abs(r_plus))
        less = np.count_nonzero(stats <= r_plus + tol) / stats.size
        greater = np.count_nonzero(stats >= r_plus - tol) / stats.size
        p = min(1.0, 2.0 * min(less, greater))
        return TestResult("wilcoxon", statistic, p, "exact permutation (all sign flips)", count)
    mean = count * (count + 1) / 4.0
    tie_term = float((ties.astype(np.float64) ** 3 - ties).sum())
    variance = (count * (count + 1.0) * (2.0 * count + 1.0) - tie_term / 2.0) / 24.0
    z = (r_plus - mean) / math.sqrt(variance)
    p = min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))
    return TestResult("wilcoxon", statistic, p, "normal approximation, tie-corrected", count)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (m - step) * p_values[i]))
        adjusted[i] = running
    return adjusted


def paired_bootstrap(
    d: NDArray[np.float64], *, confidence: float, resamples: int, seed: int
) -> Estimate:
    """The mean of ``d`` with a percentile bootstrap interval over resampled pairs.

    A resample's mean depends only on how often each distinct difference is drawn, so the
    resamples are drawn as multinomial counts over the distinct values: exact, and fast for
    boolean and rounded scores. With more than 2,048 distinct differences they are first put
    into 2,048 equal-count bins, each represented by its mean (the point estimate is unchanged;
    the interval ignores the spread inside a bin, which is negligible at that many pairs).
    """
    import numpy as np

    n = d.size
    if n == 0:
        return Estimate(None, note="no pairs")
    point = float(d.mean())
    if n == 1:
        return Estimate(point, note="one pair: no interval")
    values, counts = np.unique(d, return_counts=True)
    if values.size > _BOOT_CATEGORIES:
        ordered = np.sort(d)
        edges = np.linspace(0, n, _BOOT_CATEGORIES + 1).astype(np.int64)
        sums = np.add.reduceat(ordered, edges[:-1])
        counts = np.diff(edges)
        values = sums / counts
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=resamples)
    means = draws @ values / n
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Estimate(point, float(low), float(high))


def minimum_detectable_difference(
    d: NDArray[np.float64], *, alpha: float, power: float = 0.8
) -> float:
    """Smallest mean difference detectable at two-sided ``alpha`` with ``power`` on these pairs:
    ``(z[1 - alpha/2] + z[power]) * sd(d) / sqrt(n)``; infinite with fewer than two pairs."""
    n = d.size
    if n < 2:
        return math.inf
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
    return float(z * float(d.std(ddof=1)) / math.sqrt(n))
