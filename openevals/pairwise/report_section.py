"""The pairwise section of the HTML report: per pairwise evaluator of a run with ``systems=``,
the ranking of systems and the win-rate matrix, as plain values for the report template. The
generic report does not import this module: an
:class:`~openevals.evaluation.result.EvaluationResult` hands its pairwise sections to it
(``report_sections()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openevals.report.html import ReportSection, estimate_text

__all__ = ["pairwise_sections"]


def pairwise_sections(pairwise: Mapping[str, Any]) -> list[ReportSection]:
    """One section per pairwise evaluator (name -> :class:`~openevals.evaluation.pairwise.
    PairwiseSummary`): the ranking and the win-rate matrix."""
    sections = []
    for name, summary in pairwise.items():
        # Several groups that never met: one ranking per group, ranks labelled by group.
        grouped = summary.ranking is None and bool(summary.group_rankings)
        rankings = [summary.ranking] if summary.ranking is not None else summary.group_rankings
        order = [s.system for ranking in rankings for s in ranking.systems]
        order += [s for s in summary.systems if s not in order]
        ranked = [
            {
                "rank": f"{s.rank} (group {number})" if grouped else s.rank,
                "system": s.system,
                "rank_ci": "-" if s.rank_low is None else f"{s.rank_low}–{s.rank_high}",
                **estimate_text(s.strength),
            }
            for number, ranking in enumerate(rankings, 1)
            for s in ranking.systems
        ]
        matrix = [{"system": a, "cells": [_cell(summary, a, b) for b in order]} for a in order]
        sections.append(
            ReportSection(
                kind="pairwise",
                template=("openevals.pairwise", "pairwise.html.j2"),
                values={
                    "evaluator": name,
                    "comparisons": summary.comparisons,
                    "errors": summary.errors,
                    "flip": estimate_text(summary.order_flip_rate),
                    "flips": summary.order_flips,
                    "judged_twice": summary.judged_twice,
                    "inconsistent": summary.inconsistent,
                    "ranking": ranked,
                    "systems": order,
                    "matrix": matrix,
                    "notes": list(summary.notes),
                },
            )
        )
    return sections


def _cell(summary: Any, a: Any, b: Any) -> dict[str, Any]:
    """The win-rate matrix's cell of ``a`` against ``b`` (shaded by the rate)."""
    est = None if a == b else summary.win_rate(a, b)
    cell = estimate_text(est, 2) if est is not None else None
    shade = f"{0.08 + 0.6 * est.value:.2f}" if est and est.value is not None else "0"
    return {"self": a == b, "rate": cell, "shade": shade}
