"""The result of a batch evaluation: :class:`EvaluationResult`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openevals.report.html import ReportSection

__all__ = ["EvaluationInterrupted", "EvaluationResult"]


@dataclass
class EvaluationResult:
    """What :func:`~openevals.evaluation.evaluate` returns.

    Attributes:
        rows: one dict per data row, in data order: a list, or for a run too large to keep
            in memory (over 32,768 rows) a read-only sequence,
            :class:`~openevals.evaluation.store.ResultRows`, that reads them back from a
            temporary file (``list()`` it for a list): ``id``, ``index``, ``inputs``, ``outputs``,
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
        summary: counts, errors per evaluator and type, the most common errors
            (``common_errors``: evaluator, type, message, count), cache hits, token usage and
            estimated cost per evaluator, elapsed time; after a resume, ``reevaluated``.
        interrupted: the run was stopped (Ctrl-C) before every row finished.
        stopped: why the run ended before the data's end without an interruption, else
            ``None``: ``"stopped at cost cap $X after N rows ..."`` when the ``budget=``'s
            ``max_cost`` was reached (also ``summary["stopped"]``). A rerun with the same
            ``output=`` resumes.
    """

    rows: Sequence[dict[str, Any]]
    aggregates: dict[str, dict[str, Any]]
    summary: dict[str, Any]
    by_group: dict[str, Any] | None = None
    batch_metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluators: list[str] = field(default_factory=list)
    interrupted: bool = False
    stopped: str | None = None
    histograms: dict[str, Sequence[float]] = field(default_factory=dict, repr=False)
    pairwise: dict[str, Any] = field(default_factory=dict, repr=False)
    """With ``systems=``: evaluator name -> :class:`~openevals.evaluation.pairwise.PairwiseSummary`."""
    corrections: dict[str, Any] = field(default_factory=dict, repr=False)
    """After :meth:`corrected`: feedback key -> :class:`~openevals.trust.corrected.CorrectedMean`."""

    def to_jsonl(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """The rows as JSON Lines: written to ``path`` (returns ``None``), or returned as a str."""
        from openevals.data.encoding import storable_text

        if path is None:
            return "".join(storable_text(row) + "\n" for row in self.rows)
        with Path(path).open("w", encoding="utf-8") as fh:
            for row in self.rows:
                fh.write(storable_text(row) + "\n")
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
            **({"stopped": self.stopped} if self.stopped is not None else {}),
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
        from openevals.report.html import render_report

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        html = render_report(self, title=title, max_rows=max_rows)
        target.write_text(html, encoding="utf-8", errors="backslashreplace")
        return target

    def to_pandas(
        self, *, wide: bool = False, aggregates: bool = False, with_rows: bool = False
    ) -> Any:
        """The results as a ``pandas.DataFrame`` (needs ``openevals-suite[pandas]``).

        Long form (default): one row per dataset row x feedback key with ``id``, ``index``,
        ``group`` (with ``group_by``), ``evaluator``, ``key``, ``score``, ``comment``, ``error``,
        ``model``, ``tokens`` and ``cost``. ``wide=True``: one row per dataset row and one score
        column per key. ``with_rows=True`` adds each row's ``inputs``, ``outputs``,
        ``reference_outputs`` and ``extra`` (after ``index``). ``aggregates=True``: one row per
        feedback key (``n``, ``mean``, ``ci_low``, ``ci_high``, and after :meth:`corrected` the
        ``corrected_*`` figures beside them). See :mod:`openevals.data.frames`.
        """
        from openevals.data.frames import aggregates_frame, to_pandas

        if aggregates:
            return aggregates_frame(self)
        return to_pandas(self, wide=wide, with_rows=with_rows)

    def corrected(
        self,
        calibration: Any,
        *,
        key: str | None = None,
        confidence: float = 0.95,
        tuned: bool = True,
    ) -> EvaluationResult:
        """A copy of this result with the judge-corrected mean of ``key`` beside the raw one.

        ``calibration`` holds human labels with the same judge's scores on some rows (what
        :func:`~openevals.calibration.calibrate` returns, or the file ``openevals calibrate
        --json`` writes). The estimate is prediction-powered inference (PPI++; ``tuned=False``
        for plain PPI): see :func:`openevals.trust.corrected.correct` and ``docs/trust.md``.
        The figure is in ``corrections[key]`` and ``aggregates[key]["corrected"]``, and the
        summary, the report and ``to_pandas(aggregates=True)`` show it.
        """
        from openevals.trust.corrected import correct

        return correct(self, calibration, key=key, confidence=confidence, tuned=tuned)

    def to_polars(self, *, wide: bool = False) -> Any:
        """The results as a ``polars.DataFrame`` (needs ``openevals-suite[polars]``); the columns of
        :meth:`to_pandas`, one type per column."""
        from openevals.data.frames import to_polars

        return to_polars(self, wide=wide)

    def to_parquet(self, path: str | os.PathLike[str], *, wide: bool = False) -> Path:
        """Write the table of :meth:`to_polars` to a Parquet file (needs ``openevals-suite[parquet]``)
        and return its path. The write is atomic: a failure leaves no partial file at ``path``."""
        from openevals.data.frames import to_parquet

        return to_parquet(self, path, wide=wide)

    def show_report(self, *, title: str = "openevals report", max_rows: int = 5000) -> Any:
        """The full HTML report of :meth:`report_html`, shown inline when it is a notebook
        cell's value (an :class:`~openevals.report.notebook.InlineReport`)."""
        from openevals.report.html import render_report
        from openevals.report.notebook import InlineReport

        return InlineReport(render_report(self, title=title, max_rows=max_rows))

    def _repr_html_(self) -> str:
        """The summary table a notebook shows for a result (not the rows)."""
        from openevals.report.notebook import result_summary_html

        return result_summary_html(self)

    def trial_stats(
        self, *, resamples: int = 1000, seed: int = 0, confidence: float = 0.95
    ) -> dict[str, Any]:
        """A run with ``trials=``: feedback key -> :class:`~openevals.trust.trials.TrialStats`
        (pass@k, pass^k, the flakiest rows, the variance split between app and judge with
        bootstrap intervals). ``ValueError`` for a run without trials."""
        from openevals.trust.trials import stats_of_run

        return stats_of_run(self, resamples=resamples, seed=seed, confidence=confidence)

    def report_sections(self) -> list[ReportSection]:
        """The optional report sections this result brings: the pairwise ranking and win-rate
        matrix of each pairwise evaluator (a run with ``systems=``), and the repeated-trials
        figures with the flakiest rows (a run with ``trials=``); else none."""
        sections: list[ReportSection] = []
        if self.pairwise:
            from openevals.pairwise.report_section import pairwise_sections

            sections += pairwise_sections(self.pairwise)
        if self.summary.get("trials"):
            from openevals.trust.report_section import trials_section

            sections.append(trials_section(self.trial_stats()))
        return sections

    def __repr__(self) -> str:
        keys = ", ".join(
            f"{k}={v['mean']:.3f}" for k, v in self.aggregates.items() if v.get("count")
        )
        state = " interrupted" if self.interrupted else " stopped" if self.stopped else ""
        text = (
            f"<EvaluationResult{state} rows={len(self.rows)} "
            f"errors={self.summary.get('pairs', {}).get('failed', 0)} {keys}>"
        )
        from openevals.report.progress import describe_common

        common = describe_common(self.summary.get("common_errors") or [])
        return text + "".join(f"\n  {line}" for line in common)


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
