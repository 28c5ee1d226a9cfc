"""How the judge reaches its model: the clients it builds itself, and the admission hook.

**Owned clients.** A judge made from a model string (``model="openai:gpt-4.1-mini"``) builds its
own OpenAI SDK client. Its async requests go through the SDK's aiohttp transport
(``openai.DefaultAioHttpClient``, from the ``openai[aiohttp]`` extra), which costs a fraction of
the CPU of the default httpx transport per request; every request is the SDK's own
``chat.completions.create``. Connections belong to the event loop that
opened them, so every running loop gets a client of its own (:class:`LoopClients`), with a
connection pool sized to the concurrency in use: the batch run's ``concurrency`` inside
``evaluate()``, the SDK's default limit elsewhere. The client is closed when its loop shuts
down (``asyncio.run`` and every ``asyncio.Runner`` close async generators at the end, and a
suspended one closes the client). A client the caller passed as ``judge=`` is never touched.

**Admission.** A batch run installs an :class:`Admission` in :data:`active_admission` (a
context variable, like the judge cache); :func:`send` / :func:`asend` route every model request
through it, so the run can hold requests back and learn of rate limits (429), overloads (503)
and timeouts as they happen, including the ones the judge retries by itself. Outside a run the
hook costs one ``ContextVar.get``.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

#: Connection pool of an owned async client used outside a batch run (the SDK's own default).
DEFAULT_POOL_SIZE = 1000


class Admission(Protocol):
    """What a batch run puts between the judge and its model (see the module docstring)."""

    #: The most requests the run lets be in flight at once (sizes owned connection pools).
    cap: int

    def call(self, request: Callable[[], Any]) -> Any:
        """Perform ``request()`` (blocking) once admitted, and report how it went."""

    async def acall(self, request: Callable[[], Awaitable[Any]]) -> Any:
        """Async twin of :meth:`call`."""


active_admission: ContextVar[Admission | None] = ContextVar(
    "openevals_judge_admission", default=None
)


def send(backend: Any, payload: Any) -> Any:
    """``backend.send(payload)``, through the active batch run's admission when there is one."""
    admission = active_admission.get()
    if admission is None:
        return backend.send(payload)
    return admission.call(lambda: backend.send(payload))


async def asend(backend: Any, payload: Any) -> Any:
    """Async twin of :func:`send`."""
    admission = active_admission.get()
    if admission is None:
        return await backend.asend(payload)
    return await admission.acall(lambda: backend.asend(payload))


def note_pause(seconds: float) -> None:
    """Tell the active batch run that the judge sleeps ``seconds`` between attempts, so that the
    run's ``eval_timeout`` does not count the back-off (an admission without the hook ignores it)."""
    hook = getattr(active_admission.get(), "note_pause", None)
    if hook is not None:
        hook(seconds)


def pool_size() -> int:
    """Connections an owned client opened now may need: the run's concurrency, else the default."""
    admission = active_admission.get()
    return admission.cap if admission is not None else DEFAULT_POOL_SIZE


def owned_async_client(template: Any, size: int) -> Any:
    """A copy of the SDK client ``template`` (same key, base URL, headers, timeout, auth) on a
    fresh pool of ``size`` connections of the SDK's aiohttp transport (httpx when the
    ``aiohttp`` extra is missing), without SDK retries (the judge's policy counts)."""
    import openai

    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
        max_connections=size, max_keepalive_connections=size
    )
    try:
        http_client = openai.DefaultAioHttpClient(limits=limits)
    except (AttributeError, RuntimeError):  # an SDK without aiohttp support, or no aiohttp
        http_client = openai.DefaultAsyncHttpxClient(limits=limits)
    return template.with_options(http_client=http_client, max_retries=0)


@dataclass(eq=False)
class _Entry:
    """The clients of one loop (the newest first) and the generator that closes them."""

    clients: list[Any]
    size: int
    closer: Any = None


class LoopClients:
    """One owned async client per running event loop, built by ``factory(pool_size)``.

    A later request on the same loop that needs a bigger pool (a run with a higher
    ``concurrency``) gets a new client; the old one finishes its requests and is closed with the
    loop, like the new one.
    """

    def __init__(self, factory: Callable[[int], Any]) -> None:
        self._factory = factory
        self._entries: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry] = (
            weakref.WeakKeyDictionary()
        )
        # When the judge goes away while its loops live on (the runner's shared loop), close
        # its clients there; at interpreter exit the loops' own shutdown does it.
        weakref.finalize(self, _close_on_their_loops, self._entries).atexit = False

    def get(self) -> Any:
        """The client of the running loop, with a pool of at least :func:`pool_size` connections."""
        loop = asyncio.get_running_loop()
        entry = self._entries.get(loop)
        needed = pool_size()
        if entry is not None and entry.size >= needed:
            return entry.clients[0]
        client = self._factory(needed)
        if entry is None:
            entry = self._entries[loop] = _Entry([client], needed)
            entry.closer = _close_at_shutdown(self._entries, loop, entry)
        else:
            entry.clients.insert(0, client)
            entry.size = needed
        return client

    def size(self) -> int | None:
        """The pool size of the running loop's newest client (None: none built on this loop)."""
        entry = self._entries.get(asyncio.get_running_loop())
        return None if entry is None else entry.size


_closing: set[asyncio.Task[Any]] = set()  # closing tasks, kept until done


async def _close_entry(entry: _Entry) -> None:
    clients, entry.clients = entry.clients, []
    for client in clients:
        with contextlib.suppress(Exception):  # best effort while shutting down
            await client.close()


def _spawn_close(entry: _Entry) -> None:
    task = asyncio.ensure_future(_close_entry(entry))
    _closing.add(task)
    task.add_done_callback(_closing.discard)


def _close_on_their_loops(
    entries: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry],
) -> None:
    for loop, entry in list(entries.items()):
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop stopped meanwhile
                loop.call_soon_threadsafe(_spawn_close, entry)


def _close_at_shutdown(
    entries: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry],
    loop: asyncio.AbstractEventLoop,
    entry: _Entry,
) -> Any:
    """An async generator started and suspended on the running loop: when the loop shuts its
    async generators down (``asyncio.run`` and ``asyncio.Runner`` do), it resumes, forgets the
    loop's entry and closes its clients."""
    loop_ref = weakref.ref(loop)  # the entry is a value keyed by the loop: no strong reference

    async def closer() -> AsyncIterator[None]:
        try:
            yield
        finally:
            current = loop_ref()
            if current is not None and entries.get(current) is entry:
                del entries[current]
            await _close_entry(entry)

    gen = closer()
    step: Any = gen.__anext__()  # the first step registers the generator with the running loop
    with contextlib.suppress(StopIteration):
        step.send(None)
    return gen
