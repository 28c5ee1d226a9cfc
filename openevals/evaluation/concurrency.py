"""Adaptive concurrency for batch runs: AIMD, as TCP does it for congestion.

A run starts with ``concurrency`` calls in flight. When the model server pushes back - HTTP 429
(rate limit), 503 or 529 (overloaded), a refused or dropped connection - the limit is cut in half,
and no new call starts before the server's ``Retry-After`` has passed. A timeout is no such
signal (a hung request says nothing of the server's load). While calls succeed the limit grows
again, additively, and never above the caller's ``concurrency``.

Three refinements keep the runner near the server's real capacity instead of see-sawing between
half of it and all of it:

* noise is not congestion: an overload signal without ``Retry-After`` while at most 10% of the
  last ``NOISE_WINDOW`` outcomes were such signals cuts nothing, so
  a server failing a few percent of requests at random does not halve the run again and again;

* one back-off per congestion episode: a failure of a call that started before the last back-off
  reports the congestion already answered, so fifty calls rejected at once halve the limit once;
* the limit remembers the highest level that completed a full window of calls (``good``) and
  the lowest level that failed (``ceiling``). After a back-off it returns to ``good`` quickly
  (+1 per success), grows one step per window of successes below the ``ceiling`` (the classic
  additive increase), and probes at the ``ceiling`` only once every ``probe_windows`` windows,
  and not before ``QUIET_PAUSES`` times the last ``Retry-After`` pause has passed. Only calls
  that started under the current limit count. A failure at a level that had proved good means
  the capacity dropped (or a window was lucky): ``good`` steps to just below it.

:class:`AIMD` is the pure controller (a clock is passed in, nothing awaits). :class:`Limiter`
applies it to an event loop: at most ``limit`` slots are held at once. A :class:`Slot` is what
one row x evaluator (or target) call holds; the judge reports each model request through it
(``openevals._judge.clients.active_admission``), and a request retried after a rejection waits
for a slot again, so retries obey the lowered limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from openevals._judge.clients import active_admission
from openevals._judge.errors import is_timeout, retry_after_seconds
from openevals._repr import show
from openevals.evaluation.engines.engine import is_count

__all__ = ["AIMD", "Limiter", "Slot", "is_overload"]

#: Outcomes the controller remembers to tell noise from congestion: overload signals without
#: ``Retry-After`` that are at most 10% of them (once half of them are known) are noise.
NOISE_WINDOW = 40
#: Longest pause a ``Retry-After`` hint may impose on the whole run, in seconds.
MAX_PAUSE = 60.0
#: After a back-off that paused the run, no probing at the ceiling for this many such pauses.
QUIET_PAUSES = 20
_OVERLOAD_STATUS = frozenset({429, 503, 529})


def is_overload(exc: BaseException) -> bool:
    """Does ``exc`` carry a server's congestion signal: 429, 503 or 529, or a connection the
    server refused or dropped? A timeout does not: a hung request says nothing of the server's
    load, and the runner's own ``eval_timeout`` says even less (counting them starved healthy
    rows)."""
    for source in (exc, getattr(exc, "response", None)):
        status = getattr(source, "status_code", None)
        if isinstance(status, int) and not isinstance(status, bool):
            return status in _OVERLOAD_STATUS
    if is_timeout(exc):  # before the connection check: the SDK's timeout is a connection error
        return False
    if isinstance(exc, ConnectionError):
        return True
    return any(cls.__name__ in _CONNECTION_ERRORS for cls in type(exc).__mro__)


# Client libraries' connection failures (not subclasses of the built-in ConnectionError).
_CONNECTION_ERRORS = frozenset(
    {"APIConnectionError", "ConnectError", "RemoteProtocolError", "ClientConnectionError"}
)


class AIMD:
    """Additive-increase / multiplicative-decrease limit on calls in flight (pure).

    ``cap`` is the caller's ``concurrency`` (the start and the most ever allowed), ``floor`` the
    least, ``decrease`` the factor of a back-off and ``probe_windows`` how many windows of
    successes one probing step at the remembered ceiling takes.
    """

    def __init__(
        self, cap: int, *, floor: int = 1, decrease: float = 0.5, probe_windows: int = 16
    ) -> None:
        if not is_count(cap):
            raise ValueError(f"`cap` must be an integer >= 1; got {show(cap)}")
        if not is_count(floor) or floor > cap:
            raise ValueError(
                f"`floor` must be an integer between 1 and cap={cap}; got {show(floor)}"
            )
        if not 0.0 < decrease < 1.0:
            raise ValueError(
                f"`decrease` must be between 0 and 1 (exclusive); got {show(decrease)}"
            )
        if not is_count(probe_windows):
            raise ValueError(f"`probe_windows` must be an integer >= 1; got {show(probe_windows)}")
        self.cap, self.floor = cap, floor
        self.decrease, self.probe_windows = decrease, probe_windows
        self.limit = float(cap)
        self.epoch = 0  #: bumped by every back-off; a call remembers the epoch it started in
        self.backoffs = 0  #: how many times the limit was cut
        self.paused_until = 0.0  #: no call starts before this clock time (``Retry-After``)
        self.good = 0  #: the highest level that completed a full window without a failure
        self.ceiling: int | None = None  #: the lowest level that failed (None: none known)
        self._streak = 0  #: successes since the last back-off
        self._quiet_until = 0.0  #: no probing at the ceiling before this clock time
        self.lowest = cap  #: the lowest limit of the run
        #: The last outcomes (True: an overload signal), to tell noise from congestion.
        self._recent: deque[bool] = deque(maxlen=NOISE_WINDOW)

    @property
    def current(self) -> int:
        """The number of calls allowed in flight now."""
        return max(self.floor, min(self.cap, int(self.limit + 1e-9)))  # 1e-9: float sums

    def succeeded(self, now: float | None = None, epoch: int | None = None) -> None:
        """A call that started in ``epoch`` went through at clock time ``now``: grow
        additively. Calls that started before the last back-off ran under the old limit and
        say nothing about the new one."""
        self._recent.append(False)
        if epoch is not None and epoch != self.epoch:
            return
        level = self.current
        self._streak += 1
        if self._streak >= level:  # a full window at this level without a failure
            self.good = max(self.good, level)
            if self.ceiling is not None and level >= self.ceiling:
                self.ceiling = None  # the probe held: the old ceiling no longer applies
        if self.limit < self.good:
            self.limit = min(float(self.good), self.limit + 1.0)  # back to the proven level
        elif self.ceiling is not None and level + 1 >= self.ceiling:
            # Probe the ceiling rarely: a failed probe costs a pause of the whole run.
            if now is None or now >= self._quiet_until:
                self.limit += 1.0 / (level * self.probe_windows)
        else:
            self.limit += 1.0 / level  # +1 per window of successes
        self.limit = min(self.limit, float(self.cap))

    def overloaded(self, epoch: int, now: float, retry_after: float | None = None) -> bool:
        """A call that started in ``epoch`` was rejected (429/503) or timed out at ``now``.

        Honours ``retry_after`` (seconds) by pausing new calls; cuts the limit unless this
        episode was already answered. Returns whether it backed off.
        """
        pause = min(retry_after, MAX_PAUSE) if retry_after is not None and retry_after > 0 else 0
        self.paused_until = max(self.paused_until, now + pause)
        self._recent.append(True)
        if epoch != self.epoch:
            return False  # started before the last back-off: the same congestion
        seen = len(self._recent)
        if not pause and seen >= NOISE_WINDOW // 2 and sum(self._recent) * 10 <= seen:
            # A one-off fault among many successes, with no Retry-After: noise (a flaky server
            # at a few percent of faults must not halve the run again and again), not congestion.
            return False
        self._quiet_until = now + QUIET_PAUSES * pause
        level = self.current
        if self.good >= level:
            # A level that had proved good fails now: the capacity dropped, or one window was
            # luckier than the server's limit. Trust one step below the failure only.
            self.good = level - 1 if level - 1 >= self.floor else 0
        self.ceiling = level if self.ceiling is None else min(self.ceiling, level)
        self.limit = max(float(self.floor), self.limit * self.decrease)
        self.lowest = min(self.lowest, self.current)
        self.epoch += 1
        self.backoffs += 1
        self._streak = 0
        return True


class Limiter:
    """At most ``controller.current`` slots held at once on one event loop, FIFO."""

    def __init__(self, controller: AIMD, clock: Callable[[], float] = time.monotonic) -> None:
        self.controller = controller
        self.clock = clock
        self.held = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _open(self) -> bool:
        return self.held < self.controller.current and self.clock() >= self.controller.paused_until

    async def acquire(self) -> None:
        self._loop = asyncio.get_running_loop()
        if not self._waiters and self._open():
            self.held += 1
            return
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append(waiter)
        self._wake()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as it was cancelled: hand the slot on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.held -= 1
        self._wake()

    def _wake(self) -> None:
        """Grant waiting slots while the limit allows; come back when a pause ends."""
        pause = self.controller.paused_until - self.clock()
        if pause > 0:
            if self._timer is None and self._waiters and self._loop is not None:
                self._timer = self._loop.call_later(pause, self._resume)
            return
        while self._waiters and self.held < self.controller.current:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.held += 1
                waiter.set_result(None)

    def _resume(self) -> None:
        self._timer = None
        self._wake()

    def succeeded(self, epoch: int | None = None) -> None:
        self.controller.succeeded(self.clock(), epoch)
        self._wake()

    def overloaded(self, epoch: int, exc: BaseException) -> None:
        self.controller.overloaded(epoch, self.clock(), retry_after_seconds(exc))

    @contextlib.asynccontextmanager
    async def slot(self, *, report: bool = True) -> AsyncIterator[Slot]:
        """Hold one slot for a call. A judge reports each model request through it; with
        ``report``, a call that made no judge request reports itself when the block ends (set
        ``slot.error`` first when it failed)."""
        slot = Slot(self)
        await slot.take()
        epoch = self.controller.epoch
        token = active_admission.set(slot)
        try:
            yield slot
        finally:
            active_admission.reset(token)
            if report and slot.requests == 0:
                slot.report(slot.error, epoch)
            slot.give_back()


class Slot:
    """One call's place under the limit, and the judge's admission hook for its requests."""

    def __init__(self, limiter: Limiter) -> None:
        self.limiter = limiter
        self.cap = limiter.controller.cap
        self.requests = 0  #: model requests reported through this slot
        self.error: BaseException | None = None  #: how the whole call failed, if it did
        #: Seconds the call spent waiting, not working: back-off sleeps of its judge and waits
        #: for a slot before a retry. ``eval_timeout`` does not count them.
        self.paused = 0.0
        self.loop = asyncio.get_running_loop()
        self._held = False
        self._lock = threading.Lock()

    async def take(self) -> None:
        await self.limiter.acquire()
        self._held = True

    def give_back(self) -> None:
        if self._held:
            self._held = False
            self.limiter.release()

    # ---------------------------------------------------------------- outcomes
    def report(self, error: BaseException | None, epoch: int | None = None) -> None:
        """Tell the controller how a call (one request, or a whole non-judge call) went."""
        limiter = self.limiter
        if error is None:
            limiter.succeeded(epoch)
        elif is_overload(error):
            limiter.overloaded(limiter.controller.epoch if epoch is None else epoch, error)
            # Make room at once: a retry of this call waits for a slot under the new limit.
            self.give_back()

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    # ---------------------------------------------------------------- the Admission protocol
    def note_pause(self, seconds: float) -> None:
        """The judge slept ``seconds`` between attempts (see :attr:`paused`)."""
        self.paused += seconds

    async def acall(self, request: Callable[[], Awaitable[Any]]) -> Any:
        if not self._held:
            waited = time.monotonic()
            await self.take()  # a retry after a rejection
            self.paused += time.monotonic() - waited
        self.requests += 1
        epoch = self.limiter.controller.epoch
        try:
            reply = await request()
        except BaseException as exc:
            if isinstance(exc, Exception):
                self.report(exc, epoch)
            raise
        self.report(None, epoch)
        return reply

    def call(self, request: Callable[[], Any]) -> Any:
        """Blocking twin of :meth:`acall`, for sync judges in the runner's thread pool."""
        if self._on_loop():  # a sync judge called on the loop itself: never block it
            return request()
        with self._lock:
            if not self._held:
                waited = time.monotonic()
                asyncio.run_coroutine_threadsafe(self.take(), self.loop).result()
                self.paused += time.monotonic() - waited
            self.requests += 1
        epoch = self.limiter.controller.epoch
        try:
            reply = request()
        except Exception as exc:
            if is_overload(exc):  # wait until the slot is given back, before any retry
                self._on_loop_and_wait(self.report, exc, epoch)
            raise
        with contextlib.suppress(RuntimeError):  # the loop is gone: the run has ended
            self.loop.call_soon_threadsafe(self.report, None, epoch)
        return reply

    def _on_loop_and_wait(self, fn: Callable[..., None], *args: Any) -> None:
        async def run() -> None:
            fn(*args)

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(run(), self.loop).result()
