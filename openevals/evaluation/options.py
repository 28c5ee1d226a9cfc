"""The options of ``evaluate`` / ``aevaluate`` and their validation.

:class:`RunOptions` validates everything but the data and the evaluators (see
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
    """Validated run options (the keyword arguments of :func:`~openevals.evaluation.evaluate`).

    Creating one validates everything; a bad value raises ``TypeError`` / ``ValueError`` naming
    the argument. ``batch_metrics`` is kept as a tuple.
    """

    target: Callable[..., Any] | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    cache: Any = None
    group_by: str | None = None
    progress: Any = True
    output: str | os.PathLike[str] | None = None
    batch_metrics: Sequence[Callable[..., Any]] | None = None
    accumulate: Callable[..., Any] | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    prices: Mapping[str, Any] | None = None
    retry_errors: bool = False
    model: str | None = None
    systems: Any = None  # checked by openevals.evaluation.pairwise.Systems.parse

    def __post_init__(self) -> None:
        if not _is_count(self.concurrency):
            raise ValueError(f"concurrency must be an integer >= 1; got {self.concurrency!r}")
        group_by = self.group_by
        if group_by is not None and (not isinstance(group_by, str) or not group_by):
            raise TypeError(f"group_by must be a field name (str) or None; got {group_by!r}")
        if self.target is not None and not callable(self.target):
            raise TypeError(f"target must be a function or None; got {type(self.target).__name__}")
        if self.output is not None and not isinstance(self.output, (str, os.PathLike)):
            raise TypeError(f"output must be a file path or None; got {type(self.output).__name__}")
        if not _is_count(self.batch_size):
            raise ValueError(f"batch_size must be an integer >= 1; got {self.batch_size!r}")
        if self.accumulate is not None and not callable(self.accumulate):
            raise TypeError(f"accumulate must be a function or None; got {self.accumulate!r}")
        metrics = self.batch_metrics
        if metrics is not None:
            if callable(metrics) or not isinstance(metrics, Iterable):
                raise TypeError("batch_metrics must be a list of functions batch -> dict")
            fns = tuple(metrics)
            for fn in fns:
                if not callable(fn):
                    raise TypeError(
                        f"batch_metrics must hold functions batch -> dict; got {type(fn).__name__}"
                    )
            object.__setattr__(self, "batch_metrics", fns)
        elif self.accumulate is not None:
            raise ValueError("accumulate is only used with batch_metrics; pass batch_metrics too")
