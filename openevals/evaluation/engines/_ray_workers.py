"""The Ray Data side of an engine run, shared by the row-chunk path (:mod:`._ray_engine`) and
the Parquet path (:mod:`._ray_parquet`): the worker actor class, the Ray Data session set up for
a run, and the environment the workers get."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import ray
import ray.data

from openevals.evaluation.engines._ray_cache import start_cache, stop_cache, worker_cache
from openevals.evaluation.engines.worker import WorkerRun, row_outcomes, write_part
from openevals.evaluation.redact import is_secret_name

_FORWARDED_SUFFIXES = ("_BASE_URL", "_API_BASE")


def worker_env(names: Sequence[str] | None) -> dict[str, str]:
    """The driver's environment variables the workers get: ``names``, every secret-named variable
    and every ``*_BASE_URL`` / ``*_API_BASE`` (those set here)."""
    wanted = set(names or ())
    return {
        name: value
        for name, value in os.environ.items()
        if name in wanted or is_secret_name(name) or name.endswith(_FORWARDED_SUFFIXES)
    }


@contextlib.contextmanager
def ray_data_session(cache: Any) -> Generator[Any, None, None]:
    """Ray Data set up for an engine run, and put back afterwards: rows in order, no Ray progress
    bars or execution banner (our progress display replaces them), and the run's judge cache
    started for the workers (what :func:`start_cache` returns is yielded; stopped on exit)."""
    context = ray.data.DataContext.get_current()
    saved = (
        context.execution_options.preserve_order,
        context.enable_progress_bars,
        context.print_on_execution_start,
    )
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    ray_logger = logging.getLogger("ray.data")
    level = ray_logger.level
    ray_logger.setLevel(logging.ERROR)
    shared = start_cache(cache)
    try:
        yield shared
    finally:
        (
            context.execution_options.preserve_order,
            context.enable_progress_bars,
            context.print_on_execution_start,
        ) = saved
        ray_logger.setLevel(level)
        with contextlib.suppress(Exception):
            stop_cache(shared)


class EvalWorker:
    """A Ray Data actor: unpickles the run's evaluators once, then scores chunk after chunk."""

    def __init__(
        self, payload: Any, shared_cache: Any, env: dict[str, str], parquet: str | None = None
    ) -> None:
        # The driver's variables first (API keys, base URLs): clients read them when the
        # evaluators are unpickled or first called. They travel with the actor's arguments, in
        # memory; not as a runtime_env, which Ray's agent writes to its log file.
        os.environ.update(env)
        # The pickled run, put in the object store once by the driver (which keeps the reference
        # alive, so a restarted actor finds it again).
        evaluators, options = pickle.loads(ray.get(payload))
        options = replace(options, cache=worker_cache(shared_cache))
        self.run = WorkerRun(evaluators, options)
        self.parquet = parquet

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        results = []
        for chunk, payload in zip(batch["chunk"], batch["payload"], strict=True):
            items = pickle.loads(payload)
            outcomes = self.run.run_chunk(items)
            if self.parquet is not None:  # this worker writes its rows' results itself
                write_part(self.run, items, row_outcomes(outcomes), self.parquet, int(chunk))
            results.append(pickle.dumps(outcomes, pickle.HIGHEST_PROTOCOL))
        return {"chunk": batch["chunk"], "result": np.array(results, dtype=object)}
