"""Calling a run's ``target`` and capturing the tokens it spent.

A target is ``target(inputs) -> outputs``, sync or async. Token usage is taken from LangChain's
usage callback when LangChain is in use, else from a ``usage`` / ``usage_metadata`` /
``token_usage`` entry (or attribute) of what the target returned.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from openevals.evaluation.pricing import add_usage, normalize_usage
from openevals.evaluation.records import Recorder, TargetInfo

__all__ = ["call_target", "run_target"]

InThread = Callable[[Callable[[], Any]], Awaitable[Any]]


async def run_target(
    target: Callable[..., Any],
    is_async: bool,
    fields: Mapping[str, Any],
    in_thread: InThread,
    recorder: Recorder,
) -> tuple[dict[str, Any], TargetInfo]:
    """Call ``target(fields["inputs"])``: ``(fields with the outputs it produced, its record)``.

    A failing target is recorded (type and redacted message) and leaves the fields unchanged.
    """
    start = time.perf_counter()
    try:
        value, usage = await call_target(target, is_async, fields.get("inputs"), in_thread)
    except Exception as exc:
        info = recorder.target(recorder.error(exc), time.perf_counter() - start, None)
        return dict(fields), info
    info = recorder.target(None, time.perf_counter() - start, usage)
    return {**fields, "outputs": value}, info


async def call_target(
    target: Callable[..., Any], is_async: bool, inputs: Any, in_thread: InThread
) -> tuple[Any, dict[str, int] | None]:
    """``(outputs, usage)`` of one call; a sync target runs through ``in_thread``."""
    if is_async:
        with _usage_callback() as cb:
            value = await target(inputs)
    else:
        value, usage = await in_thread(functools.partial(_capture_sync, target, inputs))
        if inspect.isawaitable(value):  # a sync function returning a coroutine
            value = await value
        return value, usage or _returned_usage(value)
    return value, _callback_usage(cb) or _returned_usage(value)


def _capture_sync(target: Callable[..., Any], inputs: Any) -> tuple[Any, dict[str, int] | None]:
    with _usage_callback() as cb:
        value = target(inputs)
    return value, _callback_usage(cb)


@contextlib.contextmanager
def _usage_callback() -> Iterator[Any]:
    if "langchain_core" not in sys.modules:
        yield None
        return
    try:
        from langchain_core.callbacks import get_usage_metadata_callback
    except ImportError:  # pragma: no cover - older langchain-core
        yield None
        return
    with get_usage_metadata_callback() as cb:
        yield cb


def _callback_usage(cb: Any) -> dict[str, int] | None:
    per_model = getattr(cb, "usage_metadata", None)
    if not per_model:
        return None
    total: dict[str, int] | None = None
    for usage in per_model.values():
        total = add_usage(total, normalize_usage(usage))
    return total


def _returned_usage(value: Any) -> dict[str, int] | None:
    if isinstance(value, Mapping):
        for key in ("usage", "usage_metadata", "token_usage"):
            usage = normalize_usage(value.get(key))
            if usage is not None:
                return usage
        return None
    return normalize_usage(getattr(value, "usage_metadata", None))
