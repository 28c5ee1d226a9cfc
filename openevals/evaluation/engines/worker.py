"""The worker side of a distributed run: score the rows of one batch, return raw outcomes.

A worker runs its rows through the local engine's per-row code (or its columnar path, when every
evaluator is pure) with a sink that records nothing: it keeps each row's :class:`RowOutcome` (the
target's call and each pair's :data:`~openevals.evaluation.evaluators.Outcome`) to hand back.
The driver replays them through the local recording, so records, the ``output=`` file,
statistics and batch metrics are made in one place, in data order. Plain Python: nothing here
imports Ray.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from openevals._repr import PATH_LIMIT, show
from openevals.data.rows import Row
from openevals.evaluation.blocks import (
    ColumnBlock,
    EvalColumn,
    batch_first,
    columnar_fits,
    run_blocks,
)
from openevals.evaluation.checkpoint import Previous
from openevals.evaluation.concurrency import AIMD, Limiter
from openevals.evaluation.engines.batch_forms import batch_form
from openevals.evaluation.evaluators import Outcome, RunEvaluator
from openevals.evaluation.executor import EngineRun, LiveCalls, RowExecutor, run_rows
from openevals.evaluation.loop import Offload, run_on_loop
from openevals.evaluation.options import RunOptions
from openevals.evaluation.recording import RunRecords
from openevals.evaluation.records import ResultRow, TargetInfo, row_record
from openevals.evaluation.stats import RunStats
from openevals.utils import _needs_langsmith

__all__ = [
    "SUCCESS",
    "Capture",
    "ColumnOutcomes",
    "ReplayCalls",
    "RowOutcome",
    "WorkItem",
    "WorkerRun",
    "finish_parts",
    "row_outcomes",
    "start_parts",
    "write_part",
]


@dataclass
class WorkItem:
    """One row sent to a worker, with what earlier runs recorded for it (resume)."""

    row: Row
    evals: dict[str, dict[str, Any]] = field(default_factory=dict)
    row_record: dict[str, Any] | None = None


@dataclass
class ColumnOutcomes:
    """What a worker did for a batch scored wholly on the columnar path: per block, its number
    of rows and the evaluators' columns (the driver rebuilds the blocks from its own rows)."""

    blocks: list[tuple[int, list[EvalColumn]]]
    cached: bool
    names: list[str]


def row_outcomes(done: list[RowOutcome] | ColumnOutcomes) -> list[RowOutcome]:
    """What a worker did for a batch, row by row."""
    if not isinstance(done, ColumnOutcomes):
        return done
    out: list[RowOutcome] = []
    for count, columns in done.blocks:
        for pos in range(count):
            pairs = {
                name: column.outcome(pos, done.cached)
                for name, column in zip(done.names, columns, strict=True)
            }
            out.append(RowOutcome(pairs=pairs))
    return out


@dataclass
class RowOutcome:
    """What a worker did for one row."""

    target: tuple[dict[str, Any], TargetInfo] | None = None
    pairs: dict[str, Outcome] = field(default_factory=dict)


class Capture:
    """The sink of a worker: keeps each row's outcome to send back (records nothing)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, RowOutcome] = {}

    def start_row(
        self,
        row: Row,
        fields: Mapping[str, Any],
        previous: Mapping[str, Mapping[str, Any]],
        pending: Sequence[RunEvaluator],
        target: TargetInfo | None,
        target_ran: bool,
    ) -> ResultRow:
        return row_record(row.id, row.index, {}, group=None, grouped=False)  # only its id is read

    def target(self, row: Row, fields: Mapping[str, Any], info: TargetInfo) -> None:
        self.outcomes[row.id].target = (dict(fields), info)

    def reused_target(self) -> None:
        """Nothing to send: the driver reuses the target's earlier record itself."""

    def pair(self, ev: RunEvaluator, rec: ResultRow, outcome: Outcome) -> None:
        self.outcomes[rec["id"]].pairs[ev.name] = outcome

    def complete_row(self, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        """Recording happens on the driver."""


class WorkerRun(EngineRun):
    """The evaluators of a distributed run on one worker, scoring batch after batch."""

    def __init__(self, evaluators: Any, options: RunOptions) -> None:
        super().__init__(evaluators, options)
        self.cache = options.cache
        self.reader = None  # rows arrive normalised, with their ids
        self.capture = Capture()
        self.limiter = Limiter(AIMD(options.concurrency))
        # As on the local engine: no batch forms while LangSmith traces (each call is traced).
        traced = options.target is not None or _needs_langsmith()
        found = {} if traced else {ev.name: batch_form(ev) for ev in self.evaluators}
        self.forms = {name: form for name, form in found.items() if form is not None}
        self._rows: Iterator[Row] = iter(())
        self.blocks: list[ColumnBlock] = []  # the column blocks of the batch being scored

    def run_items(self, items: Sequence[WorkItem]) -> list[RowOutcome]:
        """Score the rows of ``items``; one :class:`RowOutcome` per item, in order."""
        return row_outcomes(self.run_chunk(items))

    def run_chunk(self, items: Sequence[WorkItem]) -> list[RowOutcome] | ColumnOutcomes:
        """Score the rows of ``items``: their columns when every row went through a column
        block, else one :class:`RowOutcome` per item, in order."""
        self.blocks = []
        rows = [item.row for item in items]
        self.previous = Previous(
            evals={item.row.id: dict(item.evals) for item in items if item.evals},
            rows={item.row.id: item.row_record for item in items if item.row_record},
        )
        self.capture.outcomes = {row.id: RowOutcome() for row in rows}
        offload = Offload(self.options.concurrency)
        self.calls = LiveCalls(self, self.limiter, offload)
        self.executor = RowExecutor(self, self.calls, self.capture)
        self._rows = iter(rows)
        began, closed = threading.Event(), threading.Event()
        try:
            run_on_loop(self._run_rows(rows, began, closed), began=began, closed=closed)
        finally:
            offload.shutdown()
        if rows and sum(len(block) for block in self.blocks) == len(rows):
            return ColumnOutcomes(
                blocks=[(len(block), block.columns) for block in self.blocks],
                cached=self.cache is not None,
                names=[ev.name for ev in self.evaluators],
            )
        return [self.capture.outcomes[row.id] for row in rows]

    async def _run_rows(
        self, rows: Sequence[Row], began: threading.Event, closed: threading.Event
    ) -> None:
        began.set()
        try:
            if columnar_fits(self):
                await run_blocks(self)  # the batch forms run per block there
                return
            await batch_first(self, self.forms, rows)
            workers = max(1, min(self.options.concurrency, len(rows)))
            await run_rows(self.executor, self.anext_row, workers)
        finally:
            closed.set()

    # ------------------------------------------------------------------ what ..blocks reads
    def next_row(self) -> Row | None:
        return next(self._rows, None)

    def block(self) -> AbstractContextManager[None]:
        return nullcontext()

    def add_block(self, block: ColumnBlock) -> None:
        """A block scored on the columnar path: kept, and each row's outcome, to send back."""
        self.blocks.append(block)
        for pos, row_id in enumerate(block.ids):
            assert row_id is not None  # rows arrive with their ids
            pairs = self.capture.outcomes[row_id].pairs
            for name, column in zip(block.names, block.columns, strict=True):
                pairs[name] = column.outcome(pos, block.cached)


class ReplayCalls:
    """Calls that return each row's outcome as a worker made it (:class:`RowOutcome`): the Ray
    driver's, and a worker's when it writes its rows' records."""

    def __init__(self) -> None:
        self.outcome: RowOutcome | None = None

    async def target(self, row: Row) -> tuple[dict[str, Any], TargetInfo]:
        assert self.outcome is not None and self.outcome.target is not None
        return self.outcome.target

    def inline(self, ev: RunEvaluator, row: Row, fields: Any) -> Outcome:
        assert self.outcome is not None
        return self.outcome.pairs[ev.name]

    async def pair(self, ev: RunEvaluator, row: Row, fields: Any) -> Outcome:
        return self.inline(ev, row, fields)


# --------------------------------------------------------------------------- Parquet parts

SUCCESS = "_SUCCESS"
"""The file a finished run leaves in its ``RayEngine(parquet=)`` folder (holding the run's summary)."""


def start_parts(folder: str | os.PathLike[str] | None) -> None:
    """Make the ``RayEngine(parquet=)`` folder, refusing one that holds another run's results."""
    if folder is None:
        return
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"RayEngine(parquet=) must be a folder; {show(str(path), PATH_LIMIT)} is a file"
        )
    path.mkdir(parents=True, exist_ok=True)
    taken = sorted(p.name for p in path.iterdir() if p.name == SUCCESS or _is_part(p.name))
    if taken:
        raise ValueError(
            f"RayEngine(parquet=) folder {show(str(path), PATH_LIMIT)} already holds results "
            f"({taken[0]}, ...); pass a "
            "new or empty folder (results of two runs are never mixed)"
        )


def _is_part(name: str) -> bool:
    return name.startswith("part-") and name.endswith(".parquet")


def write_part(
    run: WorkerRun,
    items: Sequence[WorkItem],
    outcomes: Sequence[RowOutcome],
    folder: str,
    chunk: int,
) -> None:
    """Write the results of one scored batch as ``part-<chunk>.parquet`` in ``folder``: the
    long form of ``EvaluationResult.to_parquet``, from records made by the same recording code
    as the driver's. The file appears complete or not at all (written beside it, then renamed).
    """
    from openevals.data.frames import atomic_write, rows_arrow
    from openevals.data.sources import require

    pq = require("pyarrow.parquet", "parquet", "RayEngine(parquet=)")
    names = [ev.name for ev in run.evaluators]
    records = RunRecords(run, RunStats(names, group_by=run.options.group_by))
    records.failfast = None  # the driver's records stop the run
    replay = ReplayCalls()
    executor = RowExecutor(run, replay, records)

    async def replay_all() -> None:
        for item, replay.outcome in zip(items, outcomes, strict=True):
            await executor.process_row(item.row)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(replay_all())
    finally:
        loop.close()
    table = rows_arrow(cast("list[dict[str, Any]]", list(records.store.view())))
    atomic_write(Path(folder) / f"part-{chunk:06d}.parquet", lambda tmp: pq.write_table(table, tmp))


def finish_parts(folder: str | os.PathLike[str] | None, result: Any) -> None:
    """Mark a finished ``RayEngine(parquet=)`` folder complete: ``_SUCCESS``, holding the summary."""
    if folder is None:
        return
    from openevals.data.encoding import storable_text
    from openevals.data.frames import atomic_write

    text = storable_text(result.to_dict())
    atomic_write(Path(folder) / SUCCESS, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
