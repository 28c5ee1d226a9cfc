"""Judge-corrected means of a run: the judge's figure with its measured error removed.

:func:`correct` joins a run's judge scores for one feedback key with a calibration (human labels
and the judge's scores on some rows) and returns a copy of the run whose aggregates carry the
corrected figure beside the raw one, under ``aggregates[key]["corrected"]``; the summary table,
the HTML report, ``to_pandas(aggregates=True)`` and ``to_dict()`` show it from there.
:meth:`EvaluationResult.corrected <openevals.evaluation.result.EvaluationResult.corrected>` is the
method form. The statistics are those of :mod:`openevals.trust.ppi`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.trust.labels import CalibrationData, as_calibration, score_number
from openevals.trust.ppi import PPIEstimate, check_confidence, ppi_mean

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = ["CorrectedMean", "correct", "key_scores"]


@dataclass(frozen=True)
class CorrectedMean:
    """A run's judge mean for one key, raw and corrected by human labels.

    ``raw`` is the judge's mean over the run's ``n`` scored rows (its normal interval treats
    the judge as if it were right); ``corrected`` the prediction-powered estimate
    (:class:`~openevals.trust.ppi.PPIEstimate`) whose interval also carries the uncertainty of
    the judge's error, measured on ``corrected.n_labelled`` human labels.
    """

    key: str
    raw: float
    corrected: PPIEstimate

    @property
    def shift(self) -> float:
        """corrected minus raw: how far the judge's own figure was off."""
        return self.corrected.value - self.raw

    def as_dict(self) -> dict[str, Any]:
        c = self.corrected
        return {
            "mean": c.value,
            "ci": [c.low, c.high],
            "confidence": c.confidence,
            "raw_mean": self.raw,
            "shift": self.shift,
            "labelled": c.n_labelled,
            "lam": c.lam,
            "se": c.se,
            "method": c.method,
        }

    def __str__(self) -> str:
        c = self.corrected
        return (
            f"{self.key}: judge {self.raw:.3f} -> corrected {c:.3f} "
            f"({round(c.confidence * 100)}% CI, {c.n_labelled} labels, {c.method}, "
            f"lam={c.lam:.2f})"
        )


def key_scores(result: EvaluationResult, key: str) -> list[float]:
    """Every numeric score (booleans as 0/1) the run's rows have under ``key``."""
    scores = (
        score_number(found.get("score"))
        for row in result.rows
        for entry in (row.get("evaluations") or {}).values()
        if entry.get("status") == "success"
        for found in entry.get("results") or ()
        if found.get("key") == key
    )
    return [number for number in scores if number is not None]


def _key(result: EvaluationResult, data: CalibrationData, key: str | None) -> str:
    if key is not None and not isinstance(key, str):
        raise TypeError(f"`key` must be a feedback key (str) or None; got {show(key)}")
    chosen = key or data.feedback_key
    scored = sorted(result.aggregates)
    if chosen is None:
        if len(scored) != 1:
            raise ValueError(
                "the calibration does not name its feedback key; pass `key=` with one of the "
                f"run's keys: {scored}"
            )
        chosen = scored[0]
    if chosen not in result.aggregates:
        raise ValueError(
            f"the run has no feedback key {show(chosen)} to correct; its keys: {scored}"
            + ("" if key else " (the key comes from the calibration; pass `key=` to choose)")
        )
    return chosen


def correct(
    result: EvaluationResult,
    calibration: Any,
    *,
    key: str | None = None,
    confidence: float = 0.95,
    tuned: bool = True,
) -> EvaluationResult:
    """A copy of ``result`` with the judge-corrected mean of ``key`` beside the raw one.

    Args:
        result: the run; its scores under ``key`` are the judge's on every row.
        calibration: human labels with the same judge's scores on those rows: what
            :func:`~openevals.calibration.calibrate` returns, the file ``openevals calibrate
            --json`` writes, or :class:`~openevals.trust.labels.CalibrationData`. The labelled
            rows should be a random sample of the rows the run scores (or of their source).
        key: the feedback key to correct (default: the calibration's).
        confidence: the interval's coverage.
        tuned: PPI++ (default) or plain PPI (``False``).

    Raises:
        TypeError / ValueError: a calibration of another kind, categorical labels, a key the
            run does not have, fewer than 2 scored rows.
    """
    data = as_calibration(calibration)
    confidence = check_confidence(confidence)
    chosen = _key(result, data, key)
    scores = key_scores(result, chosen)
    if len(scores) < 2:
        raise ValueError(
            f"key {show(chosen)} has {len(scores)} numeric score(s) in the run; a corrected "
            "mean needs at least 2"
        )
    estimate = ppi_mean(data.human, data.judge, scores, confidence=confidence, tuned=tuned)
    found = CorrectedMean(key=chosen, raw=sum(scores) / len(scores), corrected=estimate)
    aggregates = copy.deepcopy(result.aggregates)
    aggregates[chosen]["corrected"] = found.as_dict()
    return replace(result, aggregates=aggregates, corrections={**result.corrections, chosen: found})
