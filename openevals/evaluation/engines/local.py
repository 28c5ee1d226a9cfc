"""The local engine: one asyncio event loop drives the whole run (``engine="local"``).

``concurrency`` workers pull rows lazily from the data and run each through the shared
:class:`~openevals.evaluation.executor.RowExecutor`, which reports to
:class:`~openevals.evaluation.recording.RunRecords`; with only cheap pure evaluators, rows go
through in blocks instead (:mod:`openevals.evaluation.blocks`). Every finished pair is appended
to the ``output=`` file at once, and a rerun skips the pairs the file holds.

The data is read by a :class:`RunReader`: a record that cannot be a row is an error row, and a
source that fails mid-stream ends the rows there; the rows read are finished, then the run raises
:class:`~openevals.evaluation.failfast.DataSourceFailed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from openevals.data.rows import Row, RowReader, count_rows, placeholder, storable_check
from openevals.evaluation.batches import MetricBatches
from openevals.evaluation.blocks import (
    BLOCK_ROWS,
    ColumnBlock,
    batch_first,
    columnar_fits,
    pure_batch_forms,
    run_blocks,
)
from openevals.evaluation.cache import open_cache
from openevals.evaluation.concurrency import AIMD, Limiter
from openevals.evaluation.evaluators import refuse_missing_outputs
from openevals.evaluation.executor import EngineRun, LiveCalls, RowExecutor, run_rows
from openevals.evaluation.failfast import DataSourceFailed, EvaluatorFailing
from openevals.evaluation.loop import Offload
from openevals.evaluation.options import RunOptions
from openevals.evaluation.recording import RunRecords
from openevals.evaluation.result import EvaluationResult
from openevals.evaluation.stats import RunStats
from openevals.report.progress import make_progress

__all__ = ["LocalRun", "RunReader"]


class RunReader(RowReader):
    """The rows of a run's data, read so that bad data costs no finished work.

    A record that cannot be a row (not a dict, a non-text field name, an ``id`` that is not text
    or an integer or is taken by an earlier row, a table cell with no plain form) becomes an error
    row (:attr:`~openevals.data.rows.Row.problem`, naming its index and field; the runner records
    a ``RowDataError`` for each of its evaluations). A source that fails mid-stream ends the rows
    there, its exception kept in :attr:`failure`.
    """

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.failure: Exception | None = None
        self._raw = self._until_failure(self._raw)

    def _until_failure(self, raw: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from raw
        except Exception as exc:  # the source failed: no row follows
            self.failure = exc

    def normalize(self, raw: Any, index: int) -> Row:
        try:
            return super().normalize(raw, index)
        except (TypeError, ValueError) as exc:  # a record that is not a row (see above)
            return self._bad_row(raw, index, str(exc))

    def _bad_row(self, raw: Any, index: int, reason: str) -> Row:
        """The error row standing for a record that is not a row: its storable text fields
        kept, identified by its content (its own ``id`` is bad or taken)."""
        fields: dict[str, Any] = {}
        if isinstance(raw, Mapping):
            for key, value in raw.items():
                if type(key) is str and key != "id":
                    fields[key] = value if _storable(value) else placeholder(value)
        row_id = self.ids.content_id(fields or {"record": placeholder(raw)}, strict=False)
        problem = f"{reason}; the row is recorded as an error, the other rows are evaluated"
        return Row(index=index, id=row_id, fields=fields, problem=problem)


def _storable(value: Any) -> bool:
    try:
        storable_check(value)
    except Exception:
        return False
    return True


class LocalRun(EngineRun):
    """State and scheduling of one local run (shared by the sync and async entry points); the
    Ray driver reuses it with its own scheduling and calls (:mod:`._ray_engine`)."""

    def __init__(self, data: Any, evaluators: Any, options: RunOptions) -> None:
        super().__init__(evaluators, options)
        progress = make_progress(options.progress)
        reader = self.data_reader = RunReader(data)
        self.reader: RowReader | None = reader
        if options.target is None and self.pairwise is None:
            refuse_missing_outputs(self.evaluators, data, reader.fields, reader.source)
        rows_total = count_rows(data) if progress is not None else None
        if rows_total is None and not isinstance(data, (str, os.PathLike)):
            rows_total = count_rows(data)
        names = [ev.name for ev in self.evaluators]
        live = progress is not None
        self.stats = RunStats(names, group_by=options.group_by, rows_total=rows_total, live=live)
        batches: MetricBatches | None = None
        if options.batch_metrics is not None and options.batch_metrics.metrics:
            batches = MetricBatches(options.batch_metrics, self.recorder)
            self.stats.batches = batches
        self.output_path = Path(options.output) if options.output is not None else None
        self.records = RunRecords(
            self, self.stats, batches=batches, progress=progress, output=self.output_path
        )
        # Content ids are numbered in data order, by the reader or (deferred) by the store.
        self.records.store.ids = reader.ids
        reader.ids.settle = self.records.store.settle
        self.cache: Any = None
        self._owns_cache = False
        self.interrupted = False
        self.failure: DataSourceFailed | None = None
        """The data failed mid-stream where the reader does not see it (Ray's Parquet reads)."""
        self.capped = False  # the budget's max_cost stopped the run before the data's end
        self._offload = Offload(options.concurrency)
        self._exhausted = False
        # May pure evaluators run in blocks (see ..blocks)? Not under a cost cap, which is
        # checked before each row.
        self.columnar = options.budget.max_cost is None
        self.began = threading.Event()
        self.closed = threading.Event()

    # ------------------------------------------------------------------ lifecycle
    def _open(self) -> None:
        self.cache, self._owns_cache = open_cache(self.options.cache)
        limiter = self.stats.limiter = Limiter(AIMD(self.options.concurrency))
        self.previous = self.records.open(retry_errors=self.options.retry_errors)
        self.calls = LiveCalls(self, limiter, self._offload)
        self.executor = RowExecutor(self, self.calls, self.records)

    def _close(self) -> None:
        self._offload.shutdown()
        self.records.close()
        if self.cache is not None and self._owns_cache:
            with contextlib.suppress(Exception):
                self.cache.close()
        self.closed.set()

    async def execute(self, schedule: Callable[[], Awaitable[None]] | None = None) -> None:
        """The whole run: open, process every row (``schedule``: another engine's way of doing
        that, such as the Ray driver's), close."""
        self.began.set()
        try:
            self._open()
            await (self._schedule() if schedule is None else schedule())
            self.records.finish()
            failed = self.source_failure()
            if failed is not None:  # the rows read before it are finished: stop here
                self.interrupted = True
                raise failed
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.interrupted = True
            raise
        finally:
            self._close()

    @contextlib.contextmanager
    def failing(self) -> Iterator[None]:
        """An :class:`EvaluatorFailing` or :class:`DataSourceFailed` raised inside (the run
        stopped) leaves with the rows finished: its ``.result``."""
        try:
            yield
        except (EvaluatorFailing, DataSourceFailed) as exc:
            self.interrupted = True
            exc.result = self.result()
            raise

    async def _schedule(self) -> None:
        """Process every row: in blocks when the evaluators allow it, else row by row."""
        if self.columnar and columnar_fits(self):
            await run_blocks(self)
            return
        await run_rows(self.executor, self._row_source(), self._worker_count())

    def _row_source(self) -> Callable[[], Awaitable[Row | None]]:
        """What the workers pull rows from. In a run without a target, the pure evaluators that
        have a ``batch`` form score the rows a block at a time first (their outcomes wait in
        the calls), while the others (judges) take the rows one by one."""
        forms = {} if self.target is not None else pure_batch_forms(self.evaluators)
        if not forms:
            return self.anext_row
        queue: deque[Row] = deque()
        lock = asyncio.Lock()

        async def prefetched() -> Row | None:
            if not queue:
                async with lock:
                    if not queue:
                        rows = [self.next_row() for _ in range(BLOCK_ROWS)]
                        block = [row for row in rows if row is not None]
                        await batch_first(self, forms, block)
                        queue.extend(block)
            return queue.popleft() if queue else None

        return prefetched

    def _worker_count(self) -> int:
        total, concurrency = self.stats.rows_total, self.options.concurrency
        return concurrency if total is None else max(1, min(concurrency, total))

    def source_failure(self) -> DataSourceFailed | None:
        """The data's failure mid-stream, if it failed (see the module docs)."""
        reader = self.data_reader
        if self.failure is None and reader.failure is not None:
            self.failure = DataSourceFailed(reader.source, reader.index, reader.failure)
        return self.failure

    def over_budget(self) -> bool:
        """Whether the budget's ``max_cost`` has been reached: then nothing new may start."""
        return self.options.budget.reached(self.records.spent)

    def next_row(self) -> Row | None:
        """The next row of the data, or ``None`` at the end (or once the budget's cap is
        reached: the run then stops there, and says so if rows were left)."""
        if self._exhausted or self.reader is None:
            return None
        row = None
        try:
            row = next(self.reader, None)
        finally:
            self._exhausted = row is None  # the data's end, or its failure (raised)
        if row is not None and self.over_budget():
            self.capped = self._exhausted = True
            return None
        return row

    # ------------------------------------------------------------------ blocks (see ..blocks)
    def block(self) -> AbstractContextManager[None]:
        return self.records.block()

    def add_block(self, block: ColumnBlock) -> None:
        self.records.add_block(block)

    # ------------------------------------------------------------------ the result
    def stopped_note(self) -> str | None:
        """What ``result.stopped`` says when the budget's cap ended the run early."""
        if not self.capped:
            return None
        cap = self.options.budget.max_cost
        return (
            f"stopped at cost cap ${cap:g} after {self.stats.rows_done} rows (spent "
            f"${self.records.spent:.6g}); rerun with the same output= to resume"
        )

    def result(self) -> EvaluationResult:
        result = self.stats.result(
            self.records.store.view(),
            cache=self.cache,
            with_target=self.target is not None,
            output=self.output_path,
            interrupted=self.interrupted,
            stopped=self.stopped_note(),
        )
        if self.pairwise is not None:
            result.pairwise = self.pairwise.summarize(result.rows)
        repeat = self.options.trials
        if repeat is not None and repeat.active:
            result.summary["trials"] = {
                "trials": repeat.trials,
                "judge_repeats": repeat.judge_repeats,
            }
        return result
