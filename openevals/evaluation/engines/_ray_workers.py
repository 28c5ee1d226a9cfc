"""The worker side of a Ray run, shared by its two inputs: the evaluation actor, the Ray Data
session set up for a run and the environment the workers get; and Parquet input, read by Ray Data
on the workers (:func:`parquet_stream`).

When the data of a Ray run is Parquet and nothing is to be resumed, ``ray.data.read_parquet``
reads the files on the cluster and each batch of the engine's ``batch_size`` rows goes, as Arrow,
to an evaluation actor that maps its columns as the local reader does (:mod:`..columns`) and scores
them. Batches come back in file order with each row's record and outcome; the driver gives rows
their index and id in that order (so content ids equal the local ones) and replays the outcomes.
A run with something to resume needs each row's id first, so the driver then reads the rows.
Rows are read as the local engine reads them (:class:`~.local.RunReader`): a bad record is an
error row, and a read that fails (a corrupt row group) ends the rows there and becomes the run's
:class:`~..failfast.DataSourceFailed`, raised once the rows before it are finished.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import ray
import ray.data

from openevals.data.rows import Row, normalize_row
from openevals.data.sources import check_arrow_schema, parquet_files, require
from openevals.evaluation.engines._ray_cache import start_cache, stop_cache, worker_cache
from openevals.evaluation.engines.engine import RayEngine
from openevals.evaluation.engines.local import LocalRun, RunReader
from openevals.evaluation.engines.worker import (
    RowOutcome,
    WorkerRun,
    WorkItem,
    row_outcomes,
    write_part,
)
from openevals.evaluation.failfast import DataSourceFailed
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


class ParquetWorker(EvalWorker):
    """The engine's evaluation actor, fed Arrow batches of Parquet rows."""

    def __call__(self, batch: Any) -> dict[str, Any]:
        pa = require("pyarrow", "parquet", "Reading Parquet")
        plan = check_arrow_schema(pa, batch.schema, "Parquet batch")
        columns = [column.to_pylist() for column in batch.columns]
        raws = [plan.record(values) for values in zip(*columns)]  # noqa: B905
        # Ids here only key the batch's outcomes; the driver assigns the real ones.
        items = [
            WorkItem(row=Row(index=i, id=f"#{i}", fields=normalize_row(raw, i).fields))
            for i, raw in enumerate(raws)
        ]
        outcomes = self.run.run_items(items)
        blob = pickle.dumps(list(zip(raws, outcomes)), pickle.HIGHEST_PROTOCOL)  # noqa: B905
        return {"result": np.array([blob], dtype=object)}


def parquet_stream(
    data: Any, engine: RayEngine, payload: bytes, run: LocalRun
) -> Generator[tuple[Row, RowOutcome], None, None] | None:
    """``(row, outcome)`` pairs of a Ray run over Parquet ``data``, in data order, or ``None``
    when ``data`` is not Parquet. ``payload`` is the run's pickled evaluators and worker options,
    ``run`` the driver's run (its judge cache is shared with the workers; a failed read is noted
    as its :attr:`~.local.LocalRun.failure`). The caller runs this only when there is nothing to
    resume."""
    try:
        files = parquet_files(data)
    except (OSError, ValueError):
        return None
    if files is None:
        return None
    return _pairs([str(f) for f in files], engine, payload, run)


def _pairs(
    files: list[str], engine: RayEngine, payload: bytes, run: LocalRun
) -> Generator[tuple[Row, RowOutcome], None, None]:
    outcomes: deque[RowOutcome] = deque()
    failures: list[Exception] = []

    def records() -> Iterator[dict[str, Any]]:
        try:
            for raw, outcome in _results(files, engine, payload, run.cache):
                outcomes.append(outcome)
                yield raw
        except Exception as exc:  # a read that failed (a corrupt row group): the rows end here
            failures.append(exc)

    # Indexes, ids, error rows and the duplicate-id check, as locally.
    reader = RunReader(records())
    for row in reader:
        yield row, outcomes.popleft()
    if failures:
        source = files[0] if len(files) == 1 else f"Parquet ({len(files)} files)"
        run.failure = DataSourceFailed(source, reader.index, failures[0])


def _results(
    files: list[str], engine: RayEngine, payload: bytes, cache: Any
) -> Iterator[tuple[dict[str, Any], RowOutcome]]:
    with ray_data_session(cache) as shared:
        payload_ref = ray.put(payload)
        cpus = ray.cluster_resources().get("CPU", 1)
        workers = engine.workers or max(1, int(cpus))
        # Ray Data schedules the read tasks beside the actor pool: they need CPU left over, so
        # the actors share what the reads do not take (with as many whole-CPU actors as CPUs,
        # no read would ever start).
        read_cpus = 1.0 if cpus >= 2 else 0.5
        actor_cpus = min(1.0, (cpus - read_cpus) / workers)
        dataset: Any = ray.data.read_parquet(files, num_cpus=read_cpus)
        dataset = dataset.map_batches(
            ParquetWorker,
            fn_constructor_args=(payload_ref, shared, worker_env(engine.env)),
            batch_size=engine.batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=actor_cpus,
        )
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for blob in batch["result"]:
                yield from pickle.loads(blob)
