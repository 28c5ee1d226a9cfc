"""``evaluate(..., engine="ray")``: rows go to Ray Data workers in batches.

The driver (this process) is the local engine's run (:class:`~.local.LocalRun`: options, judge
cache, ``output=`` file, resume). Rows with work left are pickled in chunks of the engine's
``batch_size`` and mapped onto a pool of its ``workers`` actors (:class:`EvalWorker`), each
scoring its chunk with :class:`~.worker.WorkerRun` (the judge cache shared through
:mod:`._ray_cache`). Chunks come
back in data order (``preserve_order``) and the driver replays their outcomes through the shared
row code and recording, so every record is made exactly as locally, once: Ray retries the chunk
of a killed worker, and the driver records only what it received.

Without ``RayEngine(address=)`` (or ``RAY_ADDRESS``) a local Ray is started and stopped after the
run; a Ray session already initialised in this process is used and left running. Environment variables
named in ``RayEngine(env=)``, every secret-named one (``*_API_KEY``, ``*_TOKEN``, ...) and every
``*_BASE_URL`` reach the workers as actor arguments, in memory (a ``runtime_env`` would be
written to Ray's log), never into a record.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import threading
from collections.abc import Generator, Sequence
from typing import Any

import pyarrow as pa
import ray
import ray.data
from ray import cloudpickle

from openevals.data.rows import Row
from openevals.evaluation.blocks import block_of_rows
from openevals.evaluation.engines._ray_workers import (
    EvalWorker,
    parquet_stream,
    ray_data_session,
    worker_env,
)
from openevals.evaluation.engines.engine import RayEngine
from openevals.evaluation.engines.local import LocalRun
from openevals.evaluation.engines.ray_connect import probe_ray_address
from openevals.evaluation.engines.worker import (
    ColumnOutcomes,
    ReplayCalls,
    RowOutcome,
    WorkItem,
    finish_parts,
    row_outcomes,
    start_parts,
)
from openevals.evaluation.executor import RowExecutor
from openevals.evaluation.options import RunOptions
from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult


class _Session:
    """The Ray session of one run: joined, or started (and stopped) here."""

    def __init__(self, address: str | None, connect_timeout: float) -> None:
        self.from_env = not address
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.connect_timeout = connect_timeout
        self.started = False

    def __enter__(self) -> _Session:
        if not ray.is_initialized():
            quiet: dict[str, Any] = {
                "configure_logging": False,
                "log_to_driver": False,
                "include_dashboard": False,
            }
            if self.address is not None:
                probe_ray_address(self.address, self.connect_timeout, from_env=self.from_env)
                ray.init(address=self.address, **quiet)
            else:
                ray.init(num_cpus=os.cpu_count() or 1, **quiet)
            self.started = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            ray.shutdown()


class RayRun:
    """The driver of a Ray run: the local engine's run (options, records, ``output=`` file,
    statistics, result) with the rows scored by Ray workers and their outcomes replayed."""

    def __init__(self, data: Any, evaluators: Any, options: RunOptions) -> None:
        self.run = LocalRun(data, evaluators, options)
        self.data = data
        assert isinstance(options.engine, RayEngine)  # the runner sends only Ray runs here
        self.engine = options.engine
        self.stop = threading.Event()
        self.replay = ReplayCalls()
        self.parquet = None if self.engine.parquet is None else str(self.engine.parquet)
        try:
            self._payload = cloudpickle.dumps((evaluators, options.on_worker()))
        except Exception as exc:
            raise TypeError(
                "engine='ray' sends the evaluators and the target to its workers, but they "
                f"cannot be pickled ({type(exc).__name__}: {exc}); build clients inside the "
                "function, or pass a model string instead of a client object"
            ) from None
        start_parts(self.engine.parquet)

    # ------------------------------------------------------------------ the run
    def run_blocking(self) -> None:
        """Run to the end on this thread (the event loop here only replays outcomes)."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.run.execute(schedule=self._schedule))
        finally:
            loop.close()

    def finished(self) -> EvaluationResult:
        """The result of the finished run (its ``RayEngine(parquet=)`` folder marked complete)."""
        result = self.run.result()
        finish_parts(self.engine.parquet, result)
        return result

    async def _schedule(self) -> None:
        self.executor = RowExecutor(self.run, self.replay, self.run.records)
        with _Session(self.engine.address, self.engine.connect_timeout):
            await self._replay_all()

    def _needs_work(self, row: Row) -> bool:
        finished = self.run.previous.finished(row)
        return any(ev.name not in finished for ev in self.run.evaluators)

    async def _replay_all(self) -> None:
        previous = self.run.previous
        if not (previous.evals or previous.rows or self.parquet):  # nothing to resume
            streamed = parquet_stream(self.data, self.engine, self._payload, self.run)
            if streamed is not None:  # Parquet: Ray Data reads it on the workers
                try:
                    for row, self.replay.outcome in streamed:
                        if self._stopping():
                            return
                        await self.executor.process_row(row)
                finally:
                    streamed.close()
                return
        rows = list(iter(self.run.next_row, None))
        work = [row for row in rows if self._needs_work(row)]
        chunks = self._chunks(work)
        try:
            if len(work) == len(rows):  # nothing resumed: replay batch by batch
                for chunk_rows, done in chunks:
                    if self._stopping():  # later chunks are dropped, unrecorded
                        return
                    await self._replay_chunk(chunk_rows, done)
                return
            outcomes = (o for chunk_rows, done in chunks for o in row_outcomes(done))
            for row in rows:
                if self._stopping():
                    return
                self.replay.outcome = next(outcomes) if self._needs_work(row) else None
                await self.executor.process_row(row)
        finally:
            chunks.close()

    def _stopping(self) -> bool:
        """Whether to stop before the next row: the budget's cap is reached (the run is then
        capped); raises ``KeyboardInterrupt`` once the caller cancelled."""
        if self.stop.is_set():
            raise KeyboardInterrupt
        if self.run.over_budget():
            self.run.capped = True
        return self.run.capped

    async def _replay_chunk(
        self, rows: Sequence[Row], done: list[RowOutcome] | ColumnOutcomes
    ) -> None:
        """One batch's outcomes: column blocks go to the records whole (as on the local columnar
        path); anything else is replayed row by row through the shared row code."""
        if isinstance(done, ColumnOutcomes):  # a fresh run's batches hold consecutive rows
            start = 0
            for count, columns in done.blocks:
                block = block_of_rows(self.run, rows[start : start + count], columns)
                self.run.records.add_block(block)
                start += count
            return
        with self.run.records.block():  # the batch's rows go to the store as one ordered part
            for row, self.replay.outcome in zip(rows, done, strict=True):
                await self.executor.process_row(row)

    def _chunks(
        self, work: Sequence[Row]
    ) -> Generator[tuple[Sequence[Row], list[RowOutcome] | ColumnOutcomes], None, None]:
        """Every batch of ``work`` with what the workers did for it, in order."""
        if not work:
            return
        size = self.engine.batch_size
        previous = self.run.previous
        batches = [work[start : start + size] for start in range(0, len(work), size)]
        chunks = []
        for batch in batches:
            items = [
                WorkItem(
                    row=row,
                    evals=dict(previous.finished(row)),
                    row_record=previous.rows.get(row.id),
                )
                for row in batch
            ]
            chunks.append(pickle.dumps(items, pickle.HIGHEST_PROTOCOL))
        with ray_data_session(self.run.cache) as shared:
            yield from zip(batches, self._stream(chunks, shared), strict=True)

    def _stream(
        self, chunks: list[bytes], shared: Any
    ) -> Generator[list[RowOutcome] | ColumnOutcomes, None, None]:
        cpus = ray.cluster_resources().get("CPU", 1)
        workers = self.engine.workers or max(1, int(cpus))
        workers = min(workers, len(chunks))
        table = pa.table(
            {"chunk": pa.array(range(len(chunks))), "payload": pa.array(chunks, pa.binary())}
        )
        payload_ref = ray.put(self._payload)
        dataset: Any = ray.data.from_arrow([table.slice(i, 1) for i in range(len(chunks))])
        dataset = dataset.map_batches(
            EvalWorker,
            fn_constructor_args=(
                payload_ref,
                shared,
                worker_env(self.engine.env),
                self.parquet,
            ),
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
        )
        expected = 0
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for chunk, result in zip(batch["chunk"], batch["result"], strict=True):
                if int(chunk) != expected:  # pragma: no cover - Ray broke preserve_order
                    raise RuntimeError(f"Ray returned chunk {int(chunk)}, expected {expected}")
                expected += 1
                yield pickle.loads(result)
        del payload_ref


def evaluate_on_ray(data: Any, evaluators: Any, options: RunOptions) -> EvaluationResult:
    """:func:`~openevals.evaluation.evaluate` with a :class:`RayEngine`."""
    run = RayRun(data, evaluators, options)
    try:
        with run.run.failing():
            run.run_blocking()
    except KeyboardInterrupt:
        run.run.interrupted = True
        raise EvaluationInterrupted(run.run.result()) from None
    return run.finished()


async def aevaluate_on_ray(data: Any, evaluators: Any, options: RunOptions) -> EvaluationResult:
    """:func:`~openevals.evaluation.aevaluate` with a :class:`RayEngine`: the driver runs in a
    thread; cancelling stops it after the current row (finished work stays in the ``output=``
    file)."""
    run = RayRun(data, evaluators, options)
    task = asyncio.get_running_loop().run_in_executor(None, run.run_blocking)
    try:
        with run.run.failing():
            await asyncio.shield(task)
    except asyncio.CancelledError:
        run.stop.set()
        with contextlib.suppress(BaseException):
            await task
        raise
    return run.finished()
