"""The options of ``evaluate`` / ``aevaluate`` and their validation.

:meth:`RunOptions.check` validates everything but the data and the evaluators (see
:mod:`openevals.evaluation.evaluators`) before anything runs, so a bad argument fails at once with
a message naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_CONCURRENCY", "RunOptions"]

DEFAULT_CONCURRENCY = 16
DEFAULT_BATCH_SIZE = 64


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class RunOptions:
    """Validated run options (the keyword arguments of :func:`~openevals.evaluation.evaluate`)."""

    target: Callable[..., Any] | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    cache: Any = None
    group_by: str | None = None
    progress: Any = True
    output: str | os.PathLike[str] | None = None
    batch_metrics: tuple[Callable[..., Any], ...] = ()
    accumulate: Callable[..., Any] | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    prices: Mapping[str, Any] | None = None
    retry_errors: bool = False
    model: str | None = None

    @classmethod
    def check(
        cls,
        *,
        target: Callable[..., Any] | None,
        concurrency: int,
        cache: Any,
        group_by: str | None,
        progress: Any,
        output: str | os.PathLike[str] | None,
        batch_metrics: Sequence[Callable[..., Any]] | None,
        accumulate: Callable[..., Any] | None,
        batch_size: int,
        prices: Mapping[str, Any] | None,
        retry_errors: bool,
        model: str | None,
    ) -> RunOptions:
        """Validate the arguments; raises ``TypeError`` / ``ValueError`` naming the bad one."""
        if not _is_count(concurrency):
            raise ValueError(f"concurrency must be an integer >= 1; got {concurrency!r}")
        if group_by is not None and (not isinstance(group_by, str) or not group_by):
            raise TypeError(f"group_by must be a field name (str) or None; got {group_by!r}")
        if target is not None and not callable(target):
            raise TypeError(f"target must be a function or None; got {type(target).__name__}")
        if output is not None and not isinstance(output, (str, os.PathLike)):
            raise TypeError(f"output must be a file path or None; got {type(output).__name__}")
        if not _is_count(batch_size):
            raise ValueError(f"batch_size must be an integer >= 1; got {batch_size!r}")
        if accumulate is not None and not callable(accumulate):
            raise TypeError(f"accumulate must be a function or None; got {accumulate!r}")
        fns: tuple[Callable[..., Any], ...] = ()
        if batch_metrics is not None:
            if callable(batch_metrics) or not isinstance(batch_metrics, Iterable):
                raise TypeError("batch_metrics must be a list of functions batch -> dict")
            fns = tuple(batch_metrics)
            for fn in fns:
                if not callable(fn):
                    raise TypeError(
                        f"batch_metrics must hold functions batch -> dict; got {type(fn).__name__}"
                    )
        elif accumulate is not None:
            raise ValueError("accumulate is only used with batch_metrics; pass batch_metrics too")
        return cls(
            target=target,
            concurrency=concurrency,
            cache=cache,
            group_by=group_by,
            progress=progress,
            output=output,
            batch_metrics=fns,
            accumulate=accumulate,
            batch_size=batch_size,
            prices=prices,
            retry_errors=retry_errors,
            model=model,
        )
