"""The optional sections of the HTML report: calibration against human labels, and pairwise
comparison of systems. Each function turns its object into plain, pre-formatted values for the
template (``templates/report.html.j2``, autoescaped); nothing here writes HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["calibration_section", "pairwise_sections"]

_MAX_DISAGREEMENTS = 200


def _est(estimate: Any, digits: int = 3) -> dict[str, str]:
    """An :class:`~openevals._stats.Estimate` as text: value, interval and note."""
    if estimate is None or estimate.value is None:
        note = getattr(estimate, "note", None) or ""
        return {"value": "n/a", "ci": "-", "note": note}
    ci = "-"
    if estimate.low is not None and estimate.high is not None:
        ci = f"[{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"
    return {"value": f"{estimate.value:.{digits}f}", "ci": ci, "note": estimate.note or ""}


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "g") if isinstance(value, float) else str(value)


def _text(value: Any) -> str:
    from openevals.evaluation.report import _json_text

    return _json_text(value)


def calibration_section(report: Any) -> dict[str, Any]:
    """The calibration section of a :class:`~openevals.calibration.report.CalibrationReport`."""
    from openevals.calibration.agreement import CategoricalAgreement
    from openevals.calibration.report import figure_label, figures_of

    agreement = report.agreement
    figures = [{"name": figure_label(attr), **_est(est)} for attr, est in figures_of(agreement)]
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
            "inputs": _text(row.inputs),
            "outputs": _text(row.outputs),
        }
        for row in report.disagreements[:_MAX_DISAGREEMENTS]
    ]
    return {
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


def pairwise_sections(pairwise: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One section per pairwise evaluator: the ranking and the win-rate matrix."""
    sections = []
    for name, summary in pairwise.items():
        # Several groups that never met: one ranking per group, ranks labelled by group.
        grouped = summary.ranking is None and bool(summary.group_rankings)
        rankings = [summary.ranking] if summary.ranking is not None else summary.group_rankings
        order = [s.system for ranking in rankings for s in ranking.systems]
        order += [s for s in summary.systems if s not in order]
        ranked = []
        for number, ranking in enumerate(rankings, 1):
            for s in ranking.systems:
                low, high = s.rank_low, s.rank_high
                ranked.append(
                    {
                        "rank": f"{s.rank} (group {number})" if grouped else s.rank,
                        "system": s.system,
                        "rank_ci": "-" if low is None else f"{low}–{high}",
                        **_est(s.strength),
                    }
                )
        matrix = []
        for a in order:
            cells = []
            for b in order:
                est = None if a == b else summary.win_rate(a, b)
                cell = _est(est, 2) if est is not None else None
                shade = f"{0.08 + 0.6 * est.value:.2f}" if est and est.value is not None else "0"
                cells.append({"self": a == b, "rate": cell, "shade": shade})
            matrix.append({"system": a, "cells": cells})
        sections.append(
            {
                "evaluator": name,
                "comparisons": summary.comparisons,
                "errors": summary.errors,
                "flip": _est(summary.order_flip_rate),
                "flips": summary.order_flips,
                "judged_twice": summary.judged_twice,
                "inconsistent": summary.inconsistent,
                "ranking": ranked,
                "systems": order,
                "matrix": matrix,
                "notes": list(summary.notes),
            }
        )
    return sections
