"""The calibration section of the HTML report: agreement figures, the confusion matrix and the
disagreements of a :class:`~openevals.calibration.report.CalibrationReport`, as plain,
pre-formatted values for the report template. The generic report never imports this module:
:meth:`CalibrationReport.report_html` passes the section in ``sections=``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openevals.report.html import ReportSection, estimate_text, json_text

if TYPE_CHECKING:
    from openevals.calibration.report import CalibrationReport

__all__ = ["calibration_section"]

_MAX_DISAGREEMENTS = 200


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g") if isinstance(value, float) else str(value)


def calibration_section(report: CalibrationReport) -> ReportSection:
    """The calibration section of a :class:`~openevals.calibration.report.CalibrationReport`."""
    from openevals.calibration.agreement import CategoricalAgreement
    from openevals.calibration.report import figure_label, figures_of

    agreement = report.agreement
    figures = [
        {"name": figure_label(attr), **estimate_text(est)} for attr, est in figures_of(agreement)
    ]
    confusion = None
    if isinstance(agreement, CategoricalAgreement):
        peak = max((c for row in agreement.confusion for c in row), default=0) or 1
        confusion = {
            "labels": [_label(x) for x in agreement.labels],
            "rows": [
                {
                    "label": _label(label),
                    "cells": [
                        {
                            "count": count,
                            "diagonal": i == j,
                            "shade": f"{0.08 + 0.6 * count / peak:.2f}",
                        }
                        for j, count in enumerate(row)
                    ],
                }
                for i, (label, row) in enumerate(
                    zip(agreement.labels, agreement.confusion, strict=True)
                )
            ],
        }
    disagreements = [
        {
            "index": row.index,
            "id": row.id,
            "human": _label(row.human),
            "judge": _label(row.judge),
            "severity": f"{row.severity:.2f}",
            "reasoning": row.reasoning or "",
            "human_reason": row.human_reason or "",
            "inputs": json_text(row.inputs),
            "outputs": json_text(row.outputs),
        }
        for row in report.disagreements[:_MAX_DISAGREEMENTS]
    ]
    values = {
        "label": report.label,
        "label_type": report.label_type,
        "feedback_key": report.feedback_key,
        "n": report.n,
        "confidence": round(agreement.confidence * 100),
        "figures": figures,
        "notes": [*report.notes, *agreement.notes],
        "confusion": confusion,
        "disagreements": disagreements,
        "disagreements_total": len(report.disagreements),
        "failed": [{"index": f.index, "id": f.id, "error": f.error} for f in report.failed],
    }
    return ReportSection(kind="calibration", values=values)
