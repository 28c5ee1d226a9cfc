"""The calibration section of the HTML report: agreement figures, the confusion matrix and the
disagreements of a :class:`~openevals.calibration.report.CalibrationReport`, as plain,
pre-formatted values for the report template; and its notebook summary (``_repr_html_``). The
generic report and notebook views never import this module:
:meth:`CalibrationReport.report_html` passes the section in ``sections=``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openevals.calibration.agreement import CategoricalAgreement, figure_label, figures_of
from openevals.report.html import ReportSection, estimate_text, json_text
from openevals.report.notebook import inline_html, interval_text, number_text

if TYPE_CHECKING:
    from openevals.calibration.report import CalibrationReport

__all__ = ["calibration_section", "calibration_summary_html"]

_MAX_DISAGREEMENTS = 200

_SUMMARY = """\
<div class="openevals-calibration">
<p><strong>CalibrationReport</strong>: judge key <code>{{ key }}</code> against labels
<code>{{ label }}</code> ({{ label_type }}, {{ n }} rows{% if failed %}, {{ failed }} judge
errors{% endif %})</p>
<table>
<thead><tr><th style="text-align:left">figure</th><th>value</th><th>{{ pct }}% CI</th></tr></thead>
<tbody>{% for f in figures %}
<tr><td style="text-align:left">{{ f.label }}</td><td>{{ f.value }}</td><td>{{ f.ci }}</td></tr>
{% endfor %}</tbody></table>
{% if confusion %}<p>Confusion (rows: human, columns: judge)</p>
<table><thead><tr><th></th>{% for l in labels %}<th>{{ l }}</th>{% endfor %}</tr></thead>
<tbody>{% for label, counts in confusion %}<tr><th>{{ label }}</th>
{% for c in counts %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>{% endif %}
<p>{{ disagreements }} disagreements{% if disagreements %} (<code>.disagreements</code>, most
severe first){% endif %}; full report: <code>.report_html(path)</code>.</p>
</div>
"""


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g") if isinstance(value, float) else str(value)


def calibration_section(report: CalibrationReport) -> ReportSection:
    """The calibration section of a :class:`~openevals.calibration.report.CalibrationReport`."""
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
    return ReportSection(
        kind="calibration",
        values=values,
        template=("openevals.calibration", "calibration.html.j2"),
        single=True,
    )


def calibration_summary_html(report: CalibrationReport) -> str:
    """The figures (with intervals) and the confusion matrix of a calibration report."""
    agreement = report.agreement
    figures = [
        {
            "label": figure_label(attr),
            "value": number_text(est.value) if est.value is not None else (est.note or "-"),
            "ci": interval_text((est.low, est.high)) if est.low is not None else "-",
        }
        for attr, est in figures_of(agreement)
    ]
    confusion: list[tuple[str, list[int]]] = []
    labels: list[str] = []
    if isinstance(agreement, CategoricalAgreement):
        labels = [str(x) for x in agreement.labels]
        confusion = [(label, list(row)) for label, row in zip(labels, agreement.confusion)]  # noqa: B905
    return inline_html(
        _SUMMARY,
        key=report.feedback_key,
        label=report.label,
        label_type=report.label_type,
        n=report.n,
        failed=len(report.failed),
        pct=round(agreement.confidence * 100),
        figures=figures,
        labels=labels,
        confusion=confusion,
        disagreements=len(report.disagreements),
    )
