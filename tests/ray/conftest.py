"""A real local Ray (2 CPUs) shared by the Ray engine tests, and helpers to compare runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIMING_KEYS = frozenset({"elapsed_sec", "started_at"})


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # pragma: no cover - another test left one running
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _timing(key: str) -> bool:
    return key in TIMING_KEYS or key.endswith("elapsed_sec")


def _masked(value: Any) -> Any:
    """``value`` with wall-clock fields (which differ between any two runs) set to None."""
    if isinstance(value, dict):
        return {k: None if _timing(k) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def canon(value: Any) -> str:
    """JSON text with sorted keys, timings masked: equal text means equal results."""
    return json.dumps(_masked(json.loads(json.dumps(value, default=str))), sort_keys=True)


def canon_result(result: Any) -> dict[str, str]:
    """Every part of an ``EvaluationResult``, canonicalised."""
    summary = dict(result.summary)
    summary.pop("output", None)
    return {
        "rows": canon(result.rows),
        "aggregates": canon(result.aggregates),
        "by_group": canon(result.by_group),
        "batch_metrics": canon(result.batch_metrics),
        # values in completion order: the local engine finishes concurrent rows in any order
        "histograms": canon({k: sorted(v) for k, v in result.histograms.items()}),
        "summary": canon(summary),
    }


def file_records(path: Path) -> list[str]:
    """The records of an ``output=`` file, canonicalised and sorted (order across rows differs
    between engines: the local one interleaves concurrent rows)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted(canon(json.loads(line)) for line in lines if line.strip())
