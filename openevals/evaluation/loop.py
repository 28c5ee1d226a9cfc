"""Event-loop plumbing of the batch runner.

* :class:`LoopThread` - one event loop in a daemon thread, shared by every sync ``evaluate`` call.
* :func:`run_on_loop` - run a coroutine on that loop from sync code and wait; Ctrl-C cancels it and
  waits for its clean-up.
* :class:`Offload` - a thread pool for sync evaluators and targets that carries the caller's
  context variables (so the judge cache reaches the thread).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import functools
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["LoopThread", "Offload", "run_on_loop"]


class LoopThread:
    """One event loop in a daemon thread, shared by every sync :func:`evaluate` call.

    Async clients (``AsyncOpenAI``, LangChain's cached httpx clients) keep connections bound to
    the loop that first used them; running every sync evaluation on the same long-lived loop lets
    a process call ``evaluate`` many times with the same async judges.
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._thread is None or not cls._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=main, name="openevals-evaluate", daemon=True)
                thread.start()
                ready.wait()
                cls._loop, cls._thread = loop, thread
                atexit.register(cls._close_async_generators, loop)
            return cls._loop

    @staticmethod
    def _close_async_generators(loop: asyncio.AbstractEventLoop) -> None:
        """At exit, let async generators on the loop finish: the judge's own HTTP clients
        close their connections that way (see ``openevals._judge.clients``)."""
        if loop.is_closed() or not loop.is_running():
            return
        future = asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop)
        with contextlib.suppress(Exception):
            future.result(timeout=5)

    @classmethod
    def is_current(cls) -> bool:
        return cls._thread is not None and threading.current_thread() is cls._thread


def run_on_loop(
    work: Coroutine[Any, Any, None], *, began: threading.Event, closed: threading.Event
) -> None:
    """Run ``work`` on the shared loop and wait for it.

    ``began`` is set by ``work`` when it starts and ``closed`` when its clean-up is done; on
    Ctrl-C the task is cancelled and this waits for ``closed`` (a task cancelled before it began
    has no clean-up to wait for) before re-raising ``KeyboardInterrupt``.
    """
    if LoopThread.is_current():
        work.close()
        raise RuntimeError(
            "evaluate() was called from inside an evaluator or target of another evaluate() "
            "run; use `await aevaluate(...)` there"
        )
    future = asyncio.run_coroutine_threadsafe(work, LoopThread.get())
    try:
        while True:
            try:
                future.result(timeout=0.25)
                return
            except concurrent.futures.TimeoutError:
                continue
    except KeyboardInterrupt:
        future.cancel()
        deadline = time.monotonic() + 1.0
        while not closed.wait(0.05):
            if not began.is_set() and future.done() and time.monotonic() > deadline:
                break
        raise


class Offload:
    """A lazily started thread pool of ``workers`` threads that keeps context variables."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None

    async def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` in a pool thread, with a copy of the caller's context."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self.workers, thread_name_prefix="openevals-eval"
            )
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(ctx.run, fn))

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
