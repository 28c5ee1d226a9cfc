"""Aggregate statistics of evaluation scores.

* :func:`describe` - count, sum, mean, median, min, max, sample standard deviation and a 95%
  confidence interval of the mean for one list of scores. Boolean scores are aggregated as rates:
  ``True`` counts as 1, ``False`` as 0, so ``mean`` is the share of ``True`` (also given as
  ``rate``).
* :func:`bootstrap_ci` - the percentile bootstrap interval of the mean, with a fixed seed so the
  same scores always give the same interval (vectorised with numpy).
* :class:`OnlineStats` - running count/mean/variance (Welford) used for the live progress display,
  with a normal-approximation interval that costs O(1) per update.
* :class:`ScoreAggregator` - collects the scores of a run per feedback key (and per group) and
  produces the overall, per-group, micro and macro aggregates in the layout of graphrag-eval's
  ``compute_aggregates``.

Only real numbers and booleans are aggregated. ``None`` (an evaluator that declined to score, e.g.
a retrieval metric with ``empty_reference="skip"``) is counted as ``skipped``; other values
(strings, dicts) as ``non_numeric``.
"""

from __future__ import annotations

import math
import time
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show
from openevals._stats import resampled_means

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "OnlineStats",
    "ScoreAggregator",
    "bootstrap_ci",
    "describe",
    "interval",
    "median",
    "normal_ci",
    "numeric_score",
    "quantile",
]

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20240601
_Z95 = 1.959963984540054
# Above this many resampled draws (n * resamples) the normal interval is used instead: for such
# large samples the bootstrap and the normal interval agree to about three decimals.
_BOOTSTRAP_WORK_LIMIT = 2_000_000
LIVE_INTERVAL_EVERY = 0.5
"""Seconds between two live intervals of one key (the progress display's running table)."""
# Resample in chunks of about this many draws, to bound memory.
_CHUNK_DRAWS = 250_000


def numeric_score(value: Any) -> float | None:
    """``value`` as a float if it is a real number or a bool (``NaN`` excluded), else ``None``.

    An int past the float range (``10**400``) counts as the infinity of its sign, as a float
    score that large would."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if value > 0 else -math.inf
        return number if math.isfinite(number) else None
    return None


_SCALE = 2.0**-64


def midpoint(a: float, b: float) -> float:
    """``(a + b) / 2``, without overflow for values near the float range's ends."""
    middle = (a + b) / 2.0
    return middle if math.isfinite(middle) else a / 2.0 + b / 2.0


def total(values: Sequence[float]) -> float:
    """The exact sum (``math.fsum``), or the infinity of its sign when it passes the float range
    (fsum raises ``OverflowError`` there); ``NaN`` for ``inf + -inf``."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.fsum([v * _SCALE for v in values]) / _SCALE
    except ValueError:
        return math.nan


def mean_of(values: Sequence[float]) -> float:
    """The mean of a non-empty ``values``, finite whenever every value is (no overflow of the sum)."""
    n = len(values)
    try:
        return math.fsum(values) / n
    except OverflowError:  # scaled by a power of two (exact), then kept within the values' range
        mean = math.fsum([v * _SCALE for v in values]) / n / _SCALE
        return max(min(values), min(mean, max(values)))
    except ValueError:
        return math.nan


def spread(values: Sequence[float], mean: float) -> float:
    """``sum((v - mean)**2)``: inf at worst for values near the float range's ends, never
    ``OverflowError`` (those values alone take the scaled path; the plain sum serves the rest)."""
    try:
        return math.fsum([(v - mean) ** 2 for v in values])
    except OverflowError:
        pass
    scale = max(abs(v) for v in values)
    if not math.isfinite(scale) or not math.isfinite(mean):
        return math.inf
    deviations = [(v - mean) / scale for v in values]
    try:
        return math.fsum([d * d for d in deviations]) * scale * scale
    except OverflowError:
        return math.inf


def median(values: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count)."""
    n = len(values)
    if n == 0:
        raise ValueError("median needs at least one value; got an empty sequence")
    return _middle(sorted(map(float, values)))


def _middle(ordered: Sequence[float]) -> float:
    """The median of sorted ``ordered`` (not empty)."""
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else midpoint(ordered[middle - 1], ordered[middle])


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` with linear interpolation (``numpy.quantile``'s default
    method). Raises ``ValueError`` for an empty sequence or ``q`` outside [0, 1]."""
    if len(values) == 0:
        raise ValueError("quantile needs at least one value; got an empty sequence")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1]; got {show(q)}")
    import numpy as np

    return float(np.quantile(np.asarray(values, dtype=float), q))


def normal_ci(mean: float, stdev: float | None, n: int) -> tuple[float, float]:
    """``mean ± 1.96 · stdev / sqrt(n)`` (a degenerate interval when ``n < 2``)."""
    if n < 2 or stdev is None:
        return (mean, mean)
    half = _Z95 * stdev / math.sqrt(n)
    return (mean - half, mean + half)


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``.

    Draws ``resamples`` samples of ``len(values)`` with replacement from
    ``numpy.random.default_rng(seed)`` over the sorted values, so the interval is reproducible
    and independent of the order of ``values``; the bounds are the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles of the resampled means (linear interpolation). Raises
    ``ValueError`` for an empty sequence.
    """
    n = len(values)
    if n == 0:
        raise ValueError("bootstrap_ci needs at least one value; got an empty sequence")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {show(confidence)}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1; got {show(resamples)}")
    if n == 1 or min(values) == max(values):
        return (float(values[0]), float(values[0]))
    import numpy as np

    pool = np.sort(np.asarray(values, dtype=float))  # independent of the order rows finished in
    # Scores near the float range's ends are resampled scaled down, so means never overflow.
    scale = 2.0 ** max(0, math.frexp(float(np.abs(pool).max()))[1] - 500)  # exact: a power of 2
    means = resampled_means(
        pool / scale if scale > 1.0 else pool, resamples, seed, block=max(1, _CHUNK_DRAWS // n)
    )
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha]) * scale
    # The mean of n draws lies within [min, max]; clamp away float noise.
    lo_bound, hi_bound = float(pool[0]), float(pool[-1])
    return (max(lo_bound, min(float(low), hi_bound)), max(lo_bound, min(float(high), hi_bound)))


def interval(
    values: Sequence[float], mean: float, stdev: float | None, bounds: tuple[float, float]
) -> tuple[tuple[float, float], str]:
    """``(ci95, method)`` of the mean of ``values``: the percentile bootstrap, or the normal
    interval for samples too large to resample cheaply; within ``bounds`` (the values' minimum
    and maximum, which a mean cannot leave: a rate's interval stays in [0, 1])."""
    n = len(values)
    if n * BOOTSTRAP_RESAMPLES <= _BOOTSTRAP_WORK_LIMIT:
        return bootstrap_ci(values), "bootstrap"
    low, high = normal_ci(mean, stdev, n)
    lo, hi = bounds
    return (max(lo, min(low, hi)), max(lo, min(high, hi))), "normal"


def describe(values: Sequence[float], *, boolean: bool = False) -> dict[str, Any]:
    """Summary statistics of ``values`` (floats; booleans already mapped to 0/1).

    Returns ``count`` and, when ``count > 0``, ``sum``, ``mean``, ``median``, ``min``, ``max``,
    ``stdev`` (sample, ``None`` below two values), ``ci95`` (``[low, high]``) and ``ci_method``
    (``"bootstrap"``, or ``"normal"`` for samples too large to resample cheaply). With
    ``boolean=True`` the result also has ``rate`` (= ``mean``) and ``type: "boolean"``.
    """
    n = len(values)
    out: dict[str, Any] = {"type": "boolean" if boolean else "numeric", "count": n}
    if n == 0:
        return out
    summed = total(values)
    mean = mean_of(values)
    stdev: float | None = None
    if n > 1:
        stdev = math.sqrt(spread(values, mean) / (n - 1))
    ordered = sorted(values)  # one sort gives the median, the minimum and the maximum
    lo, hi = ordered[0], ordered[-1]
    mean = max(lo, min(mean, hi))
    ci, method = interval(values, mean, stdev, (lo, hi))
    out.update(
        {
            "sum": summed,
            "mean": mean,
            "median": float(_middle(ordered)),
            "min": lo,
            "max": hi,
            "stdev": stdev,
            "ci95": [ci[0], ci[1]],
            "ci_method": method,
        }
    )
    if boolean:
        out["rate"] = mean
    return out


@dataclass
class OnlineStats:
    """Running count, mean and variance (Welford's algorithm)."""

    count: int = 0
    mean: float = 0.0
    _m2: float = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)

    def add_many(self, values: Sequence[float]) -> None:
        """Merge a batch of values (Chan et al.'s parallel update of Welford's sums)."""
        n = len(values)
        if not n:
            return
        mean = mean_of(values)
        m2 = spread(values, mean)
        total = self.count + n
        delta = mean - self.mean
        self.mean += delta * (n / total)  # not delta * n: that overflows near the float range
        self._m2 += m2 + delta * delta * self.count * n / total
        self.count = total

    @property
    def stdev(self) -> float | None:
        return math.sqrt(self._m2 / (self.count - 1)) if self.count > 1 else None

    def ci95(self) -> tuple[float, float]:
        return normal_ci(self.mean, self.stdev, self.count)

    def snapshot(self) -> dict[str, Any]:
        low, high = self.ci95()
        return {"count": self.count, "mean": self.mean, "ci95": [low, high]}


@dataclass
class _KeyValues:
    values: array[float] = field(default_factory=lambda: array("d"))
    boolean: bool = True
    skipped: int = 0
    non_numeric: int = 0

    def add(self, score: Any) -> None:
        number = numeric_score(score)
        if number is None:
            if score is None:
                self.skipped += 1
            else:
                self.non_numeric += 1
            return
        if not isinstance(score, bool):
            self.boolean = False
        self.values.append(number)

    def add_many(self, scores: Sequence[Any]) -> None:
        """:meth:`add` for each of ``scores`` (floats and bools in one step)."""
        kinds = set(map(type, scores))
        if kinds == {float} and all(map(math.isfinite, scores)):
            self.boolean = False
            self.values.extend(scores)
        elif kinds == {bool}:
            self.values.extend(map(float, scores))
        else:
            for score in scores:
                self.add(score)

    def describe(self) -> dict[str, Any]:
        out = describe(self.values, boolean=self.boolean and len(self.values) > 0)
        if self.skipped:
            out["skipped"] = self.skipped
        if self.non_numeric:
            out["non_numeric"] = self.non_numeric
        return out


@dataclass
class _Bucket:
    """Everything counted for one group (or for all rows)."""

    keys: defaultdict[str, _KeyValues] = field(default_factory=lambda: defaultdict(_KeyValues))
    rows_ok: int = 0
    rows_failed: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def add_scores(self, scores: Iterable[tuple[str, Any]]) -> None:
        for key, score in scores:
            self.keys[key].add(score)

    def add_rows(self, ok: int, failed: Iterable[Iterable[str]]) -> None:
        """:meth:`add_row` for ``ok`` rows without errors and one row per ``failed`` entry."""
        self.rows_ok += ok
        for names in failed:
            self.add_row(names)

    def add_row(self, failed_evaluators: Iterable[str]) -> None:
        failed = list(failed_evaluators)
        if failed:
            self.rows_failed += 1
            for name in failed:
                self.errors[name] = self.errors.get(name, 0) + 1
        else:
            self.rows_ok += 1

    def scores(self) -> dict[str, dict[str, Any]]:
        return {key: self.keys[key].describe() for key in sorted(self.keys)}

    def counts(self) -> dict[str, Any]:
        return {
            "number_of_success_samples": self.rows_ok,
            "number_of_error_samples": self.rows_failed,
            "errors": dict(sorted(self.errors.items())),
        }


class ScoreAggregator:
    """Collects per-row scores; :meth:`aggregates` and :meth:`by_group` summarise them.

    Memory is one float per score (``array('d')``), so 100,000 rows cost about a megabyte per key.
    """

    def __init__(self, *, grouped: bool = False, live: bool = True) -> None:
        self.grouped = grouped
        self.live = live  # keep the running statistics of online_snapshot (progress display)?
        self._all = _Bucket()
        self._groups: defaultdict[str, _Bucket] = defaultdict(_Bucket)
        self.online: defaultdict[str, OnlineStats] = defaultdict(OnlineStats)
        # key -> (count, when, interval, method) of the last live interval
        self._live_ci: dict[str, tuple[int, float, tuple[float, float], str]] = {}

    def add_row(
        self,
        scores: Sequence[tuple[str, Any]],
        failed_evaluators: Sequence[str],
        group: str | None = None,
    ) -> None:
        """Record one finished row: its ``(feedback_key, score)`` pairs and failed evaluators."""
        self._all.add_scores(scores)
        self._all.add_row(failed_evaluators)
        for key, score in scores if self.live else ():
            number = numeric_score(score)
            if number is not None:
                self.online[key].add(number)
        if self.grouped:
            bucket = self._groups["(none)" if group is None else group]
            bucket.add_scores(scores)
            bucket.add_row(failed_evaluators)

    def add_block(
        self, scores: dict[str, list[Any]], ok_rows: int, failed: Iterable[Sequence[str]]
    ) -> None:
        """Record finished rows at once (no groups): every score per feedback key, in row
        order, the number of rows without errors, and the failed evaluators of each other row."""
        for key, values in scores.items():
            bucket = self._all.keys[key]
            before = len(bucket.values)
            bucket.add_many(values)
            numbers = bucket.values[before:] if self.live else ()  # the numeric scores
            if numbers:
                self.online[key].add_many(numbers)
        self._all.add_rows(ok_rows, failed)

    def aggregates(self) -> dict[str, dict[str, Any]]:
        """Per feedback key statistics over all rows (see :func:`describe`)."""
        return self._all.scores()

    def by_group(self) -> dict[str, Any] | None:
        """``{"per_group": ..., "micro": ..., "macro": ...}`` or ``None`` without ``group_by``.

        ``per_group[g]`` and ``micro`` hold ``number_of_success_samples``,
        ``number_of_error_samples`` (rows where at least one evaluator failed), ``errors`` (failed
        rows per evaluator) and ``scores`` (per key statistics). ``macro.scores[key]`` holds the
        ``mean`` of the group means and the number of ``groups`` that had the key.
        """
        if not self.grouped:
            return None
        per_group = {
            name: {**bucket.counts(), "scores": bucket.scores()}
            for name, bucket in sorted(self._groups.items())
        }
        micro = {**self._all.counts(), "scores": self._all.scores()}
        macro: dict[str, dict[str, Any]] = {}
        for key in sorted(self._all.keys):
            means = [
                g["scores"][key]["mean"]
                for g in per_group.values()
                if key in g["scores"] and g["scores"][key]["count"] > 0
            ]
            if means:
                macro[key] = {"mean": mean_of(means), "groups": len(means)}
        return {"per_group": per_group, "micro": micro, "macro": {"scores": macro}}

    def histogram_values(self, key: str) -> Sequence[float]:
        bucket = self._all.keys.get(key)
        return bucket.values if bucket is not None else array("d")

    def online_snapshot(self, *, fresh: bool = False) -> dict[str, dict[str, Any]]:
        """The running count, mean and 95% interval of each key, the interval made as the final
        one is (:func:`interval`) from the scores so far, at most every
        :data:`LIVE_INTERVAL_EVERY` seconds per key (cheap enough to ask after every row);
        ``fresh``: from every score so far (the last snapshot of a run)."""
        out: dict[str, dict[str, Any]] = {}
        now = time.monotonic()
        for key in sorted(self.online):
            stats = self.online[key]
            bucket = self._all.keys.get(key)
            cached = self._live_ci.get(key)
            if bucket is None or not len(bucket.values):
                out[key] = stats.snapshot()
                continue
            stale = cached is not None and not cached[2][0] <= stats.mean <= cached[2][1]
            if cached is None or (
                cached[0] != stats.count
                and (fresh or stale or now - cached[1] >= LIVE_INTERVAL_EVERY)
            ):
                values = bucket.values
                bounds = (min(values), max(values))
                ci, method = interval(values, stats.mean, stats.stdev, bounds)
                cached = self._live_ci[key] = (stats.count, now, ci, method)
            out[key] = {
                "count": stats.count,
                "mean": stats.mean,
                "ci95": list(cached[2]),
                "ci_method": cached[3],
            }
        return out
