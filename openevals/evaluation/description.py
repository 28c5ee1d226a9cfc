"""What the batch runner, the CLI and the report may know about an evaluator.

:func:`describe_evaluator` is the only place in the package that looks at an evaluator.
Everything else reads the :class:`EvaluatorDescription` it returns. It comes from, in order:

* an ``openevals_description`` attribute (an :class:`EvaluatorDescription` set by the caller);
* the evaluator's :class:`~openevals._contract.EvaluatorInfo`, which every evaluator the
  package's factories make carries (deterministic families included);
* for judges that still carry a ``core`` instead of info, what that core says (run name,
  feedback key, model); this fallback goes once every judge factory attaches info;
* otherwise nothing is known: a user's callable is neither pure nor a judge.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openevals._contract import info_of

__all__ = [
    "DESCRIPTION_ATTRIBUTE",
    "EvaluatorDescription",
    "describe_evaluator",
    "display_name",
    "is_async_callable",
]

DESCRIPTION_ATTRIBUTE = "openevals_description"
"""The attribute an evaluator may carry with its own :class:`EvaluatorDescription`."""

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
    own = getattr(target, DESCRIPTION_ATTRIBUTE, None)
    if isinstance(own, EvaluatorDescription):
        return own
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
    return _inspect(target)


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


def _inspect(fn: Any) -> EvaluatorDescription:
    """Evaluators without an :class:`~openevals._contract.EvaluatorInfo`: judges that still
    carry a ``core`` (until every judge factory attaches info), and callables of the user."""
    is_async = is_async_callable(fn)
    core = getattr(fn, "core", None)
    if core is not None:
        run_name = getattr(core, "run_name", None)
        key = getattr(core, "feedback_key", None)
        return EvaluatorDescription(
            run_name=run_name if isinstance(run_name, str) and run_name else None,
            feedback_keys=(key,) if isinstance(key, str) and key else (),
            model=_judge_model(core),
            pure=False,
            uses_judge=True,
            is_async=is_async,
        )
    # A callable that carries no info and no judge core: a user's function. Nothing says it is
    # cheap or pure, so it runs in the worker pool.
    return EvaluatorDescription(is_async=is_async)


def _judge_model(core: Any) -> str | None:
    """The model name of a judge core: its backend's, else the ``provider:model`` string's."""
    backend = getattr(core, "_backend", None)
    name = getattr(backend, "model_name", None)
    if not isinstance(name, str) or not name:
        raw = getattr(core, "_model", None)
        name = raw.split(":", 1)[1] if isinstance(raw, str) and ":" in raw else raw
    return name if isinstance(name, str) and name else None
