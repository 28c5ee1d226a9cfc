"""Shared statistics helpers: an estimate with its interval, and vectorised bootstrap weights.

A bootstrap resample of ``n`` rows is a row of multiplicities (how often each row was drawn), so
any statistic that is a weighted sum over rows is computed for every resample at once as a matrix
product. :func:`bootstrap_weights` returns those rows with the data itself (all ones) as row 0,
and :func:`estimate` turns per-row values into a point estimate with a percentile interval.
numpy is imported inside the functions, never at package import.
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


def bootstrap_weights(n: int, resamples: int, seed: int) -> NDArray[np.float64]:
    """Row 0 is the data itself (all ones); rows 1.. are bootstrap multiplicities."""
    import numpy as np

    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
    return np.vstack([np.ones((1, n)), draws])


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
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    dropped = len(values) - 1 - boot.size
    note = (
        f"{dropped} of {len(values) - 1} resamples left out (figure undefined on them)"
        if dropped
        else None
    )
    return Estimate(point, float(low), float(high), note)


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
