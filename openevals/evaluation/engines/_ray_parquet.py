"""Parquet input on a :class:`~.engine.RayEngine`: Ray Data reads the files, on the workers.

When the data of a Ray run is Parquet and nothing is to be resumed, ``ray.data.read_parquet``
reads the files on the cluster and each batch of the engine's ``batch_size`` rows goes, as Arrow,
to an evaluation actor that maps its columns as the local reader does (:mod:`..columns`) and scores
them. Batches come back in file order with each row's record and outcome; the driver gives rows
their index and id in that order (so content ids equal the local ones) and replays the outcomes.
A run with something to resume needs each row's id first, so the driver then reads the rows.
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np
import ray
import ray.data

from openevals.data.rows import Row, iter_rows, normalize_row
from openevals.data.sources import check_arrow_schema, parquet_files, require
from openevals.evaluation.engines._ray_workers import EvalWorker, ray_data_session, worker_env
from openevals.evaluation.engines.engine import RayEngine
from openevals.evaluation.engines.worker import RowOutcome, WorkItem


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
    data: Any, engine: RayEngine, payload: bytes, cache: Any
) -> Generator[tuple[Row, RowOutcome], None, None] | None:
    """``(row, outcome)`` pairs of a Ray run over Parquet ``data``, in data order, or ``None``
    when ``data`` is not Parquet. ``payload`` is the run's pickled evaluators and worker options,
    ``cache`` the driver's judge cache (shared with the workers). The caller runs this only when
    there is nothing to resume."""
    try:
        files = parquet_files(data)
    except (OSError, ValueError):
        return None
    if files is None:
        return None
    return _pairs([str(f) for f in files], engine, payload, cache)


def _pairs(
    files: list[str], engine: RayEngine, payload: bytes, cache: Any
) -> Generator[tuple[Row, RowOutcome], None, None]:
    outcomes: deque[RowOutcome] = deque()

    def records() -> Iterator[dict[str, Any]]:
        for raw, outcome in _results(files, engine, payload, cache):
            outcomes.append(outcome)
            yield raw

    for row in iter_rows(records()):  # indexes, ids and the duplicate-id check, as locally
        yield row, outcomes.popleft()


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
