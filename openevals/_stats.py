"""Shared statistics helpers: the one bootstrap of the package, and an estimate with its interval.

A bootstrap resample of ``n`` rows is a row of multiplicities (how often each row was drawn), so
any statistic that is a weighted sum over rows is computed for every resample at once as a matrix
product. :func:`resample_counts` draws those rows (over the rows, or over a few distinct values
with their frequencies), :func:`bootstrap_weights` returns them with the data itself (all ones)
as row 0, :func:`resampled_means` draws the resamples' means for statistics over many distinct
values, and :func:`percentile_interval` / :func:`estimate` turn per-resample values into a
percentile interval. Every caller's interval (run aggregates, comparisons, calibration, pairwise
rates) is made of these, seeded with ``numpy.random.default_rng(seed)``. numpy is imported inside
the functions, never at package import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass(frozen=True)
class Estimate:
    """A figure with its bootstrap percentile interval.

    ``value`` is ``None`` when the figure is undefined on the data (``note`` says why); ``low`` and
    ``high`` are ``None`` when no interval could be computed.
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "note": self.note}

    def __format__(self, spec: str) -> str:
        spec = spec or ".3f"
        if self.value is None:
            return "n/a"
        text = format(self.value, spec)
        if self.low is not None and self.high is not None:
            text += f" [{format(self.low, spec)}, {format(self.high, spec)}]"
        return text


def check_resampling(resamples: Any, confidence: Any) -> None:
    """``ValueError`` naming ``resamples`` (a whole number >= 0) or ``confidence`` (a float
    strictly between 0 and 1) when either is not one."""
    from openevals._repr import show

    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        raise ValueError(f"`resamples` must be a whole number >= 0; got {show(resamples)}")
    if not (isinstance(confidence, float) and 0.0 < confidence < 1.0):
        raise ValueError(
            f"`confidence` must be a float strictly between 0 and 1; got {show(confidence)}"
        )


def resample_counts(
    n: int, probabilities: NDArray[np.float64], resamples: int, seed: int
) -> NDArray[np.float64]:
    """``resamples`` rows of multiplicities: how often each outcome was drawn in ``n`` draws with
    ``probabilities`` (one multinomial draw per row from ``default_rng(seed)``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.multinomial(n, probabilities, size=resamples).astype(np.float64)


def bootstrap_weights(n: int, resamples: int, seed: int) -> NDArray[np.float64]:
    """Row 0 is the data itself (all ones); rows 1.. are bootstrap multiplicities."""
    import numpy as np

    draws = resample_counts(n, np.full(n, 1.0 / n), resamples, seed)
    return np.vstack([np.ones((1, n)), draws])


def resampled_means(
    values: NDArray[np.float64], resamples: int, seed: int, *, block: int
) -> NDArray[np.float64]:
    """The means of ``resamples`` bootstrap resamples of ``values``: indices drawn with
    ``default_rng(seed).integers``, ``block`` resamples at a time (so memory stays bounded; the
    same seed and block give the same means)."""
    import numpy as np

    n = len(values)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    return means


def percentile_interval(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of ``values``."""
    import numpy as np

    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def estimate(values: NDArray[np.float64], confidence: float, undefined: str) -> Estimate:
    """Turn per-resample values (row 0 the point estimate; NaN = undefined) into an Estimate."""
    import numpy as np

    point = float(values[0])
    if math.isnan(point):
        return Estimate(None, note=undefined)
    boot = values[1:]
    boot = boot[~np.isnan(boot)]
    if boot.size == 0:
        return Estimate(point)
    low, high = percentile_interval(boot, confidence)
    dropped = len(values) - 1 - boot.size
    note = (
        f"{dropped} of {len(values) - 1} resamples left out (figure undefined on them)"
        if dropped
        else None
    )
    return Estimate(point, low, high, note)


def average_ranks(values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """1-based ranks of ``values``, ties given their average rank (as ``scipy.stats.rankdata``),
    and the sizes of the groups of ties."""
    import numpy as np

    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sizes = np.diff(np.concatenate((starts, [len(values)])))
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(starts + (sizes + 1) / 2.0, sizes)
    return ranks, sizes
