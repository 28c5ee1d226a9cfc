"""Statistics of repeated trials (``evaluate(..., trials=...)``): pass@k, pass^k, flaky rows, and
how much of the noise comes from the app and how much from the judge.

A key's scores form a grid ``y[i, t, r]``: row ``i``, target trial ``t`` (of ``k``), judge repeat
``r`` (of ``m``); booleans count as 0/1.

* A trial *passes* when the mean of its judge repeats is above 0.5 (so a split vote fails). With
  ``c`` passing trials of ``n`` on a row, pass@j is ``1 - C(n - c, j) / C(n, j)`` (at least one of
  ``j`` trials passes; the unbiased estimator of Chen et al., 2021) and pass^j is ``C(c, j) /
  C(n, j)`` (all ``j`` pass), each averaged over the rows. A row is *flaky* when some trials pass
  and some fail; the flip rate is the share of flaky rows.
* The variance split is the balanced two-level (nested) random-effects ANOVA
  ``y = mu + row_i + app_it + judge_itr``: from the mean squares between repeats of a trial
  (``MS_judge``), between trials of a row (``MS_app``) and between rows (``MS_row``),
  ``var_judge = MS_judge``, ``var_app = (MS_app - MS_judge) / m`` and ``var_row = (MS_row -
  MS_app) / (k m)``, negative estimates set to 0. Their intervals resample rows (each keeps all
  its trials and repeats) with :func:`openevals._stats.bootstrap_weights`: every sum of squares is
  a weighted sum over rows. Rows missing a trial or a repeat (an error) are left out of the split.
  With one judge repeat the judge's part cannot be told from the app's: ``var_app`` is then
  their sum, and ``var_judge`` is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openevals._stats import Estimate, bootstrap_weights, estimate
from openevals.trust.labels import score_number

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "REPEAT",
    "TRIAL",
    "FlakyRow",
    "TrialStats",
    "cells_of",
    "pass_at",
    "pass_hat",
    "stats_of_run",
    "trial_stats",
    "variance_split",
]

TRIAL = "@trial"
"""Row ids of a trials run: ``<row id>@trial<t>``."""
REPEAT = "@repeat"
"""Evaluator names of judge repeats: ``<name>@repeat<j>`` (repeat 0 keeps the name)."""
_FLAKIEST = 20


def pass_at(passed: int, trials: int, j: int) -> float:
    """P(at least one of ``j`` trials passes), unbiased from ``passed`` of ``trials``."""
    if trials - passed < j:
        return 1.0
    return 1.0 - math.comb(trials - passed, j) / math.comb(trials, j)


def pass_hat(passed: int, trials: int, j: int) -> float:
    """P(all ``j`` trials pass), unbiased from ``passed`` of ``trials``."""
    return math.comb(passed, j) / math.comb(trials, j)


def variance_split(
    grid: NDArray[np.float64], *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Estimate]:
    """``{"row", "app", "judge"}`` variance components of a complete ``(rows, k, m)`` grid, each
    with its row-bootstrap interval (see the module docstring)."""
    import numpy as np

    rows, k, m = grid.shape
    trial_means = grid.mean(axis=2)
    row_means = trial_means.mean(axis=1)
    ss_judge = ((grid - trial_means[:, :, None]) ** 2).sum(axis=(1, 2))
    ss_app = m * ((trial_means - row_means[:, None]) ** 2).sum(axis=1)
    w = bootstrap_weights(rows, resamples, seed)
    total = w.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ms_judge = (w @ ss_judge) / (total * k * (m - 1)) if m > 1 else np.full(len(w), np.nan)
        ms_app = (w @ ss_app) / (total * (k - 1)) if k > 1 else np.full(len(w), np.nan)
        grand = (w @ row_means) / total
        between = (w @ row_means**2 - total * grand**2) / (total - 1)
        ms_row = k * m * between
    judge = ms_judge
    app = np.maximum(0.0, (ms_app - (ms_judge if m > 1 else 0.0)) / m)
    row = np.maximum(0.0, (ms_row - (ms_app if k > 1 else ms_judge)) / (k * m))
    return {
        "row": estimate(row, confidence, "undefined: fewer than 2 rows"),
        "app": estimate(app, confidence, "undefined: one trial per row"),
        "judge": estimate(judge, confidence, "undefined: one judge repeat per trial"),
    }


@dataclass(frozen=True)
class FlakyRow:
    """A row whose trials disagree: its id, share of passing trials (booleans) or the standard
    deviation of its trial means (numbers), and every trial's mean score."""

    id: str
    pass_rate: float | None
    spread: float
    trial_means: tuple[float, ...]


@dataclass(frozen=True)
class TrialStats:
    """The repeated-trials figures of one feedback key (see the module docstring)."""

    key: str
    kind: str
    rows: int
    trials: int
    judge_repeats: int
    mean: float
    pass_at: dict[int, float]
    pass_hat: dict[int, float]
    flip_rate: float
    flaky: int
    flakiest: tuple[FlakyRow, ...]
    variance: dict[str, Estimate]
    complete_rows: int
    notes: tuple[str, ...] = field(default=())

    @property
    def app_share(self) -> float | None:
        """The app's share of the within-row variance (app + judge); ``None`` when undefined."""
        app, judge = self.variance["app"].value, self.variance["judge"].value
        if app is None or judge is None or app + judge <= 0:
            return None
        return app / (app + judge)

    def as_dict(self) -> dict[str, Any]:
        return {
            **vars(self),
            "pass_at": dict(self.pass_at),
            "pass_hat": dict(self.pass_hat),
            "flakiest": [vars(r) | {"trial_means": list(r.trial_means)} for r in self.flakiest],
            "variance": {name: est.as_dict() for name, est in self.variance.items()},
            "notes": list(self.notes),
            "app_share": self.app_share,
        }

    def __str__(self) -> str:
        lines = [
            f"{self.key}: {self.rows} rows x {self.trials} trials x {self.judge_repeats} judge "
            f"repeats; mean {self.mean:.3f}"
        ]
        if self.pass_at:
            k = self.trials
            lines.append(
                f"  pass@1 {self.pass_at[1]:.3f}, pass@{k} {self.pass_at[k]:.3f}, "
                f"pass^{k} {self.pass_hat[k]:.3f}"
            )
        lines.append(f"  flaky rows {self.flaky} of {self.rows} (flip rate {self.flip_rate:.3f})")
        share = self.app_share
        lines.append(
            "  variance: "
            + ", ".join(f"{name} {est:.4f}" for name, est in self.variance.items())
            + ("" if share is None else f"; app share of the noise {share:.2f}")
        )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def trial_stats(
    key: str,
    cells: dict[str, dict[int, dict[int, float]]],
    *,
    trials: int,
    judge_repeats: int,
    boolean: bool,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> TrialStats:
    """The figures of one key from ``cells[row id][trial][repeat] = score``."""
    import numpy as np

    ids = list(cells)
    grid = np.full((len(ids), trials, judge_repeats), np.nan)
    for i, row_id in enumerate(ids):
        for t, repeats in cells[row_id].items():
            for r, value in repeats.items():
                if t < trials and r < judge_repeats:
                    grid[i, t, r] = value
    with np.errstate(invalid="ignore"):
        trial_means = np.nanmean(grid, axis=2)
    scored = ~np.isnan(trial_means)
    # Each row's scored trial means; the rows with at least two are the ones measured.
    row_means = {row_id: trial_means[i][scored[i]] for i, row_id in enumerate(ids)}
    usable = {row_id: means for row_id, means in row_means.items() if len(means) >= 2}
    flaky_rows: list[FlakyRow] = []
    for row_id, means in usable.items():
        if boolean:
            passed = int((means > 0.5).sum())
            rate: float | None = passed / len(means)
            flaky = 0 < passed < len(means)
        else:
            rate = None
            flaky = bool(means.max() > means.min())
        if flaky:
            spread = float(means.std()) if rate is None else 0.5 - abs(rate - 0.5)
            flaky_rows.append(FlakyRow(row_id, rate, spread, tuple(float(x) for x in means)))
    # (trials, passing trials) per row; pass@j and pass^j average the rows with j or more trials.
    passes = [(len(m), int((m > 0.5).sum())) for m in usable.values()] if boolean else []
    pass_at_j: dict[int, float] = {}
    pass_hat_j: dict[int, float] = {}
    for j in range(1, trials + 1):
        counts = [(n, c) for n, c in passes if n >= j]
        if counts:
            pass_at_j[j] = sum(pass_at(c, n, j) for n, c in counts) / len(counts)
            pass_hat_j[j] = sum(pass_hat(c, n, j) for n, c in counts) / len(counts)
    complete = ~np.isnan(grid).any(axis=(1, 2))
    notes = []
    if complete.sum() < len(ids):
        notes.append(
            f"{len(ids) - int(complete.sum())} row(s) with a failed trial or repeat are left out "
            "of the variance split"
        )
    if judge_repeats == 1:
        notes.append("one judge repeat: the app's variance includes the judge's")
    variance = (
        variance_split(grid[complete], resamples=resamples, seed=seed, confidence=confidence)
        if complete.sum() >= 2
        else {
            name: Estimate(None, note="fewer than 2 complete rows")
            for name in ("row", "app", "judge")
        }
    )
    flaky_rows.sort(key=lambda r: -r.spread)
    return TrialStats(
        key=key,
        kind="boolean" if boolean else "continuous",
        rows=len(usable),
        trials=trials,
        judge_repeats=judge_repeats,
        mean=float(np.nanmean(grid)) if scored.any() else math.nan,
        pass_at=pass_at_j,
        pass_hat=pass_hat_j,
        flip_rate=len(flaky_rows) / len(usable) if usable else 0.0,
        flaky=len(flaky_rows),
        flakiest=tuple(flaky_rows[:_FLAKIEST]),
        variance=variance,
        complete_rows=int(complete.sum()),
        notes=tuple(notes),
    )


def cells_of(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], bool]]:
    """Per feedback key of a trials run: ``(cells[row][trial][repeat] = score, all boolean)``."""
    out: dict[str, tuple[dict[str, Any], bool]] = {}
    for record in rows:
        trial = (record.get("extra") or {}).get("trial") or {}
        row_id = str(trial.get("row", record.get("id")))
        index = int(trial.get("index", 0))
        for name, entry in (record.get("evaluations") or {}).items():
            if entry.get("status") != "success":
                continue
            _, _, suffix = name.rpartition(REPEAT)
            repeat = int(suffix) if REPEAT in name and suffix.isdigit() else 0
            for result in entry.get("results") or ():
                number = score_number(result.get("score"))
                if number is None:
                    continue
                key = str(result.get("key"))
                cells, boolean = out.get(key, ({}, True))
                cells.setdefault(row_id, {}).setdefault(index, {})[repeat] = number
                out[key] = (cells, boolean and isinstance(result.get("score"), bool))
    return out


def stats_of_run(
    result: Any, *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, TrialStats]:
    """Every key's :class:`TrialStats` of a run made with ``trials=``."""
    shape = (result.summary or {}).get("trials")
    if not shape:
        raise ValueError(
            "this run has no trials: run evaluate(..., trials=k) or trials=Trials(k, "
            "judge_repeats=m) to measure how stable the scores are"
        )
    return {
        key: trial_stats(
            key,
            cells,
            trials=shape["trials"],
            judge_repeats=shape["judge_repeats"],
            boolean=boolean,
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
        for key, (cells, boolean) in cells_of(result.rows).items()
    }
