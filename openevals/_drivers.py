"""The one pair of drivers for every sans-IO core.

Flows that do I/O (a judge conversation, a type-check run, a sandbox plan, a simulated
conversation) are written once, as generators: they *yield* a step that describes the I/O they
need (send this request, run this process, sleep this long) and *receive* its result. They never
perform I/O themselves, so one flow serves both the blocking and the asyncio world. This module
holds the only two loops that run such flows:

* :func:`drive` hands each step to a blocking ``perform(step)``;
* :func:`adrive` hands each step to ``perform(step)`` and awaits the result when it is awaitable.

Either way the flow sees the same protocol: the value ``perform`` returned is sent back into the
flow; an exception ``perform`` raised is thrown into the flow at the ``yield`` (so a flow may catch
it, e.g. to retry, or let it propagate to the caller); the flow's return value is the driver's
return value. The flow is always closed, so its ``finally``/``with`` blocks run even when the
caller is cancelled half-way (this matters for flows that own temporary directories).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

S = TypeVar("S")
T = TypeVar("T")


def drive(flow: Generator[S, Any, T], perform: Callable[[S], Any]) -> T:
    """Run ``flow`` to completion, performing each step with the blocking ``perform``."""
    try:
        step = next(flow)
        while True:
            try:
                reply = perform(step)
            except Exception as exc:
                step = flow.throw(exc)
            else:
                step = flow.send(reply)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        flow.close()


async def adrive(flow: Generator[S, Any, T], perform: Callable[[S], Awaitable[Any] | Any]) -> T:
    """Async twin of :func:`drive`: ``perform`` may return an awaitable, which is awaited."""
    try:
        step = next(flow)
        while True:
            try:
                reply = perform(step)
                if inspect.isawaitable(reply):
                    reply = await reply
            except Exception as exc:
                step = flow.throw(exc)
            else:
                step = flow.send(reply)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        flow.close()
