"""The result of a batch evaluation: :class:`EvaluationResult`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openevals.evaluation.report import ReportSection

__all__ = ["EvaluationInterrupted", "EvaluationResult"]


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


@dataclass
class EvaluationResult:
    """What :func:`~openevals.evaluation.evaluate` returns.

    Attributes:
        rows: one dict per data row, in data order: ``id``, ``index``, ``inputs``, ``outputs``,
            ``reference_outputs``, ``extra`` (other columns), ``group`` (with ``group_by``),
            ``target`` (with a target: ``status``, ``elapsed_sec``, ``usage``, ``error``),
            ``status`` (``"success"`` or ``"error"`` if any evaluator failed) and ``evaluations``:
            evaluator name -> ``{status, results, error, elapsed_sec, usage, cost_usd, model,
            cache, resumed}``. ``results`` are :class:`~openevals.types.EvaluatorResult` dicts;
            ``error`` is ``{"type", "message"}`` and never a score.
        aggregates: feedback key -> statistics (``count``, ``sum``, ``mean``, ``median``,
            ``min``, ``max``, ``stdev``, ``ci95``, ``ci_method``; booleans also ``rate``).
        by_group: with ``group_by``: ``{"per_group", "micro", "macro"}`` (graphrag-eval layout,
            see :meth:`openevals.evaluation.aggregates.ScoreAggregator.by_group`), else ``None``.
        batch_metrics: dataset-level metrics from ``batch_metrics=`` (name -> ``{"value", ...}``).
        summary: counts, errors per evaluator and type, cache hits, token usage and estimated cost
            per evaluator, elapsed time.
        interrupted: the run was stopped (Ctrl-C) before every row finished.
    """

    rows: list[dict[str, Any]]
    aggregates: dict[str, dict[str, Any]]
    summary: dict[str, Any]
    by_group: dict[str, Any] | None = None
    batch_metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluators: list[str] = field(default_factory=list)
    interrupted: bool = False
    histograms: dict[str, list[float]] = field(default_factory=dict, repr=False)
    pairwise: dict[str, Any] = field(default_factory=dict, repr=False)
    """With ``systems=``: evaluator name -> :class:`~openevals.evaluation.pairwise.PairwiseSummary`."""

    def to_jsonl(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """The rows as JSON Lines: written to ``path`` (returns ``None``), or returned as a str."""
        if path is None:
            return "".join(_dump(row) + "\n" for row in self.rows)
        with Path(path).open("w", encoding="utf-8") as fh:
            for row in self.rows:
                fh.write(_dump(row) + "\n")
        return None

    def to_dict(self) -> dict[str, Any]:
        """Everything but the rows, as plain JSON-ready data."""
        return {
            "aggregates": self.aggregates,
            "by_group": self.by_group,
            "batch_metrics": self.batch_metrics,
            "summary": self.summary,
            "evaluators": self.evaluators,
            "interrupted": self.interrupted,
            **(
                {"pairwise": {k: v.to_dict() for k, v in self.pairwise.items()}}
                if self.pairwise
                else {}
            ),
        }

    def report_html(
        self, path: str | os.PathLike[str], *, title: str = "openevals report", max_rows: int = 5000
    ) -> Path:
        """Write a self-contained HTML report to ``path`` and return the path.

        The page has the summary, a histogram per score, per-group bars (with ``group_by``) and a
        filterable table of up to ``max_rows`` rows (rows with errors first).
        """
        from openevals.evaluation.report import render_report

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_report(self, title=title, max_rows=max_rows), encoding="utf-8")
        return target

    def report_sections(self) -> list[ReportSection]:
        """The optional report sections this result brings: the pairwise ranking and win-rate
        matrix of each pairwise evaluator (a run with ``systems=``); else none."""
        if not self.pairwise:
            return []
        from openevals.pairwise.report_section import pairwise_sections

        return pairwise_sections(self.pairwise)

    def __repr__(self) -> str:
        keys = ", ".join(
            f"{k}={v['mean']:.3f}" for k, v in self.aggregates.items() if v.get("count")
        )
        state = " interrupted" if self.interrupted else ""
        return (
            f"<EvaluationResult{state} rows={len(self.rows)} "
            f"errors={self.summary.get('pairs', {}).get('failed', 0)} {keys}>"
        )


class EvaluationInterrupted(KeyboardInterrupt):
    """Raised by :func:`~openevals.evaluation.evaluate` on Ctrl-C; ``.result`` holds what finished.

    It is a ``KeyboardInterrupt``, so an unhandled one still stops the program; everything that
    finished is also in the ``output=`` file, and a rerun with the same file resumes.
    """

    def __init__(self, result: EvaluationResult) -> None:
        super().__init__(
            f"evaluation interrupted after {len(result.rows)} rows; the finished work is in "
            "`.result` (and in the output file, if one was given)"
        )
        self.result = result
