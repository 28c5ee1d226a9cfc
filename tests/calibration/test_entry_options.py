"""Each calibration entry point builds its options once (``Settings.from_call``): the sync and
async forms hand the batch runner the same runner options, and refuse the same bad option with the
same message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import openevals.evaluation.runner as runner_module
from openevals.calibration import acalibrate, across_validate, calibrate, cross_validate

ROWS = [{"id": f"r{i}", "outputs": i % 2 == 0, "label": i % 3 == 0} for i in range(6)]
RUNNER = {"concurrency": 3, "cache": None, "progress": False, "output": None, "retry_errors": True}


def _judge(**kwargs: Any) -> bool:
    return bool(kwargs.get("outputs"))


def _factory(examples: list[Any]) -> Any:
    return _judge


class _Stop(Exception):
    pass


def test_sync_and_async_forms_give_the_runner_the_same_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, Any]] = []

    def fake(rows: Any, evaluators: Any, **options: Any) -> Any:
        seen.append(options)
        raise _Stop

    async def afake(rows: Any, evaluators: Any, **options: Any) -> Any:
        return fake(rows, evaluators, **options)

    monkeypatch.setattr(runner_module, "evaluate", fake)
    monkeypatch.setattr(runner_module, "aevaluate", afake)
    options: dict[str, Any] = {**RUNNER, "judge_scores": "boolean"}
    with pytest.raises(_Stop):
        calibrate(ROWS, _judge, **options)
    with pytest.raises(_Stop):
        asyncio.run(acalibrate(ROWS, _judge, **options))
    with pytest.raises(_Stop):
        cross_validate(ROWS, _factory, k=2, **options)
    with pytest.raises(_Stop):
        asyncio.run(across_validate(ROWS, _factory, k=2, **options))
    assert seen == [RUNNER] * 4


@pytest.mark.parametrize(
    "bad", [{"tolerance": -1}, {"seed": "x"}, {"concurrency": 0}, {"confidence": 2.0}]
)
def test_sync_and_async_forms_refuse_a_bad_option_alike(bad: dict[str, Any]) -> None:
    for sync, twin, first in (
        (calibrate, acalibrate, _judge),
        (cross_validate, across_validate, _factory),
    ):
        with pytest.raises((TypeError, ValueError)) as sync_error:
            sync(ROWS, first, progress=False, **bad)
        with pytest.raises((TypeError, ValueError)) as async_error:
            asyncio.run(twin(ROWS, first, progress=False, **bad))
        assert type(async_error.value) is type(sync_error.value)
        assert str(async_error.value) == str(sync_error.value)
