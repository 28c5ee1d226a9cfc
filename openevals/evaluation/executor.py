"""Running one row: the target, then every evaluator not finished yet; outcomes go to a sink.

:class:`RowExecutor` is the per-row code every engine shares: it decides what is left to run for
a row (resume), gets each outcome from a :class:`Calls` object and hands it to a :class:`Sink`.
:class:`LiveCalls` runs things (cheap pure evaluators inline, async ones on the loop, sync ones in
the thread pool, under the adaptive limit of :mod:`.concurrency`, with ``eval_timeout``); the Ray
driver's calls replay the workers' outcomes instead. With ``eval_timeout`` set, pure evaluators too
run in the pool under it (:func:`under_timeout`): a pure evaluator is cheap per character, but a
long text can still keep a reference metric busy for minutes, and a call on the loop's own thread
cannot be stopped. The sink is :class:`~.recording.RunRecords`
(records, file, statistics) or, on a Ray worker, one that keeps the raw outcomes.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from openevals._contract import is_async_callable
from openevals._repr import show
from openevals.data.rows import Row, RowDataError, RowReader
from openevals.evaluation.checkpoint import Previous
from openevals.evaluation.concurrency import Limiter, Slot
from openevals.evaluation.evaluators import (
    Outcome,
    RunEvaluator,
    counting_cache,
    prepare_evaluators,
)
from openevals.evaluation.loop import Offload
from openevals.evaluation.options import RunOptions
from openevals.evaluation.pairwise import PairwisePlan
from openevals.evaluation.records import Recorder, ResultRow, TargetInfo
from openevals.evaluation.target import run_target

if TYPE_CHECKING:
    from openevals.evaluation.blocks import ColumnBlock

__all__ = ["Calls", "EngineRun", "LiveCalls", "RowExecutor", "Sink", "run_rows", "under_timeout"]

_T = TypeVar("_T")


class Sink(Protocol):
    """Where a :class:`RowExecutor` puts what happened to a row (see the module docs)."""

    def start_row(
        self,
        row: Row,
        fields: Mapping[str, Any],
        previous: Mapping[str, Mapping[str, Any]],
        pending: Sequence[RunEvaluator],
        target: TargetInfo | None,
        target_ran: bool,
    ) -> ResultRow:
        """The row's record, with the pairs finished earlier (``previous``)."""
        ...

    def target(self, row: Row, fields: Mapping[str, Any], info: TargetInfo) -> None:
        """The target ran for ``row`` (``fields`` hold its outputs)."""
        ...

    def reused_target(self) -> None:
        """A target call recorded by an earlier run was reused."""
        ...

    def pair(self, ev: RunEvaluator, rec: ResultRow, outcome: Outcome) -> None:
        """One row x evaluator pair finished."""
        ...

    def complete_row(self, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        """Every pair of the row finished."""
        ...


class Calls(Protocol):
    """How a :class:`RowExecutor` gets the outcome of a target or evaluator call."""

    async def target(self, row: Row) -> tuple[dict[str, Any], TargetInfo]: ...

    def inline(self, ev: RunEvaluator, row: Row, fields: Mapping[str, Any]) -> Outcome: ...

    async def pair(self, ev: RunEvaluator, row: Row, fields: Mapping[str, Any]) -> Outcome: ...


def under_timeout(
    evaluators: Sequence[RunEvaluator], eval_timeout: float | None
) -> list[RunEvaluator]:
    """The run's evaluators as they run under ``eval_timeout``: with a limit, every inline (pure)
    evaluator except those whose time is linear in their input (``EvaluatorInfo.linear``:
    ``exact_match``) runs in the thread pool under the limit instead of on the loop's thread, so
    that a long text (a BLEU, chrF, TER or ROUGE pair, a Levenshtein distance) ends as a
    ``TimeoutError`` on its row at the limit instead of holding up the run. Without a limit
    nothing changes."""
    if eval_timeout is None:
        return list(evaluators)
    return [
        replace(ev, inline=False) if ev.inline and not (ev.info and ev.info.linear) else ev
        for ev in evaluators
    ]


class EngineRun(ABC):
    """What a run is on every engine (the local engine's run, a Ray worker's): the evaluators as
    the rows meet them (resolved; one per pair of systems with ``systems=``; under the engine's
    ``eval_timeout``, :func:`under_timeout`), the target, recorder, prices, judge cache and the
    work finished earlier (:class:`~.checkpoint.Previous`). The columnar path
    (:mod:`.blocks`) reads it, with the calls and row code the engine made from it and the
    three methods below."""

    reader: RowReader | None
    """The raw rows to read in blocks (``None``: rows arrive normalised, :meth:`next_row`)."""
    cache: Any
    calls: LiveCalls
    executor: RowExecutor

    def __init__(self, evaluators: Any, options: RunOptions) -> None:
        self.options = options
        self.evaluators: list[RunEvaluator] = prepare_evaluators(evaluators, model=options.model)
        self.pairwise: PairwisePlan | None = None
        if options.systems is not None:  # one evaluator per evaluator x pair of systems
            self.pairwise = PairwisePlan.create(options.systems, self.evaluators)
            self.evaluators = self.pairwise.evaluators
        self.evaluators = under_timeout(self.evaluators, options.engine.eval_timeout)
        self.target = options.target
        self.recorder = Recorder()
        self.prices = options.budget.table
        self.previous = Previous()

    @abstractmethod
    def next_row(self) -> Row | None:
        """The next normalised row, or ``None`` at the end."""

    async def anext_row(self) -> Row | None:
        """:meth:`next_row`, for :func:`run_rows`."""
        return self.next_row()

    @abstractmethod
    def block(self) -> AbstractContextManager[None]:
        """Rows finished one by one inside are written and kept together."""

    @abstractmethod
    def add_block(self, block: ColumnBlock) -> None:
        """A scored block: counted, written and kept."""


class LiveCalls:
    """Calls that run: see the module docs."""

    def __init__(self, run: EngineRun, limiter: Limiter, offload: Offload) -> None:
        self._target: Any = run.target
        self._target_is_async = run.target is not None and is_async_callable(run.target)
        self.recorder = run.recorder
        self.cache = run.cache
        self.limiter = limiter
        self.offload = offload
        self.eval_timeout = run.options.engine.eval_timeout
        self.batched: dict[tuple[str, str], Outcome] = {}
        """Outcomes a ``batch`` form already computed, by ``(row id, evaluator name)``."""

    async def target(self, row: Row) -> tuple[dict[str, Any], TargetInfo]:
        async with self.limiter.slot(report=False):  # the target's own outcome steers nothing
            return await run_target(
                self._target, self._target_is_async, row.fields, self.offload.call, self.recorder
            )

    def inline(self, ev: RunEvaluator, row: Row, fields: Mapping[str, Any]) -> Outcome:
        done = self.batched.pop((row.id, ev.name), None)
        return done if done is not None else self.run_inline(ev, fields)

    def run_inline(self, ev: RunEvaluator, fields: Mapping[str, Any]) -> Outcome:
        """Call a cheap pure evaluator on this thread."""
        with counting_cache(self.cache) as counting:
            start = time.perf_counter()
            try:
                results, error = ev.call_inline(fields), None
            except Exception as exc:
                results, error = [], self.recorder.error(exc)
            elapsed = time.perf_counter() - start
        return results, error, elapsed, counting.counts

    async def pair(self, ev: RunEvaluator, row: Row, fields: Mapping[str, Any]) -> Outcome:
        done = self.batched.pop((row.id, ev.name), None)
        if done is not None:
            return done
        async with self.limiter.slot() as slot:
            with counting_cache(self.cache) as counting:
                start = time.perf_counter()
                try:
                    if self.eval_timeout is not None:
                        results = await self._timed(ev, fields, slot)
                    else:
                        results = await ev.call(fields, self.offload.call)
                    error = None
                except Exception as exc:
                    results, error, slot.error = [], self.recorder.error(exc), exc
                elapsed = time.perf_counter() - start
        return results, error, elapsed, counting.counts

    async def _timed(self, ev: RunEvaluator, fields: Mapping[str, Any], slot: Slot) -> Any:
        """The evaluation under ``eval_timeout``, which bounds each attempt and counts neither the
        judge's back-off sleeps nor its waits for a slot. A judge whose attempt runs out (a hung
        request) is tried again, :data:`JUDGE_ATTEMPTS` times in all: a stuck connection must not
        cost a row that would succeed on retry. The last expiry is recorded as a ``TimeoutError``
        (the runner's own timeout: it never counts as server congestion)."""
        timeout = self.eval_timeout
        assert timeout is not None
        attempts = JUDGE_ATTEMPTS if ev.info is not None and ev.info.judge else 1
        for _ in range(attempts):
            finished, value = await _within(ev.call(fields, self.offload.call), timeout, slot)
            if finished:
                return value
        tried = f" in each of {attempts} attempts" if attempts > 1 else ""
        raise TimeoutError(
            f"evaluator {show(ev.name)} did not finish within eval_timeout={timeout:g} s{tried} "
            "and was cancelled (a sync evaluator's thread is left to finish; its result is dropped)"
        )


#: Attempts a judge evaluation gets under ``eval_timeout`` (the first, and two after a timeout).
JUDGE_ATTEMPTS = 3


class RowExecutor:
    """Runs what is left of each row (see the module docs)."""

    def __init__(self, run: EngineRun, calls: Calls, sink: Sink) -> None:
        self.evaluators = list(run.evaluators)
        self.calls = calls
        self.sink = sink
        self.previous = run.previous
        self.recorder = run.recorder
        self.has_target = run.target is not None

    async def process_row(self, row: Row) -> bool:
        """Run what is left for ``row``; returns whether it awaited anything."""
        finished = self.previous.finished(row)
        if self.previous.evals:
            self.previous.count_changed(row, finished)
        pending = [ev for ev in self.evaluators if ev.name not in finished]
        fields: Mapping[str, Any] = row.fields
        suspended = target_ran = False
        target_info: TargetInfo | None = None
        if self.has_target and row.problem is None:
            reuse = self.previous.reusable_target(row, pending=bool(pending))
            if reuse is not None:
                fields = {**fields, "outputs": reuse[0]}
                target_info = reuse[1]  # type: ignore[assignment]
                self.sink.reused_target()
            elif pending:
                fields, target_info = await self.calls.target(row)
                self.sink.target(row, fields, target_info)
                target_ran = suspended = True
        rec = self.sink.start_row(row, fields, finished, pending, target_info, target_ran)
        if pending:
            if row.problem is not None:  # a value no record can hold: an error, not a crash
                error = self.recorder.error(RowDataError(row.problem))
                for ev in pending:
                    self.sink.pair(ev, rec, ([], error, 0.0, None))
            elif target_info is not None and target_info.get("status") == "error":
                error = Recorder.target_failed(target_info)
                for ev in pending:
                    self.sink.pair(ev, rec, ([], error, 0.0, None))
            else:
                for ev in pending:
                    if ev.inline:
                        self.sink.pair(ev, rec, self.calls.inline(ev, row, fields))
                others = [ev for ev in pending if not ev.inline]
                if len(others) == 1:
                    await self._pair(others[0], row, rec, fields)
                    suspended = True
                elif others:
                    await asyncio.gather(*(self._pair(ev, row, rec, fields) for ev in others))
                    suspended = True
        self.sink.complete_row(rec, fields)
        return suspended

    async def _pair(
        self, ev: RunEvaluator, row: Row, rec: ResultRow, fields: Mapping[str, Any]
    ) -> None:
        self.sink.pair(ev, rec, await self.calls.pair(ev, row, fields))


_YIELD_EVERY = 64


async def run_rows(
    executor: RowExecutor, next_row: Callable[[], Awaitable[Row | None]], workers: int
) -> None:
    """Run every row ``next_row`` gives with ``workers`` rows in flight (cancelled together)."""

    async def worker() -> None:
        since_yield = 0
        while True:
            row = await next_row()
            if row is None:
                return
            suspended = await executor.process_row(row)
            since_yield += 1
            if not suspended and since_yield >= _YIELD_EVERY:
                since_yield = 0
                await asyncio.sleep(0)  # cheap rows still let the loop breathe

    tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _within(call: Awaitable[_T], timeout: float, slot: Slot) -> tuple[bool, _T | None]:
    """``(True, await call)``, or ``(False, None)`` once ``call`` has worked ``timeout`` seconds
    (it is then cancelled); time it spends paused (``slot.paused``: back-off sleeps, waits for a
    slot) extends the deadline. An evaluator's own ``TimeoutError`` passes through unchanged.
    A sync evaluator runs in a pool thread, which cannot be stopped: its result is dropped.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(call)
    start, paused = loop.time(), slot.paused
    try:
        while True:
            left = start + timeout + (slot.paused - paused) - loop.time()
            if left <= 0:
                break
            done, _ = await asyncio.wait((task,), timeout=left)
            if done:
                return True, task.result()
    except BaseException:
        task.cancel()
        raise
    task.cancel()
    # Do not wait for a cancelled call that may ignore cancellation; just collect its outcome.
    task.add_done_callback(_collect)
    return False, None


def _collect(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
