"""Paired statistics for comparing two runs row by row (numpy only; scipy and statsmodels are the
references the tests check these against).

* :func:`sign_test`: the exact two-sided binomial test of ``k`` successes in ``n`` at p = 1/2
  (``scipy.stats.binomtest(k, n).pvalue``); McNemar's exact test is this test on the discordant
  pairs (``statsmodels`` ``mcnemar(exact=True)``).
* :func:`wilcoxon`: the Wilcoxon signed-rank test, two-sided. Zero differences are dropped before
  ranking (``zero_method="wilcox"``); tied absolute differences get their average rank. With 50 or
  fewer non-zero differences and no ties the p-value is exact (the null distribution counted by
  dynamic programming); with ties and 13 or fewer non-zero differences it is exact over all 2**n
  sign flips of the average ranks (what ``scipy.stats.wilcoxon``'s default does there); otherwise
  it is the normal approximation with the tie correction of the variance and no continuity
  correction (``scipy.stats.wilcoxon(..., method="approx")``).
* :func:`holm`: Holm's step-down adjustment of several p-values (``multipletests(method="holm")``).
* :func:`paired_bootstrap_ci`: a percentile bootstrap interval for the mean difference, resampling
  pairs. Differences with few distinct values (booleans: -1, 0, 1) are resampled exactly through
  multinomial counts of the values, at any size; otherwise up to :data:`BOOTSTRAP_LIMIT` pairs are
  resampled, and beyond that the interval is the normal one the bootstrap converges to (said in
  the result's ``ci_method``).
* :func:`detectable_difference`: the smallest true mean difference that this many pairs would
  detect at ``alpha`` with the given power (two-sided, normal approximation).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

from openevals._stats import average_ranks, percentile_interval, resample_counts, resampled_means

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "BOOTSTRAP_LIMIT",
    "detectable_difference",
    "holm",
    "paired_bootstrap_ci",
    "sign_test",
    "wilcoxon",
]

BOOTSTRAP_LIMIT = 20_000
_EXACT_LIMIT = 50
_FLIP_LIMIT = 13
_FEW_VALUES = 64
_BLOCK = 200


# The verdict of a key whose means, difference or interval are inf or NaN (scores near the float
# range's ends): no test can rest on them, and no gate passes on it.
NOT_FINITE = "not finite"


def _binom_cdf_half(m: int, n: int) -> float:
    """P(X <= m) for X ~ Binomial(n, 1/2), 0 <= m < n, summed in log space (exact for any n)."""
    import numpy as np

    j = np.arange(1, m + 1, dtype=np.float64)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(n - j + 1) - np.log(j))))
    logs = log_choose - n * math.log(2.0)
    top = float(logs.max())
    return float(min(1.0, math.exp(top) * float(np.exp(logs - top).sum())))


def sign_test(k: int, n: int) -> float:
    """Two-sided exact p-value of ``k`` successes out of ``n`` trials at p = 1/2 (1.0 if n = 0)."""
    if n <= 0:
        return 1.0
    low = min(k, n - k)
    if 2 * low == n:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf_half(low, n))


def _exact_signed_rank_cdf(t: float, n: int) -> float:
    """P(W+ <= t) under the null for n non-zero, untied differences (ranks 1..n)."""
    import numpy as np

    top = n * (n + 1) // 2
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[: top + 1 - r].copy()
    return float(counts[: math.floor(t) + 1].sum() / 2.0**n)


def wilcoxon(differences: NDArray[np.float64]) -> tuple[float, float, str]:
    """``(statistic, p-value, method)`` of the two-sided signed-rank test of ``differences``.

    The statistic is the smaller of the positive and negative rank sums, as scipy reports it.
    All-zero differences give p = 1.
    """
    import numpy as np

    d = differences[differences != 0]
    n = len(d)
    if n == 0:
        return 0.0, 1.0, "no non-zero differences"
    ranks, ties = average_ranks(np.abs(d))
    plus = float(ranks[d > 0].sum())
    minus = float(ranks[d < 0].sum())
    statistic = min(plus, minus)
    if n <= _EXACT_LIMIT and bool((ties == 1).all()):
        p = min(1.0, 2.0 * _exact_signed_rank_cdf(statistic, n))
        return statistic, p, "exact"
    if n <= _FLIP_LIMIT:
        # Ties with few pairs: the normal approximation is poor, so count all 2**n sign flips of
        # the (average) ranks, as scipy's default does there (an exact permutation test).
        signs = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        sums = signs.astype(np.float64) @ ranks
        tol = 1e-9 * max(1.0, plus)
        low = np.count_nonzero(sums <= plus + tol) / sums.size
        high = np.count_nonzero(sums >= plus - tol) / sums.size
        return statistic, float(min(1.0, 2.0 * min(low, high))), "exact (all sign flips)"
    mean = n * (n + 1) / 4.0
    # Positive: even with every difference tied it is n(n+1)(3n+3)/48.
    variance = n * (n + 1) * (2 * n + 1) / 24.0 - float((ties**3 - ties).sum()) / 48.0
    z = (statistic - mean) / math.sqrt(variance)
    return statistic, min(1.0, 2.0 * NormalDist().cdf(-abs(z))), "normal approximation"


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def paired_bootstrap_ci(
    differences: NDArray[np.float64], *, confidence: float, resamples: int, seed: int
) -> tuple[float | None, float | None, str]:
    """``(low, high, method)`` of a percentile interval for the mean of ``differences``."""
    import numpy as np

    n = len(differences)
    if n < 2:
        return None, None, "fewer than 2 pairs"
    values, counts = np.unique(differences, return_counts=True)
    if len(values) <= _FEW_VALUES:
        means = resample_counts(n, counts / n, resamples, seed) @ values / n
        method = "bootstrap (exact resampling of the distinct differences)"
    elif n <= BOOTSTRAP_LIMIT:
        means = resampled_means(differences, resamples, seed, block=_BLOCK)
        method = "bootstrap"
    else:
        tail = (1.0 - confidence) / 2.0 * 100.0
        half = NormalDist().inv_cdf(1.0 - tail / 100.0) * float(differences.std(ddof=1))
        centre = float(differences.mean())
        half /= math.sqrt(n)
        return centre - half, centre + half, "normal (more pairs than the bootstrap limit)"
    low, high = percentile_interval(means, confidence)
    return low, high, method


def detectable_difference(sd: float, n: int, *, alpha: float, power: float = 0.8) -> float | None:
    """The smallest mean difference ``n`` pairs with difference s.d. ``sd`` detect (two-sided)."""
    if n < 2:
        return None
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)
    return z * max(sd, 0.0) / math.sqrt(n)
