"""The options of ``evaluate`` / ``aevaluate`` and their validation.

:class:`RunOptions` validates everything but the data and the evaluators (see
:mod:`openevals.evaluation.evaluators`) before anything runs, so a bad argument fails at once with
a message naming it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._repr import show
from openevals.evaluation.engines.ray_connect import DEFAULT_CONNECT_TIMEOUT, check_connect_timeout

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RAY_BATCH_SIZE",
    "ENGINES",
    "RunOptions",
]

DEFAULT_CONCURRENCY = 16
DEFAULT_BATCH_SIZE = 64
DEFAULT_RAY_BATCH_SIZE = 512
ENGINES = ("local", "ray")


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
    engine: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None
    ray_batch_size: int = DEFAULT_RAY_BATCH_SIZE
    ray_env: Sequence[str] | None = None
    ray_connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    eval_timeout: float | None = None
    ray_parquet: str | os.PathLike[str] | None = None
    store: Any = None

    def __post_init__(self) -> None:
        self._check_engine()
        _check_store(self.store)
        timeout = self.eval_timeout
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(
                    "eval_timeout must be a number of seconds (e.g. 30) or None; got "
                    f"{type(timeout).__name__} {show(timeout)}"
                )
            if not math.isfinite(timeout) or timeout <= 0:
                raise ValueError(
                    f"eval_timeout must be a positive number of seconds; got {show(timeout)} "
                    "(pass None for no timeout)"
                )
        if not _is_count(self.concurrency):
            raise ValueError(f"concurrency must be an integer >= 1; got {show(self.concurrency)}")
        group_by = self.group_by
        if group_by is not None and (not isinstance(group_by, str) or not group_by):
            raise TypeError(f"group_by must be a field name (str) or None; got {show(group_by)}")
        if self.target is not None and not callable(self.target):
            raise TypeError(f"target must be a function or None; got {type(self.target).__name__}")
        if self.output is not None and not isinstance(self.output, (str, os.PathLike)):
            raise TypeError(f"output must be a file path or None; got {type(self.output).__name__}")
        if not _is_count(self.batch_size):
            raise ValueError(f"batch_size must be an integer >= 1; got {show(self.batch_size)}")
        if self.accumulate is not None and not callable(self.accumulate):
            raise TypeError(f"accumulate must be a function or None; got {show(self.accumulate)}")
        metrics = self.batch_metrics
        if metrics is not None:
            if callable(metrics) or not isinstance(metrics, Iterable):
                raise TypeError("batch_metrics must be a list of functions batch -> dict")
            fns = tuple(_batch_metric(fn) for fn in metrics)
            for fn in fns:
                if not callable(fn):
                    raise TypeError(
                        f"batch_metrics must hold functions batch -> dict; got {type(fn).__name__}"
                    )
            object.__setattr__(self, "batch_metrics", fns)
        elif self.accumulate is not None:
            raise ValueError("accumulate is only used with batch_metrics; pass batch_metrics too")

    def _check_engine(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}; got {show(self.engine)}")
        ray_set = [
            name
            for name, value in (
                ("ray_address", self.ray_address),
                ("ray_workers", self.ray_workers),
                ("ray_env", self.ray_env),
                ("ray_parquet", self.ray_parquet),
            )
            if value is not None
        ]
        if self.engine != "ray" and ray_set:
            raise ValueError(f"{ray_set[0]} is only used with engine='ray'; pass engine='ray' too")
        if self.ray_address is not None and (
            not isinstance(self.ray_address, str) or not self.ray_address
        ):
            raise TypeError(
                f"ray_address must be a Ray address such as 'ray://head:10001' or 'auto'; "
                f"got {show(self.ray_address)}"
            )
        if self.ray_workers is not None and not _is_count(self.ray_workers):
            raise ValueError(
                f"ray_workers must be an integer >= 1 or None; got {show(self.ray_workers)}"
            )
        if self.ray_parquet is not None and not isinstance(self.ray_parquet, (str, os.PathLike)):
            raise TypeError(
                "ray_parquet must be a folder path (str or os.PathLike) or None; got "
                f"{type(self.ray_parquet).__name__}"
            )
        if not _is_count(self.ray_batch_size):
            raise ValueError(
                f"ray_batch_size must be an integer >= 1; got {show(self.ray_batch_size)}"
            )
        object.__setattr__(
            self, "ray_connect_timeout", check_connect_timeout(self.ray_connect_timeout)
        )
        env = self.ray_env
        if env is not None:
            if isinstance(env, Mapping):
                raise TypeError(
                    "ray_env takes only the names of environment variables, never their "
                    "values: the values are copied to the Ray workers from this process's "
                    "environment, so no secret is ever passed as an argument. Got a dict of "
                    f"{len(env)} entries (its values are not shown); set the variables in "
                    "os.environ and pass a list of names such as ['OPENAI_API_KEY']"
                )
            if isinstance(env, str) or not isinstance(env, Iterable):
                raise TypeError(
                    "ray_env must be a list of environment variable names to copy to the Ray "
                    f"workers; got {show(env)}"
                )
            names = tuple(env)
            bad = [n for n in names if not isinstance(n, str) or not n or "=" in n]
            if bad:
                raise TypeError(
                    f"ray_env must hold environment variable names (no values); got {show(bad[0])}"
                )
            object.__setattr__(self, "ray_env", names)


def _check_store(store: Any) -> None:
    """``store=``: None/False (not recorded), True, a path or URL, or a run store object."""
    if store is None or isinstance(store, (bool, str, os.PathLike)):
        return
    from openevals.store.runs import RunStore

    if not isinstance(store, RunStore):
        raise TypeError(
            "store must be True (the default run store), a SQLite path, a postgresql:// URL, a "
            f"RunStore, or None; got {type(store).__name__}"
        )


def _batch_metric(item: Any) -> Any:
    """A ``batch_metrics`` entry: a function, or the name of a registered dataset-level metric
    (``"bleu"``, ``"rouge:use_stemmer=true"``, ...; see ``registry.build_batch_metric``)."""
    if isinstance(item, str):
        from openevals.evaluation.registry import build_batch_metric

        return build_batch_metric(item)
    return item
