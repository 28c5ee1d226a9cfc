"""run_plan / arun_plan (the one driver of plans that ask for batch runs) run on
openevals._drivers: a failed batch run is thrown into the plan; each step's options reach the
runner."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

import openevals.evaluation.runner as runner_module
from openevals.evaluation.plans import BatchRun, arun_plan, run_plan


def _plan(log: list[str], **options: Any) -> Generator[BatchRun, Any, str]:
    try:
        result = yield BatchRun([{"outputs": 1}], [object()], options)
        log.append(f"got {result}")
        return "ok"
    except RuntimeError as exc:
        log.append(f"caught {exc}")
        return "recovered"
    finally:
        log.append("closed")


def test_a_failed_run_is_thrown_into_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("run failed")

    async def aboom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("run failed")

    monkeypatch.setattr(runner_module, "evaluate", boom)
    monkeypatch.setattr(runner_module, "aevaluate", aboom)
    log: list[str] = []
    assert run_plan(_plan(log)) == "recovered"
    assert log == ["caught run failed", "closed"]
    alog: list[str] = []
    assert asyncio.run(arun_plan(_plan(alog))) == "recovered"
    assert alog == log


def test_each_request_is_run_with_the_runner_options(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    def fake(rows: Any, evaluators: Any, **kwargs: Any) -> str:
        seen.append(kwargs)
        return "result"

    async def afake(rows: Any, evaluators: Any, **kwargs: Any) -> str:
        return fake(rows, evaluators, **kwargs)

    monkeypatch.setattr(runner_module, "evaluate", fake)
    monkeypatch.setattr(runner_module, "aevaluate", afake)
    log: list[str] = []
    assert run_plan(_plan(log, concurrency=3)) == "ok"
    assert asyncio.run(arun_plan(_plan(log, concurrency=3))) == "ok"
    assert seen == [{"concurrency": 3}] * 2
    assert log == ["got result", "closed"] * 2
