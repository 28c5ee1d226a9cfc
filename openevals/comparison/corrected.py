"""``compare(..., calibration=)``: the judge-corrected difference of one key.

A paired difference needs human labels on both runs' outputs: ``calibration`` is
``{"baseline": ..., "candidate": ...}``, each side a calibration of the judge on that run's
outputs (what :func:`~openevals.calibration.calibrate` returns, or its ``--json`` file). When
both sides were labelled on the same row ids, the estimate is prediction-powered inference on the
paired differences (:func:`openevals.trust.ppi.ppi_mean` on ``human_c - human_b`` with the
judge's differences); otherwise one rectifier per side
(:func:`openevals.trust.ppi.ppi_difference`). The key's verdict then uses the corrected
interval and its p-value (Holm-adjusted with the other keys').
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.trust.labels import CalibrationData, as_calibration
from openevals.trust.ppi import PPIEstimate, ppi_difference, ppi_mean

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["PairCalibration", "corrected_difference", "corrected_verdict", "pair_calibration"]

_SIDES = ("baseline", "candidate")


@dataclass(frozen=True)
class PairCalibration:
    """The two sides' calibrations, checked, and the key they calibrate (``None``: the one key
    both runs have, decided when the runs are read)."""

    baseline: CalibrationData
    candidate: CalibrationData
    key: str | None


def pair_calibration(calibration: Any) -> PairCalibration | None:
    """``compare``'s ``calibration=`` option, checked before any run is read."""
    if calibration is None:
        return None
    if not isinstance(calibration, Mapping) or set(calibration) != set(_SIDES):
        raise TypeError(
            "`calibration` must be {'baseline': ..., 'candidate': ...}: a paired difference "
            "needs human labels on both runs' outputs (each a calibrate() report or its --json "
            f"file); got {show(calibration)}"
        )
    base, cand = (as_calibration(calibration[side]) for side in _SIDES)
    keys = {k for k in (base.feedback_key, cand.feedback_key) if k is not None}
    if len(keys) > 1:
        raise ValueError(
            f"the baseline and candidate calibrations are of different keys: {show(sorted(keys))}"
        )
    return PairCalibration(base, cand, next(iter(keys), None))


def corrected_difference(
    pair: PairCalibration, judge_differences: NDArray[np.float64], confidence: float
) -> PPIEstimate:
    """The corrected mean of candidate minus baseline (see the module docstring)."""
    base, cand = pair.baseline, pair.candidate
    if base.ids and cand.ids and set(base.ids) == set(cand.ids) and len(set(base.ids)) == base.n:
        where = {row_id: i for i, row_id in enumerate(cand.ids)}
        order = [where[row_id] for row_id in base.ids]
        human = [cand.human[j] - b for j, b in zip(order, base.human, strict=True)]
        judge = [cand.judge[j] - b for j, b in zip(order, base.judge, strict=True)]
        return ppi_mean(human, judge, judge_differences, confidence=confidence)
    return ppi_difference(
        (base.human, base.judge), (cand.human, cand.judge), judge_differences, confidence=confidence
    )


def corrected_verdict(
    corrected: PPIEstimate, adjusted: float, alpha: float, min_effect: float, higher: bool
) -> str:
    """The verdict of a key decided on its corrected difference (``adjusted``: its Holm p)."""
    if adjusted < alpha and corrected.value:
        return "improved" if (corrected.value > 0) == higher else "regressed"
    normal = NormalDist()
    detectable = (normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(0.8)) * corrected.se
    return "underpowered" if detectable > min_effect else "no detectable change"
