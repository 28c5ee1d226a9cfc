"""An anytime-valid confidence sequence for a mean paired difference: look after every row, stop
whenever the answer is settled, and the error rate still holds.

The differences ``d`` (candidate minus baseline) are bounded: with scores in ``[lo, hi]``, ``d``
lies in ``[-(hi - lo), hi - lo]`` and ``x = (d / (hi - lo) + 1) / 2`` in ``[0, 1]``. For each
candidate mean ``m`` of ``x``, two bettors stake on ``x`` being above and below ``m``; their
average wealth

    K_t(m) = 1/2 prod (1 + l+_i (x_i - m)) + 1/2 prod (1 - l-_i (x_i - m))

is a nonnegative martingale starting at 1 when ``m`` is the true mean, so by Ville's inequality
it ever reaches ``1/alpha`` with probability at most ``alpha``, however the stopping time is
chosen. The confidence sequence is every ``m`` whose wealth stays below ``1/alpha`` (intersected
over time). The bets are the predictable plug-in of Waudby-Smith and Ramdas (2023, "Estimating
means of bounded random variables by betting"): ``l_i = sqrt(2 log(2/alpha) / (s2_{i-1} i
log(i + 1)))`` from a running variance ``s2`` (with a prior of 1/4 at weight one), truncated at
``1/2m`` and ``1/2(1-m)`` so wealth stays positive. ``m`` runs over a grid of 1,001 points of
``[0, 1]`` (the interval is exact to the grid's step, 0.002 of the difference's range).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openevals._repr import show

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["SequentialTest", "log_wealth", "scaled"]

GRID = 1001
_TRUNCATE = 0.5


def scaled(differences: Any, bounds: tuple[float, float]) -> NDArray[np.float64]:
    """Paired differences of scores in ``bounds`` as values in [0, 1] (``ValueError`` outside)."""
    import numpy as np

    low, high = bounds
    span = high - low
    d = np.asarray(differences, dtype=np.float64)
    if not np.isfinite(d).all() or (np.abs(d) > span * (1 + 1e-12)).any():
        raise ValueError(
            f"paired differences must lie within +/-{span:g} for scores in {show(bounds)}; pass "
            "`bounds=` with the range of the scores"
        )
    return np.asarray(np.clip((d / span + 1.0) / 2.0, 0.0, 1.0))


def _bets(x: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """The predictable bet sizes ``l_i`` along the last axis (each uses only ``x_1..x_{i-1}``)."""
    import numpy as np

    n = x.shape[-1]
    i = np.arange(1, n + 1, dtype=np.float64)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (i + 1)
    spread = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (i + 1)
    before = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), spread[..., :-1]], axis=-1)
    return np.asarray(np.sqrt(2 * math.log(2 / alpha) / (before * i * np.log(i + 1))))


def log_wealth(x: NDArray[np.float64], m: Any, alpha: float) -> NDArray[np.float64]:
    """``log K_t(m)`` after every observation: shape ``x.shape + m.shape`` (``m`` broadcast on a
    new last axis). ``x`` may carry leading axes (many streams at once)."""
    import numpy as np

    m = np.asarray(m, dtype=np.float64)
    lam = _bets(x, alpha)[..., None]
    centred = x[..., None] - m
    with np.errstate(divide="ignore"):
        up = np.minimum(lam, _TRUNCATE / np.maximum(m, 1e-12))
        down = np.minimum(lam, _TRUNCATE / np.maximum(1.0 - m, 1e-12))
        log_up = np.cumsum(np.log1p(up * centred), axis=-2)
        log_down = np.cumsum(np.log1p(-down * centred), axis=-2)
    return np.asarray(np.logaddexp(log_up, log_down) - math.log(2.0))


@dataclass
class SequentialTest:
    """An A/B comparison that may stop after any row (see the module docstring).

    Feed it paired differences with :meth:`update`; :attr:`decision` becomes ``"candidate
    better"`` or ``"candidate worse"`` once the interval excludes 0, or ``"settled"`` once it is
    narrower than ``width`` (a difference of scores); until then ``"undecided"``.
    """

    alpha: float = 0.05
    width: float | None = None
    bounds: tuple[float, float] = (0.0, 1.0)
    _x: list[float] = field(default_factory=list, repr=False)
    low: float = -1.0
    high: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.alpha, float) or not 0.0 < self.alpha < 1.0:
            raise ValueError(
                f"`alpha` must be a float strictly between 0 and 1; got {show(self.alpha)}"
            )
        lo, hi = self.bounds
        if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and hi > lo):
            raise ValueError(
                f"`bounds` must be (low, high) with low < high; got {show(self.bounds)}"
            )
        if self.width is not None and not (
            isinstance(self.width, (int, float))
            and not isinstance(self.width, bool)
            and self.width > 0
        ):
            raise ValueError(f"`width` must be a number > 0 or None; got {show(self.width)}")
        span = hi - lo
        self.low, self.high = -span, span

    @property
    def n(self) -> int:
        return len(self._x)

    @property
    def estimate(self) -> float | None:
        """The mean difference so far (``None`` before any row)."""
        if not self._x:
            return None
        span = self.bounds[1] - self.bounds[0]
        return (2 * sum(self._x) / len(self._x) - 1) * span

    def update(self, differences: Any) -> str:
        """Add paired differences (candidate minus baseline); return the decision."""
        import numpy as np

        self._x.extend(scaled(differences, self.bounds).tolist())
        if not self._x:
            return self.decision
        grid = np.linspace(0.0, 1.0, GRID)
        inside = log_wealth(np.asarray(self._x), grid, self.alpha) < math.log(1 / self.alpha)
        kept = inside.all(axis=0)  # the running intersection over time
        span = self.bounds[1] - self.bounds[0]
        if kept.any():
            self.low = float((2 * grid[kept].min() - 1) * span)
            self.high = float((2 * grid[kept].max() - 1) * span)
        else:  # every grid point rejected at some time: the grid step bounds the interval
            centre = float(2 * np.mean(self._x) - 1) * span
            self.low = self.high = centre
        return self.decision

    @property
    def decision(self) -> str:
        if self.low > 0:
            return "candidate better"
        if self.high < 0:
            return "candidate worse"
        if self.width is not None and self.high - self.low <= self.width:
            return "settled"
        return "undecided"

    def as_dict(self) -> dict[str, Any]:
        fields = ("decision", "n", "estimate", "low", "high", "alpha", "width")
        return {name: getattr(self, name) for name in fields}
