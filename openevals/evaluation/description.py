"""What the batch runner, the CLI and the report may know about an evaluator.

:func:`describe_evaluator` is the only place in the package that looks at an evaluator.
Everything else reads the :class:`EvaluatorDescription` it returns. It comes from the
evaluator's :class:`~openevals._contract.EvaluatorInfo`, which every evaluator the package's
factories make carries (and which a user may attach with :func:`openevals._contract.attach_info`).
Without one nothing is known: a user's callable is neither pure nor a judge, and runs in the
worker pool.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openevals._contract import info_of

__all__ = [
    "EvaluatorDescription",
    "describe_evaluator",
    "display_name",
    "is_async_callable",
]

_GENERIC_NAMES = frozenset(
    {"evaluator", "_evaluator", "<lambda>", "wrapper", "inner", "scorer", "_scorer", "fn"}
)


@dataclass(frozen=True)
class EvaluatorDescription:
    """A small, typed summary of one evaluator.

    Attributes:
        run_name: the name its LangSmith runs get (``None`` when it does not say).
        feedback_keys: the feedback keys it reports, when known ahead of a call (else empty).
        model: the judge model's name, without the ``provider:`` prefix (``None`` without a judge
            or when the judge does not tell).
        pure: deterministic, free of I/O and cheap (microseconds): safe to call on the event-loop
            thread.
        uses_judge: it asks an LLM judge (so it may spend tokens and money).
        is_async: calling it returns an awaitable.
    """

    run_name: str | None = None
    feedback_keys: tuple[str, ...] = ()
    model: str | None = None
    pure: bool = False
    uses_judge: bool = False
    is_async: bool = False


def describe_evaluator(evaluator: Callable[..., Any]) -> EvaluatorDescription:
    """The :class:`EvaluatorDescription` of ``evaluator`` (any callable; never raises for one)."""
    target = _unwrap(evaluator)
    info = info_of(target)
    if info is not None:
        return EvaluatorDescription(
            run_name=info.run_name,
            feedback_keys=info.feedback_keys,
            model=info.model,
            pure=info.pure,
            uses_judge=info.judge,
            is_async=info.is_async,
        )
    # A user's callable: nothing says it is cheap or pure.
    return EvaluatorDescription(is_async=is_async_callable(target))


def display_name(fn: Any) -> str:
    """The name a function goes by in results: its ``__name__`` (without leading underscores)
    unless that is generic (``evaluator``, ``<lambda>``, ...), else its run name."""
    target = _unwrap(fn)
    name = getattr(target, "__name__", None)
    if isinstance(name, str) and name not in _GENERIC_NAMES:
        return name.lstrip("_") or name
    run_name = describe_evaluator(target).run_name
    if run_name:
        return run_name
    if isinstance(name, str):
        return name
    return type(target).__name__


def is_async_callable(fn: Any) -> bool:
    """Whether calling ``fn`` returns a coroutine (functions and objects with ``async __call__``)."""
    fn = _unwrap(fn)
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _unwrap(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn
