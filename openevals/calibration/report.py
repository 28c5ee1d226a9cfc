"""The calibration report: agreement with human labels, and where the judge disagreed.

:func:`build_report` joins a batch run's results with the human labels, computes the agreement
figures that fit the label type (:mod:`openevals.calibration.agreement`) and lists the
disagreements, most severe first:

* boolean labels: a failure the judge passed (severity 1.0) ranks above a pass the judge failed
  (0.5): the first lets a bad output through;
* ordered choices: the distance between the two labels, as a fraction of the scale;
* unordered categories: 1.0 for every disagreement;
* continuous labels: the absolute difference, for rows where it exceeds ``tolerance``.

Rows on which the judge failed (an error, never a score) are left out of the figures and listed
in :attr:`CalibrationReport.failed`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.calibration.agreement import (
    CategoricalAgreement,
    ContinuousAgreement,
    categorical_agreement,
    continuous_agreement,
    figure_label,
    figures_of,
)
from openevals.calibration.labels import LabelledData, LabelledRow, LabelType
from openevals.evaluation.redact import Redactor

if TYPE_CHECKING:
    from openevals.calibration.run import Settings
    from openevals.evaluation.result import EvaluationResult

__all__ = [
    "CalibrationReport",
    "FailedRow",
    "JudgeFailedError",
    "JudgeScoresError",
    "JudgedRow",
    "build_report",
]


class _WithResult(Exception):
    def __init__(self, message: str, result: EvaluationResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class JudgeFailedError(_WithResult, RuntimeError):
    """The judge failed on every labelled row, so there is nothing to compare.

    The run itself is not lost: ``result`` holds its :class:`EvaluationResult` (every row with
    its recorded error), as the ``output=`` file does.
    """


class JudgeScoresError(_WithResult, ValueError):
    """No judged row can be compared with the labels (a score of the wrong type, or no result
    under ``feedback_key``). Raised after the run; ``result`` holds the run's
    :class:`EvaluationResult`, so nothing the judge produced is lost."""


DEFAULT_TOLERANCE = 0.2
_UNUSABLE = "not comparable: "


@dataclass(frozen=True)
class JudgedRow:
    """One labelled row with the judge's verdict."""

    index: int
    id: str
    inputs: Any
    outputs: Any
    reference_outputs: Any
    human: Any
    judge: Any
    reasoning: str | None
    """The judge's reasoning (its result's ``comment``)."""
    human_reason: str | None
    severity: float
    """0 when judge and human agree (within ``tolerance`` for continuous labels)."""

    @property
    def agrees(self) -> bool:
        return self.severity == 0.0


@dataclass(frozen=True)
class FailedRow:
    """A labelled row the judge could not score: the error, never a score."""

    index: int
    id: str
    error: str


@dataclass(frozen=True)
class CalibrationReport:
    """How well a judge agrees with human labels (what :func:`~openevals.calibration.calibrate`
    returns).

    Attributes:
        label, label_type: the label column and its type.
        judge_scores: the judge's score type (``"boolean"``, ``"continuous"``, ``"choices"``, or
            ``None`` when the judge does not declare it).
        feedback_key: the judge result that was compared with the labels.
        agreement: the figures, each an :class:`~openevals._stats.Estimate` with its bootstrap
            interval: :class:`CategoricalAgreement` or :class:`ContinuousAgreement`.
        rows: every scored row with both verdicts, in data order.
        disagreements: the rows where judge and human differ, most severe first.
        failed: rows the judge could not score (left out of the figures).
        result: the batch run's :class:`~openevals.evaluation.result.EvaluationResult`.
        tolerance: for continuous labels, the difference above which a row is a disagreement.
    """

    label: str
    label_type: LabelType
    judge_scores: str | None
    feedback_key: str
    agreement: CategoricalAgreement | ContinuousAgreement
    rows: tuple[JudgedRow, ...]
    disagreements: tuple[JudgedRow, ...]
    failed: tuple[FailedRow, ...]
    result: EvaluationResult = field(repr=False)
    tolerance: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """The number of rows compared."""
        return len(self.rows)

    def __str__(self) -> str:
        return format_report(self)

    def to_dict(self) -> dict[str, Any]:
        """The figures, the confusion matrix, the disagreements and every compared row's two
        verdicts (``rows``: what a corrected estimate reads back) as plain JSON-ready data."""
        agreement = self.agreement
        figures = {name: est.as_dict() for name, est in figures_of(agreement)}
        out: dict[str, Any] = {
            "label": self.label,
            "label_type": self.label_type,
            "judge_scores": self.judge_scores,
            "feedback_key": self.feedback_key,
            "n": self.n,
            "confidence": agreement.confidence,
            "figures": figures,
            "notes": list(self.notes) + list(agreement.notes),
            "disagreements": [_row_dict(r) for r in self.disagreements],
            "rows": [{"id": r.id, "human": r.human, "judge": r.judge} for r in self.rows],
            "failed": [{"index": f.index, "id": f.id, "error": f.error} for f in self.failed],
        }
        if isinstance(agreement, CategoricalAgreement):
            out["labels"] = list(agreement.labels)
            out["confusion"] = [list(row) for row in agreement.confusion]
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        return out

    def report_html(
        self, path: str | os.PathLike[str], *, title: str = "openevals calibration"
    ) -> Path:
        """Write the HTML report of the run with its calibration section; returns the path."""
        from openevals.calibration.report_section import calibration_section
        from openevals.report.html import render_report

        sections = [*self.result.report_sections(), calibration_section(self)]
        page = render_report(self.result, title=title, sections=sections)
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, "utf-8")
        return target

    def _repr_html_(self) -> str:
        """The figures and the confusion matrix, as a notebook shows the report."""
        from openevals.calibration.report_section import calibration_summary_html

        return calibration_summary_html(self)


_ROW_FIELDS = ("index", "id", "human", "judge", "severity", "reasoning", "human_reason")
_SEEN = ("inputs", "outputs", "reference_outputs")
"""A disagreement in ``to_dict()``: its verdicts, then what the judge saw."""


def _row_dict(row: JudgedRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in (*_ROW_FIELDS, *_SEEN)}


# --------------------------------------------------------------------------- building


def severity(data: LabelledData, human: Any, judge: Any, tolerance: float) -> float:
    """How far the judge is from the human on one row (0 = agreement); see the module doc."""
    if data.label_type == "continuous":
        gap = abs(float(judge) - float(human))
        # A gap that only floating point puts above the tolerance (0.8 - 0.6 at 0.2) is within it.
        if gap <= tolerance or math.isclose(gap, tolerance, rel_tol=1e-9, abs_tol=1e-12):
            return 0.0
        return gap
    if human == judge and isinstance(human, bool) == isinstance(judge, bool):
        return 0.0
    if data.label_type == "boolean":
        return 1.0 if human is False else 0.5
    if data.ordered and len(data.labels) > 1:
        return abs(data.labels.index(human) - data.labels.index(judge)) / (len(data.labels) - 1)
    return 1.0


def _pick(results: list[Mapping[str, Any]], key: str | None, evaluator: str) -> Mapping[str, Any]:
    if key is not None:
        for result in results:
            if result.get("key") == key:
                return result
        raise ValueError(
            f"the judge {show(evaluator)} returned no result with feedback key {show(key)}; its "
            f"keys: {show([r.get('key') for r in results])}. Pass `feedback_key=` with one of them"
        )
    if len(results) != 1:
        raise ValueError(
            f"the judge {show(evaluator)} returned {len(results)} results "
            f"({show([r.get('key') for r in results])}); pass `feedback_key=` to say which one to "
            "compare with the labels"
        )
    return results[0]


def judged_rows(
    data: LabelledData, result: EvaluationResult, evaluator: str, settings: Settings
) -> tuple[list[JudgedRow], list[FailedRow]]:
    """Join the run's results with the labels (``data`` rows absent from ``result`` are skipped)."""
    labelled: dict[str, LabelledRow] = data.by_id()
    # The run's records are already cleaned of secrets; the human reasons never went through the
    # runner, so they are cleaned here, the same way, before any sink (str, repr, to_dict, HTML,
    # few-shot examples) can show them.
    redactor = Redactor()
    judged: list[JudgedRow] = []
    failed: list[FailedRow] = []
    for rec in result.rows:
        row = labelled.get(rec["id"])
        entry = rec.get("evaluations", {}).get(evaluator)
        if row is None or entry is None:
            continue
        if entry.get("status") != "success":
            error = entry.get("error") or {}
            failed.append(
                FailedRow(row.index, row.id, f"{error.get('type')}: {error.get('message')}")
            )
            continue
        try:
            found = _pick(list(entry.get("results") or []), settings.feedback_key, evaluator)
            score = data.check_score(found.get("score"), row)
        except ValueError as exc:
            # Found after the model calls: the row is reported as not comparable, never dropped,
            # and the run goes on to its report (build_report raises if no row is comparable).
            failed.append(FailedRow(row.index, row.id, f"{_UNUSABLE}{exc}"))
            continue
        comment = found.get("comment")
        judged.append(
            JudgedRow(
                index=row.index,
                id=row.id,
                inputs=rec.get("inputs"),
                outputs=rec.get("outputs"),
                reference_outputs=rec.get("reference_outputs"),
                human=row.label,
                judge=score,
                reasoning=None if comment is None else str(comment),
                human_reason=None if row.reason is None else redactor.values(row.reason),
                severity=severity(data, row.label, score, float(settings.tolerance)),
            )
        )
    judged.sort(key=lambda r: r.index)
    return judged, failed


def agreement_of(
    data: LabelledData, rows: list[JudgedRow], settings: Settings
) -> CategoricalAgreement | ContinuousAgreement:
    """The agreement figures of ``rows`` matched to the label type (the bootstrap of
    ``settings``)."""
    resamples, seed, confidence = settings.resamples, settings.seed, settings.confidence
    human = [r.human for r in rows]
    judge = [r.judge for r in rows]
    if len(rows) < 2:
        raise ValueError(
            f"only {len(rows)} labelled row(s) were scored by the judge; agreement needs at "
            "least 2 (see the failed rows for the judge's errors)"
        )
    if data.label_type == "continuous":
        return continuous_agreement(
            [float(h) for h in human],
            [float(j) for j in judge],
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
    return categorical_agreement(
        human,
        judge,
        labels=list(data.labels),
        ordered=data.ordered,
        fail_label=False if data.label_type == "boolean" else None,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


def build_report(
    data: LabelledData, result: EvaluationResult, evaluator: str, settings: Settings
) -> CalibrationReport:
    """The report of the judge ``evaluator``'s run over ``data``."""
    judged, failed = judged_rows(data, result, evaluator, settings)
    unusable = [f for f in failed if f.error.startswith(_UNUSABLE)]
    if not judged and unusable:
        raise JudgeScoresError(unusable[0].error[len(_UNUSABLE) :], result)
    if not judged and failed:
        raise JudgeFailedError(
            f"the judge failed on every labelled row ({len(failed)}); first error: "
            f"{failed[0].error}",
            result,
        )
    agreement = agreement_of(data, judged, settings)
    disagreements = sorted(
        (r for r in judged if not r.agrees), key=lambda r: (-r.severity, r.index)
    )
    notes = []
    if len(failed) > len(unusable):
        notes.append(f"{len(failed) - len(unusable)} row(s) left out: the judge failed on them")
    if unusable:
        notes.append(
            f"{len(unusable)} row(s) left out: their judge result cannot be compared with the "
            f"labels (see `failed`); first: {unusable[0].error[len(_UNUSABLE) :]}"
        )
    key = settings.feedback_key
    if key is None:
        first = next((r for r in result.rows if r.get("evaluations", {}).get(evaluator)), None)
        results = (first or {}).get("evaluations", {}).get(evaluator, {}).get("results") or []
        key = str(results[0].get("key")) if results else evaluator
    return CalibrationReport(
        label=data.label,
        label_type=data.label_type,
        judge_scores=data.judge.kind,
        feedback_key=key,
        agreement=agreement,
        rows=tuple(judged),
        disagreements=tuple(disagreements),
        failed=tuple(failed),
        result=result,
        tolerance=float(settings.tolerance) if data.label_type == "continuous" else None,
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- text


def _cell(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) else str(value)


def _clip(text: Any, limit: int = 90) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_report(report: CalibrationReport, *, max_disagreements: int = 10) -> str:
    """The report as text (what ``print(report)`` shows)."""
    agreement = report.agreement
    pct = round(agreement.confidence * 100)
    lines = [
        f"Calibration of judge key {show(report.feedback_key)} against labels {show(report.label)} "
        f"({report.label_type}, {report.n} rows"
        + (f", {len(report.failed)} judge errors" if report.failed else "")
        + ")",
        f"Agreement ({pct}% bootstrap CI):",
    ]
    for attr, est in figures_of(agreement):
        why = f"  ({est.note})" if est.value is None and est.note else ""
        lines.append(f"  {figure_label(attr):<22}{est}{why}")
    lines += [f"  note: {note}" for note in (*report.notes, *agreement.notes)]
    if isinstance(agreement, CategoricalAgreement):
        labels = [_cell(x) for x in agreement.labels]
        width = max(6, *(len(x) for x in labels)) + 1
        lines.append("Confusion (rows: human, columns: judge):")
        lines.append(" " * (width + 2) + "".join(x.rjust(width) for x in labels))
        for label, counts in zip(labels, agreement.confusion, strict=True):
            lines.append("  " + label.ljust(width) + "".join(str(c).rjust(width) for c in counts))
    shown = report.disagreements[:max_disagreements]
    lines.append(
        f"Disagreements: {len(report.disagreements)}"
        + (" (most severe first)" if report.disagreements else "")
    )
    for row in shown:
        lines.append(
            f"  row {row.index} [{row.id}] human={_cell(row.human)} judge={_cell(row.judge)} "
            f"severity={row.severity:.2f}"
        )
        if row.reasoning:
            lines.append(f"    judge: {_clip(row.reasoning)}")
        if row.human_reason:
            lines.append(f"    human: {_clip(row.human_reason)}")
    if len(report.disagreements) > len(shown):
        lines.append(f"  ... and {len(report.disagreements) - len(shown)} more")
    return "\n".join(lines)
