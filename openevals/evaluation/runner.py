"""The batch runner behind ``openevals.evaluate`` / ``openevals.aevaluate``: scheduling.

One asyncio event loop drives the whole run. Rows are pulled lazily from the data source by
``concurrency`` workers; for each row the target (if any) runs first, then every evaluator that has
not finished for this row yet. Async evaluators run on the loop, sync ones in a thread pool (with
the caller's context variables, so the judge cache reaches them), cheap pure ones (exact match,
Levenshtein, ranking metrics) directly on the loop. An adaptive limit bounds the calls in flight:
it starts at ``concurrency``, backs off when the model server answers 429/503 or times out, and
grows back while calls succeed (:mod:`.concurrency`).

Every finished row x evaluator pair is appended to the ``output=`` JSONL file and flushed at once;
on start the runner reads that file and skips the pairs it already holds, so a rerun after a crash,
a ``kill -9`` or Ctrl-C resumes where the last one stopped and never repeats finished work.

The parts: :mod:`.options` (arguments), :mod:`.evaluators` (resolving ``evaluators=``),
:mod:`.records` (the records and their file format; secrets are removed there), :mod:`.stats`
(counters, aggregates, summary), :mod:`.batches` (dataset metrics), :mod:`.target` (calling the
target), :mod:`.loop` (the event-loop thread and the thread pool).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from openevals._contract import is_async_callable
from openevals._repr import show
from openevals.evaluation.batches import BatchMetrics
from openevals.evaluation.blocks import columnar_fits, run_blocks
from openevals.evaluation.cache import CountingCache, open_cache
from openevals.evaluation.checkpoint import Checkpoint, Previous
from openevals.evaluation.concurrency import AIMD, Limiter
from openevals.evaluation.data import Row, RowDataError, count_rows, group_of, iter_rows
from openevals.evaluation.engines.ray_connect import DEFAULT_CONNECT_TIMEOUT
from openevals.evaluation.evaluators import (
    RunEvaluator,
    counting_cache,
    prepare_evaluators,
    usage_of,
)
from openevals.evaluation.loop import Offload, drive
from openevals.evaluation.options import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CONCURRENCY,
    DEFAULT_RAY_BATCH_SIZE,
    RunOptions,
)
from openevals.evaluation.pairwise import PairwisePlan
from openevals.evaluation.pricing import estimate_cost, merge_prices
from openevals.evaluation.progress import ProgressSink, make_progress
from openevals.evaluation.records import ErrorInfo, Evaluation, Recorder, ResultRow, TargetInfo
from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult
from openevals.evaluation.stats import RunStats
from openevals.evaluation.target import run_target

__all__ = ["aevaluate", "evaluate"]

_YIELD_EVERY = 64
_T = TypeVar("_T")


class _Run:
    """State and scheduling of one evaluation run (shared by the sync and async entry points)."""

    def __init__(self, data: Any, evaluators: Any, options: RunOptions) -> None:
        self.options = options
        self.evaluators: list[RunEvaluator] = prepare_evaluators(evaluators, model=options.model)
        self.pairwise: PairwisePlan | None = None
        if options.systems is not None:  # one evaluator per evaluator x pair of systems
            self.pairwise = PairwisePlan.create(options.systems, self.evaluators)
            self.evaluators = self.pairwise.evaluators
        self.names = [ev.name for ev in self.evaluators]
        self.prices = merge_prices(options.prices)
        self.sink: ProgressSink | None = make_progress(options.progress)
        self.rows_iter: Iterator[Row] = iter_rows(data)
        rows_total = count_rows(data) if self.sink is not None else None
        if rows_total is None and not isinstance(data, (str, os.PathLike)):
            rows_total = count_rows(data)
        self.target = options.target
        self.target_is_async = self.target is not None and is_async_callable(self.target)
        self.recorder = Recorder()
        self.stats = RunStats(self.names, group_by=options.group_by, rows_total=rows_total)
        self.batches: BatchMetrics | None = None
        if options.batch_metrics:
            self.batches = BatchMetrics(
                options.batch_metrics, options.accumulate, options.batch_size, self.recorder
            )
            self.stats.batches = self.batches
        self.output_path = Path(options.output) if options.output is not None else None
        self.cache: Any = None
        self._owns_cache = False
        self.rows: list[ResultRow] = []
        self.interrupted = False
        self._previous = Previous()
        self._out: Checkpoint | None = None
        self._offload = Offload(options.concurrency)
        self._limiter: Limiter | None = None
        self._exhausted = False
        self._held: list[str] | None = None  # lines of the block being built (columnar path)
        self.columnar = True  # may pure evaluators run in blocks (see .blocks)?
        self.began = threading.Event()
        self.closed = threading.Event()

    # ------------------------------------------------------------------ lifecycle
    def _open(self) -> None:
        self.stats.started = time.perf_counter()
        self.cache, self._owns_cache = open_cache(self.options.cache)
        if self.output_path is not None:
            self._out = Checkpoint(self.output_path)
            self._previous = self._out.load()
            if self.options.retry_errors:
                self._previous.forget_errors()
            self._out.open()
            self._out.write(
                self.recorder.line(Recorder.run_line(self.names, self.options.group_by))
            )
        self._limiter = self.stats.limiter = Limiter(AIMD(self.options.concurrency))
        if self.sink is not None:
            self.sink.start(self.stats)

    def _close(self) -> None:
        self.stats.finished = time.perf_counter()
        self._offload.shutdown()
        if self._out is not None:
            self._out.close()
        if self.cache is not None and self._owns_cache:
            with contextlib.suppress(Exception):
                self.cache.close()
        if self.sink is not None:
            with contextlib.suppress(Exception):
                self.sink.stop(self.stats)
        self.closed.set()

    async def execute(self) -> None:
        self.began.set()
        try:
            self._open()
            await self._schedule()
            if self.batches is not None:
                self.batches.flush()
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.interrupted = True
            raise
        finally:
            self._close()

    async def _schedule(self) -> None:
        """Process every row (other engines override this: see :mod:`.engines`)."""
        if self.columnar and columnar_fits(self):
            await run_blocks(self)
            return
        workers = [asyncio.ensure_future(self._worker()) for _ in range(self._worker_count())]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise

    def _worker_count(self) -> int:
        total, concurrency = self.stats.rows_total, self.options.concurrency
        return concurrency if total is None else max(1, min(concurrency, total))

    def _next_row(self) -> Row | None:
        if self._exhausted:
            return None
        try:
            row = next(self.rows_iter)
        except StopIteration:
            self._exhausted = True
            return None
        except BaseException:
            self._exhausted = True
            raise
        return row

    async def _worker(self) -> None:
        since_yield = 0
        while True:
            row = self._next_row()
            if row is None:
                return
            suspended = await self._process_row(row)
            since_yield += 1
            if not suspended and since_yield >= _YIELD_EVERY:
                since_yield = 0
                await asyncio.sleep(0)

    # ------------------------------------------------------------------ one row
    async def _process_row(self, row: Row) -> bool:
        """Run what is left for ``row``; returns whether it awaited anything."""
        previous = self._previous.finished(row.id)
        pending = [ev for ev in self.evaluators if ev.name not in previous]
        fields = row.fields
        suspended = target_ran = False
        target_info: TargetInfo | None = None
        if self.target is not None and row.problem is None:
            reuse = self._previous.reusable_target(row.id, pending=bool(pending))
            if reuse is not None:
                fields = {**fields, "outputs": reuse[0]}
                target_info = reuse[1]  # type: ignore[assignment]
                self.stats.record_reused_target()
            elif pending:
                fields, target_info = await self._run_target(row)
                target_ran = suspended = True
        rec = self._start_row(row, fields, previous, pending, target_info, target_ran)
        if pending:
            if row.problem is not None:  # a value no record can hold: an error, not a crash
                self._row_failed(row.problem, rec, pending)
            elif target_info is not None and target_info.get("status") == "error":
                error = Recorder.target_failed(target_info)
                for ev in pending:
                    self._finish_pair(ev, rec, [], error, 0.0, None)
            else:
                for ev in pending:
                    if ev.inline:
                        self._run_inline(ev, rec, fields)
                others = [ev for ev in pending if not ev.inline]
                if len(others) == 1:
                    await self._run_pair(others[0], rec, fields)
                    suspended = True
                elif others:
                    await asyncio.gather(*(self._run_pair(ev, rec, fields) for ev in others))
                    suspended = True
        self._complete_row(rec, fields)
        return suspended

    def _start_row(
        self,
        row: Row,
        fields: Mapping[str, Any],
        previous: Mapping[str, Mapping[str, Any]],
        pending: Sequence[RunEvaluator],
        target_info: TargetInfo | None,
        target_ran: bool,
    ) -> ResultRow:
        """The result row of ``row`` with its resumed pairs; its ``row`` line is written when
        something is left to run (and the file does not hold it yet)."""
        group_by = self.options.group_by
        rec = self.recorder.row(
            row,
            fields,
            group=group_of(fields, group_by) if group_by is not None else None,
            grouped=group_by is not None,
            target=target_info,
        )
        if previous:
            for ev in self.evaluators:
                prior = previous.get(ev.name)
                if prior is not None:
                    entry = self.recorder.resumed(prior)
                    rec["evaluations"][ev.name] = entry
                    self.stats.record_pair(ev.name, entry)
        if pending and self._out is not None and (row.id not in self._previous.rows or target_ran):
            self._emit(self.recorder.line(Recorder.row_line(rec)))
        return rec

    def _row_failed(self, problem: str, rec: ResultRow, pending: Sequence[RunEvaluator]) -> None:
        error = self.recorder.error(RowDataError(problem))
        for ev in pending:
            self._finish_pair(ev, rec, [], error, 0.0, None)

    def _emit(self, line: str) -> None:
        """Append one line to the ``output=`` file (held back while a block is built)."""
        if self._held is not None:
            self._held.append(line)
        elif self._out is not None:
            self._out.write(line)

    async def _run_target(self, row: Row) -> tuple[dict[str, Any], TargetInfo]:
        assert self.target is not None and self._limiter is not None
        async with self._limiter.slot(report=False):  # the target's own outcome steers nothing
            fields, info = await run_target(
                self.target, self.target_is_async, row.fields, self._offload.call, self.recorder
            )
        self.stats.record_target(info)
        return fields, info

    # ------------------------------------------------------------------ evaluators
    def _run_inline(self, ev: RunEvaluator, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        with counting_cache(self.cache) as counting:
            start = time.perf_counter()
            try:
                results, error = ev.call_inline(fields), None
            except Exception as exc:
                results, error = [], self.recorder.error(exc)
            elapsed = time.perf_counter() - start
        self._finish_pair(ev, rec, results, error, elapsed, counting)

    async def _run_pair(self, ev: RunEvaluator, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        assert self._limiter is not None
        async with self._limiter.slot() as slot:
            with counting_cache(self.cache) as counting:
                start = time.perf_counter()
                try:
                    call = ev.call(fields, self._offload.call)
                    timeout = self.options.eval_timeout
                    if timeout is not None:
                        results = await _within(call, timeout, ev.name)
                    else:
                        results = await call
                    error = None
                except Exception as exc:
                    results, error, slot.error = [], self.recorder.error(exc), exc
                elapsed = time.perf_counter() - start
        self._finish_pair(ev, rec, results, error, elapsed, counting)

    def _finish_pair(
        self,
        ev: RunEvaluator,
        rec: ResultRow,
        results: list[dict[str, Any]],
        error: ErrorInfo | None,
        elapsed: float,
        counting: CountingCache | None,
    ) -> None:
        usage = usage_of(results)
        model = ev.info.model if ev.info is not None else None
        entry: Evaluation = self.recorder.evaluation(
            results,
            error,
            elapsed_sec=elapsed,
            usage=usage,
            cost_usd=estimate_cost(model, usage, self.prices),
            model=model,
            cache=(
                {"hits": counting.hits, "misses": counting.misses} if counting is not None else None
            ),
        )
        rec["evaluations"][ev.name] = entry
        self.stats.record_pair(ev.name, entry)
        if self._out is not None:
            line = Recorder.eval_line(rec["id"], rec["index"], ev.name, entry)
            self._emit(self.recorder.line(line))

    def _complete_row(self, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        evaluations = rec["evaluations"]
        # Keep evaluator order stable regardless of completion order.
        rec["evaluations"] = {name: evaluations[name] for name in self.names if name in evaluations}
        rec = self.recorder.finish(rec)
        failed = self.stats.record_row(rec)
        rec["status"] = "error" if failed else "success"
        self.rows.append(rec)
        if self.batches is not None:
            self.batches.add(fields, rec)
        if self.sink is not None:
            self.sink.advance(self.stats)

    def result(self) -> EvaluationResult:
        result = self.stats.result(
            self.rows,
            cache=self.cache,
            with_target=self.target is not None,
            output=self.output_path,
            interrupted=self.interrupted,
        )
        if self.pairwise is not None:
            result.pairwise = self.pairwise.summarize(result.rows)
        return result


async def _within(call: Awaitable[_T], timeout: float, name: str) -> _T:
    """``await call``, cancelled after ``timeout`` seconds with a ``TimeoutError`` saying so.

    An evaluator's own ``TimeoutError`` passes through unchanged (it is not ours to reword).
    A sync evaluator runs in a pool thread, which cannot be stopped: its result is dropped.
    """
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout)
    except BaseException:
        task.cancel()
        raise
    if done:
        return task.result()
    task.cancel()
    # Do not wait for a cancelled call that may ignore cancellation; just collect its outcome.
    task.add_done_callback(_collect)
    raise TimeoutError(
        f"evaluator {show(name)} did not finish within eval_timeout={timeout:g} s and was "
        "cancelled (a sync evaluator's thread is left to finish; its result is dropped)"
    )


def _collect(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


# --------------------------------------------------------------------------- entry points


def _options(arguments: Mapping[str, Any]) -> RunOptions:
    """The keyword arguments of :func:`evaluate` / :func:`aevaluate` (their ``locals()``),
    validated."""
    skip = ("data", "evaluators")
    return RunOptions(**{k: v for k, v in arguments.items() if k not in skip})


def evaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
    systems: Sequence[str] | Mapping[str, str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    ray_batch_size: int = DEFAULT_RAY_BATCH_SIZE,
    ray_env: Sequence[str] | None = None,
    ray_connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    eval_timeout: float | None = None,
) -> EvaluationResult:
    """Run ``evaluators`` over every row of ``data`` and aggregate the scores.

    Args:
        data: a list of row dicts, or a path to a JSONL, JSON, CSV or TSV file. Rows have
            ``inputs``, ``outputs``, ``reference_outputs``, an optional ``id`` and extra columns
            (see :mod:`openevals.evaluation.data`).
        evaluators: evaluator callables (sync or async), :class:`EvaluatorSpec` objects or names
            such as ``"exact_match"`` / ``"recall:k=5"``; or a dict of name -> evaluator. Each gets
            the row fields its signature accepts (all of them if it takes ``**kwargs``).
        target: optional ``target(inputs) -> outputs`` (sync or async) run once per row before
            the evaluators; its wall time and token usage are recorded.
        concurrency: the most target/evaluator calls in flight at once.
        cache: judge cache: a SQLite file path, ``True`` (a default file), or an object with
            ``get``/``set``. A rerun over the same data then makes no model calls.
        group_by: a row field (dotted path; also looked up in ``inputs`` and ``metadata``) to
            group aggregates by; adds per-group, micro and macro statistics.
        progress: ``True`` for a rich progress bar, ``False``, or a callable receiving snapshots.
        output: a JSONL file: every finished row x evaluator is appended at once, and a rerun
            with the same file resumes, skipping finished pairs.
        batch_metrics: dataset-level metrics ``fn(batch: dict[str, list]) -> {name: {"value":
            ...}}`` run on batches of ``batch_size`` finished rows (columns ``id``, ``inputs``,
            ``outputs``, ``reference_outputs``, extra columns, and ``scores``); or the name of a
            corpus metric (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``, ``"rouge"``, with
            ``:option=value`` settings), computed once over the whole run.
        accumulate: combines the per-batch metrics ``{name: [per-batch dicts]}`` into the final
            ones; by default values are summed.
        batch_size: rows per ``batch_metrics`` batch.
        prices: model -> ``(input, output)`` USD per 1M tokens, merged over the default table.
        retry_errors: on resume, run again the pairs that ended in an error (the newer record
            supersedes the old one).
        model: the judge model for evaluator names such as ``"llm:CORRECTNESS_PROMPT"``.
        systems: compare two or more systems pairwise: a list of system names (each row's
            ``outputs`` is a dict of name -> output) or a dict of name -> row field (one column
            per system). Every evaluator must then be pairwise (``create_pairwise_llm_as_judge``)
            and runs once per pair; ``result.pairwise`` holds win/tie/loss rates, a
            Bradley-Terry ranking and the order-flip rate (see :mod:`.pairwise`).
        engine: ``"local"`` (this process) or ``"ray"`` (Ray Data workers; needs
            ``openevals[ray]``). Same data, options, records and results; ``concurrency`` is
            then per worker.
        ray_address: the Ray cluster to join (default: ``RAY_ADDRESS``, else a local Ray with
            this machine's cores, stopped after the run).
        ray_workers: Ray workers (actors) to use; default: the cluster's CPUs.
        ray_batch_size: rows per batch sent to a Ray worker.
        ray_env: names of environment variables to copy to the Ray workers, besides the
            secret-named ones (``*_API_KEY``, ``*_TOKEN``, ...) and ``*_BASE_URL``. Names only:
            a dict is refused (values are never passed; they are read from this environment).
        ray_connect_timeout: seconds to wait for ``ray_address`` to answer before raising
            ``RayConnectError`` (a ``ConnectionError`` naming ``ray_address``).
            secret-named ones (``*_API_KEY``, ``*_TOKEN``, ...) and ``*_BASE_URL``.
        eval_timeout: seconds one evaluation may take (``None``: no limit). A longer one is
            cancelled and recorded on its row as a ``TimeoutError``, and the run goes on. Async
            evaluators are cancelled; a sync evaluator's thread cannot be stopped, so it is left
            to finish in the background and its result is dropped. Cheap pure evaluators run
            inline (exact match, Levenshtein, ...) are not timed.

    Returns:
        an :class:`EvaluationResult`. Evaluator errors are recorded on their rows and counted;
        they never stop the run and never become scores.

    Raises:
        EvaluationInterrupted: on Ctrl-C (a ``KeyboardInterrupt``); ``.result`` holds what
            finished.
    """
    options = _options(locals())
    if options.engine == "ray":
        from openevals.evaluation.engines import load_ray_engine

        return load_ray_engine().evaluate_on_ray(data, evaluators, options)  # type: ignore[no-any-return]
    run = _Run(data, evaluators, options)
    try:
        drive(run.execute(), began=run.began, closed=run.closed)
    except (KeyboardInterrupt, asyncio.CancelledError, concurrent.futures.CancelledError):
        run.interrupted = True
        raise EvaluationInterrupted(run.result()) from None
    return run.result()


async def aevaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
    systems: Sequence[str] | Mapping[str, str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    ray_batch_size: int = DEFAULT_RAY_BATCH_SIZE,
    ray_env: Sequence[str] | None = None,
    ray_connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    eval_timeout: float | None = None,
) -> EvaluationResult:
    """Async twin of :func:`evaluate` (same arguments and result).

    Cancelling the task stops the run cleanly: in-flight calls are cancelled, everything finished
    stays in the ``output=`` file, and the ``CancelledError`` propagates.
    """
    options = _options(locals())
    if options.engine == "ray":
        from openevals.evaluation.engines import load_ray_engine

        return await load_ray_engine().aevaluate_on_ray(data, evaluators, options)  # type: ignore[no-any-return]
    run = _Run(data, evaluators, options)
    await run.execute()
    return run.result()
