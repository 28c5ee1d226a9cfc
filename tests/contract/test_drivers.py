"""The sync and async drivers give every sans-IO flow the same protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

from openevals._drivers import adrive, drive


def _adder(cleanup: list[str]) -> Generator[int, Any, int]:
    """Asks for two numbers to be doubled; retries once when a step fails."""
    try:
        total = 0
        for n in (1, 2):
            try:
                total += yield n
            except ZeroDivisionError:
                total += yield n * 100  # a second attempt with another request
        return total
    finally:
        cleanup.append("closed")


def _double(n: int) -> int:
    return n * 2


def test_drive_sends_results_back_and_returns_the_flow_value() -> None:
    cleanup: list[str] = []
    assert drive(_adder(cleanup), _double) == 6
    assert cleanup == ["closed"]


async def test_adrive_awaits_async_perform() -> None:
    cleanup: list[str] = []

    async def perform(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    assert await adrive(_adder(cleanup), perform) == 6
    assert cleanup == ["closed"]


async def test_adrive_accepts_sync_perform() -> None:
    assert await adrive(_adder([]), _double) == 6


def _fail_on_one(n: int) -> int:
    if n == 1:
        raise ZeroDivisionError("first step fails")
    return n * 2


def test_drive_throws_errors_into_the_flow() -> None:
    # step 1 fails, the flow retries with 100 -> 200, then 2 -> 4
    assert drive(_adder([]), _fail_on_one) == 204


async def test_adrive_throws_errors_into_the_flow() -> None:
    async def perform(n: int) -> int:
        return _fail_on_one(n)

    assert await adrive(_adder([]), perform) == 204


def test_unhandled_errors_reach_the_caller_and_the_flow_is_closed() -> None:
    cleanup: list[str] = []

    def perform(n: int) -> int:
        raise KeyError(n)

    with pytest.raises(KeyError):
        drive(_adder(cleanup), perform)
    assert cleanup == ["closed"]


async def test_cancellation_closes_the_flow() -> None:
    cleanup: list[str] = []
    started = asyncio.Event()

    async def perform(n: int) -> int:
        started.set()
        await asyncio.sleep(60)
        return n

    task = asyncio.create_task(adrive(_adder(cleanup), perform))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleanup == ["closed"]


def test_a_flow_that_yields_nothing_returns_at_once() -> None:
    def flow() -> Generator[int, Any, str]:
        return "done"
        yield 0  # pragma: no cover - makes this a generator

    assert drive(flow(), _double) == "done"
    assert asyncio.run(adrive(flow(), _double)) == "done"
