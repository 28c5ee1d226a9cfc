"""The engines of ``evaluate(..., engine=...)`` as objects: :class:`LocalEngine` and
:class:`RayEngine`.

An engine object carries the options that belong to it: where the rows run (this process, or a
Ray cluster with its address, workers, batch size, environment, connection timeout and Parquet
output) and how long one evaluation may take there (``eval_timeout``, enforced by the row code
every engine shares). Each constructor checks its options, so a bad value fails where it is
written, with a message naming it. ``engine="local"`` and ``engine="ray"`` mean the defaults.
Plain Python: Ray is imported only when a Ray run starts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from openevals._repr import show
from openevals.evaluation.engines.ray_connect import DEFAULT_CONNECT_TIMEOUT, check_connect_timeout

__all__ = [
    "DEFAULT_RAY_BATCH_SIZE",
    "ENGINES",
    "Engine",
    "LocalEngine",
    "RayEngine",
    "as_engine",
    "check_eval_timeout",
    "is_count",
]

DEFAULT_RAY_BATCH_SIZE: Final = 512
"""Rows per batch sent to a Ray worker."""

ENGINES = ("local", "ray")


def is_count(value: Any) -> bool:
    """An ``int`` >= 1 (not a ``bool``)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_eval_timeout(value: Any, owner: str) -> float | None:
    """``eval_timeout``: seconds > 0 or ``None``; raises naming ``owner``'s option otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{owner}(eval_timeout=) must be a number of seconds (e.g. 30) or None; got "
            f"{type(value).__name__} {show(value)}"
        )
    if not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"{owner}(eval_timeout=) must be a positive number of seconds; got {show(value)} "
            "(pass None for no timeout)"
        )
    return float(value)


@dataclass(frozen=True, kw_only=True)
class LocalEngine:
    """Run in this process: one asyncio event loop, sync evaluators in a thread pool.

    Args:
        eval_timeout: seconds one evaluation may take (``None``: no limit). A longer one is
            cancelled and recorded on its row as a ``TimeoutError``, and the run goes on. Async
            evaluators are cancelled; a sync evaluator's thread cannot be stopped, so it is left
            to finish in the background and its result is dropped. With a limit, pure
            evaluators (reference text metrics, Levenshtein, ...; all but ``exact_match``) run
            in the thread pool under it too, instead of inline (see ``executor.under_timeout``).

    Raises:
        TypeError / ValueError: ``eval_timeout`` is not a positive number of seconds.
    """

    name: ClassVar[str] = "local"
    eval_timeout: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "eval_timeout", check_eval_timeout(self.eval_timeout, "LocalEngine")
        )


@dataclass(frozen=True, kw_only=True)
class RayEngine:
    """Run the rows on Ray Data workers (needs ``openevals[ray]``); same data, options, records
    and results as locally, ``concurrency`` then counting per worker.

    Args:
        address: the Ray cluster to join (default: ``RAY_ADDRESS``, else a local Ray with this
            machine's cores, stopped after the run).
        workers: Ray workers (actors) to use; default: the cluster's CPUs.
        batch_size: rows per batch sent to a worker.
        env: names of environment variables to copy to the workers, besides the secret-named
            ones (``*_API_KEY``, ``*_TOKEN``, ...) and ``*_BASE_URL``. Names only: a dict is
            refused (values are never passed; they are read from this environment).
        connect_timeout: seconds to wait for ``address`` to answer before raising
            :class:`~openevals.evaluation.RayConnectError`.
        parquet: a folder the workers write the results of the rows they score to, as Parquet
            files (``part-NNNNNN.parquet``, one per batch, each written atomically; the long
            form of :meth:`EvaluationResult.to_parquet`, scores as floats); a finished run adds
            ``_SUCCESS`` holding its summary. Parquet input is then read by the driver (which
            gives each row its id) rather than by Ray Data.
        eval_timeout: as for :class:`LocalEngine`, on the workers.

    Raises:
        TypeError / ValueError: an option of the wrong type or out of range, naming it.
    """

    name: ClassVar[str] = "ray"
    address: str | None = None
    workers: int | None = None
    batch_size: int = DEFAULT_RAY_BATCH_SIZE
    env: Sequence[str] | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    parquet: str | os.PathLike[str] | None = None
    eval_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address):
            raise TypeError(
                "RayEngine(address=) must be a Ray address such as 'ray://head:10001' or "
                f"'auto'; got {show(self.address)}"
            )
        if self.workers is not None and not is_count(self.workers):
            raise ValueError(
                f"RayEngine(workers=) must be an integer >= 1 or None; got {show(self.workers)}"
            )
        if not is_count(self.batch_size):
            raise ValueError(
                f"RayEngine(batch_size=) must be an integer >= 1; got {show(self.batch_size)}"
            )
        if self.parquet is not None and not isinstance(self.parquet, (str, os.PathLike)):
            raise TypeError(
                "RayEngine(parquet=) must be a folder path (str or os.PathLike) or None; got "
                f"{type(self.parquet).__name__}"
            )
        object.__setattr__(self, "connect_timeout", check_connect_timeout(self.connect_timeout))
        object.__setattr__(self, "eval_timeout", check_eval_timeout(self.eval_timeout, "RayEngine"))
        if self.env is not None:
            object.__setattr__(self, "env", _env_names(self.env))


Engine = LocalEngine | RayEngine


def _env_names(env: Any) -> tuple[str, ...]:
    if isinstance(env, Mapping):
        raise TypeError(
            "RayEngine(env=) takes only the names of environment variables, never their "
            "values: the values are copied to the Ray workers from this process's "
            "environment, so no secret is ever passed as an argument. Got a dict of "
            f"{len(env)} entries (its values are not shown); set the variables in "
            "os.environ and pass a list of names such as ['OPENAI_API_KEY']"
        )
    if isinstance(env, str) or not isinstance(env, Iterable):
        raise TypeError(
            "RayEngine(env=) must be a list of environment variable names to copy to the Ray "
            f"workers; got {show(env)}"
        )
    names = tuple(env)
    bad = [n for n in names if not isinstance(n, str) or not n or "=" in n]
    if bad:
        raise TypeError(
            f"RayEngine(env=) must hold environment variable names (no values); got {show(bad[0])}"
        )
    return names


def as_engine(engine: Any) -> Engine:
    """``engine=`` of ``evaluate``: an engine object, or ``"local"`` / ``"ray"`` for one with
    the default options."""
    if isinstance(engine, (LocalEngine, RayEngine)):
        return engine
    if isinstance(engine, str) and engine in ENGINES:
        return LocalEngine() if engine == "local" else RayEngine()
    raise ValueError(
        f"engine must be one of {ENGINES}, a LocalEngine(...) or a RayEngine(...); "
        f"got {show(engine)}"
    )
