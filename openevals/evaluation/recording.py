"""The recording side of a run: :class:`RunRecords`, the :class:`~.executor.Sink` of the local
engine and of the Ray driver.

It turns outcomes into records (:mod:`.records`: secrets removed there), appends them to the
``output=`` file (:mod:`.checkpoint`), counts them (:mod:`.stats`), feeds batch metrics
(:mod:`.batches`) and the progress display, and keeps the finished rows (:mod:`.store`). Rows
of the columnar path arrive as whole blocks (:meth:`RunRecords.add_block`); rows finished one by
one inside a block are held and written with the block (:meth:`RunRecords.block`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals.data.rows import Row, group_of
from openevals.evaluation.batches import MetricBatches
from openevals.evaluation.checkpoint import Checkpoint, Previous
from openevals.evaluation.evaluators import Outcome, RunEvaluator, usage_of
from openevals.evaluation.failfast import FailFast
from openevals.evaluation.pricing import estimate_cost
from openevals.evaluation.records import Recorder, ResultRow, TargetInfo, row_record
from openevals.evaluation.stats import RunStats
from openevals.evaluation.store import RowStore
from openevals.report.progress import ProgressSink

if TYPE_CHECKING:
    from openevals.evaluation.blocks import ColumnBlock
    from openevals.evaluation.executor import EngineRun

__all__ = ["RunRecords"]


class RunRecords:
    """Records, file, statistics, batch metrics, progress and finished rows of one run."""

    def __init__(
        self,
        run: EngineRun,
        stats: RunStats,
        *,
        batches: MetricBatches | None = None,
        progress: ProgressSink | None = None,
        output: Path | None = None,
    ) -> None:
        evaluators = run.evaluators
        self.names = [ev.name for ev in evaluators]
        self.fingerprints = {ev.name: ev.fingerprint for ev in evaluators}
        self._row_fps: dict[str, str] = {}  # rows in progress (with an ``output=`` file)
        self.failfast: FailFast | None = FailFast(
            [ev.name for ev in evaluators if not ev.fail_fast]
        )
        """Stops the run on identical first failures (``None``: a Ray worker's copy, whose
        outcomes the driver's records watch)."""
        self.group_by = run.options.group_by
        self.prices = run.prices
        self.stats = stats
        self.recorder = run.recorder
        self.batches = batches
        self.progress = progress
        self.output = output
        self.store = RowStore()
        self.spent = 0.0  # estimated USD of this run's own calls (resumed pairs excluded)
        self.previous = Previous()
        self.out: Checkpoint | None = None
        self._held: list[str] | None = None  # lines of the block being built
        self._block_rows: list[ResultRow] | None = None  # rows of the block being built

    # ------------------------------------------------------------------ lifecycle
    def open(self, *, retry_errors: bool) -> Previous:
        """Read what the ``output=`` file holds, open it for appending and write the ``run``
        line; returns what earlier runs finished."""
        self.stats.started = time.perf_counter()
        if self.output is not None:
            self.out = Checkpoint(self.output)
            self.previous = self.out.load()
            self.previous.fingerprints = self.fingerprints
            self.stats.reevaluated = self.previous.changed
            if retry_errors:
                self.previous.forget_errors()
            self.out.open()
            self.out.write(self.recorder.line(Recorder.run_line(self.names, self.group_by)))
        if self.progress is not None:
            self.progress.start(self.stats)
        return self.previous

    def close(self) -> None:
        self.stats.finished = time.perf_counter()
        if self.out is not None:
            self.out.close()
        if self.progress is not None:
            with contextlib.suppress(Exception):
                self.progress.stop(self.stats)

    def finish(self) -> None:
        """The run ended normally: the last batch of rows goes to the batch metrics."""
        if self.batches is not None:
            self.batches.flush()

    # ------------------------------------------------------------------ the sink
    def start_row(
        self,
        row: Row,
        fields: Mapping[str, Any],
        previous: Mapping[str, Mapping[str, Any]],
        pending: Sequence[RunEvaluator],
        target: TargetInfo | None,
        target_ran: bool,
    ) -> ResultRow:
        """The result row of ``row`` with its resumed pairs; its ``row`` line is written when
        something is left to run (and the file does not hold it yet)."""
        group_by = self.group_by
        rec = row_record(
            row.id,
            row.index,
            fields,
            group=group_of(fields, group_by) if group_by is not None else None,
            grouped=group_by is not None,
            target=target,
        )
        if previous:
            for name in self.names:
                prior = previous.get(name)
                if prior is not None:
                    entry = self.recorder.resumed(prior)
                    rec["evaluations"][name] = entry
                    self.stats.record_pair(name, entry)
        if pending and self.out is not None:
            fp = self._row_fps[row.id] = row.fingerprint()
            prior = self.previous.rows.get(row.id)
            if prior is None or target_ran or prior.get("row_fp") != fp:
                self._emit(self.recorder.line(Recorder.row_line(rec, fp)))
        return rec

    def target(self, row: Row, fields: Mapping[str, Any], info: TargetInfo) -> None:
        self.stats.record_target(info)

    def reused_target(self) -> None:
        self.stats.record_reused_target()

    def pair(self, ev: RunEvaluator, rec: ResultRow, outcome: Outcome) -> None:
        usage = usage_of(outcome[0])
        model = ev.info.model if ev.info is not None else None
        cost = estimate_cost(model, usage, self.prices)
        if cost is not None:
            self.spent += cost
        entry = Recorder.evaluation(outcome, usage=usage, cost_usd=cost, model=model)
        rec["evaluations"][ev.name] = entry
        self.stats.record_pair(ev.name, entry)
        if self.out is not None:
            line = Recorder.eval_line(
                rec["id"],
                rec["index"],
                ev.name,
                entry,
                evaluator_fp=self.fingerprints[ev.name],
                row_fp=self._row_fps[rec["id"]],
            )
            self._emit(self.recorder.line(line))
        stop = self.failfast.observe(ev.name, outcome[1]) if self.failfast is not None else None
        if stop is not None:
            raise stop

    def complete_row(self, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        self._row_fps.pop(rec["id"], None)
        evaluations = rec["evaluations"]
        # Keep evaluator order stable regardless of completion order.
        rec["evaluations"] = {name: evaluations[name] for name in self.names if name in evaluations}
        rec = self.recorder.finish(rec)
        failed = self.stats.record_row(rec)
        rec["status"] = "error" if failed else "success"
        if self._block_rows is not None:
            self._block_rows.append(rec)
        else:
            self.store.add(rec)
        if self.batches is not None:
            self.batches.add(fields, rec)
        if self.progress is not None:
            self.progress.advance(self.stats)

    # ------------------------------------------------------------------ blocks
    def _emit(self, line: str) -> None:
        """Append one line to the ``output=`` file (held back while a block is built)."""
        if self._held is not None:
            self._held.append(line)
        elif self.out is not None:
            self.out.write(line)

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        """Rows finished inside are kept, and their lines written, together at the end."""
        self._held, self._block_rows = [], []
        try:
            yield
        finally:
            lines, self._held = self._held, None
            rows, self._block_rows = self._block_rows, None
            if lines and self.out is not None:
                self.out.write_lines(lines)
            self.store.add_rows(rows)

    def add_block(self, block: ColumnBlock) -> None:
        """A scored block of the columnar path: counted, written and kept (secrets removed
        first, as :meth:`Recorder.finish` does for a row)."""
        redactor = self.recorder.redactor
        if self.out is not None or redactor.secrets or self.batches is not None:  # ids needed now
            self.store.settle()
            # (made from the records as they were given, before secrets are taken out)
            block.settle(self.store.ids, fingerprints=self.out is not None)
        if redactor.secrets:
            records = redactor.data(block.records)
            if records is not block.records:
                block.records = records
            for column in block.columns:
                column.results = redactor.data(column.results)
        self.stats.record_block(block)
        self.spent += sum(sum(column.cost.values()) for column in block.columns)
        if self.out is not None:
            self.out.write_lines(block.lines(), clean=redactor.json_text)
        if self.batches is not None:
            for pos, rec in enumerate(block.rows()):
                self.batches.add(block.fields(pos), rec)
        self.store.add_part(block)
        if self.progress is not None:
            self.progress.advance(self.stats)
        failfast = self.failfast
        if failfast is None:
            return
        for name, column in zip(block.names, block.columns, strict=True):
            for pos in range(len(block)):
                if not failfast.watching(name):
                    break
                stop = failfast.observe(name, column.errors.get(pos))
                if stop is not None:
                    raise stop
