"""``timeout=`` of the mypy and pyright evaluators: a hung checker is stopped, with what it
started, and the call raises ``CheckTimeoutError``; it never becomes a score."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import openevals
from openevals.code import CheckTimeoutError
from openevals.code.mypy import create_async_mypy_evaluator, create_mypy_evaluator
from openevals.code.pyright import create_async_pyright_evaluator, create_pyright_evaluator

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell scripts as checkers")


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """Fake ``mypy`` and ``pyright`` commands on PATH (nothing beside the interpreter)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mypy", "pyright"):
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir


@pytest.fixture
def sleeping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checker that starts a child of its own and then sleeps; returns the child's pid file."""
    pid_file = tmp_path / "child.pid"
    _install(tmp_path, monkeypatch, f'sleep 60 &\necho $! > "{pid_file}"\nsleep 60\n')
    return pid_file


def _gone(pid_file: Path) -> bool:
    """Did the checker's own child die with it (polled: the kill is asynchronous)?"""
    deadline = time.monotonic() + 5
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = int(pid_file.read_text())
    stat = Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a killed child not yet reaped by its new parent is a zombie: dead too
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (OSError, IndexError):
            pass
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("factory", [create_mypy_evaluator, create_pyright_evaluator])
def test_a_hung_checker_raises_and_is_stopped(factory: Any, sleeping: Path) -> None:
    evaluator = factory(timeout=0.3)
    start = time.monotonic()
    with pytest.raises(CheckTimeoutError, match=r"timeout=0.3 s") as info:
        evaluator(outputs="x = 1\n")
    assert time.monotonic() - start < 10
    assert isinstance(info.value, TimeoutError) and info.value.timeout == 0.3
    assert _gone(sleeping)
    with pytest.raises(CheckTimeoutError):
        evaluator.batch(["x = 1\n", "y = 2\n"])


@pytest.mark.parametrize("factory", [create_async_mypy_evaluator, create_async_pyright_evaluator])
async def test_async_hung_checker_raises_without_blocking_the_loop(
    factory: Any, sleeping: Path
) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        with pytest.raises(CheckTimeoutError, match="did not finish"):
            await factory(timeout=0.3)(outputs="x = 1\n")
    finally:
        ticker.cancel()
    assert ticks >= 10  # the loop ran while the checker hung
    assert _gone(sleeping)


def test_in_a_batch_run_the_timeout_is_an_error_row(sleeping: Path) -> None:
    result = openevals.evaluate(
        [{"outputs": "x = 1\n"}], [create_mypy_evaluator(timeout=0.3)], progress=False
    )
    (row,) = result.rows
    entry = row["evaluations"]["mypy_evaluator"]
    assert entry["status"] == "error" and entry["results"] == []
    assert entry["error"]["type"] == "CheckTimeoutError"


def test_a_checker_within_its_timeout_scores_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "exit 0\n")  # a checker that finds nothing wrong
    assert create_mypy_evaluator(timeout=5)(outputs="x = 1\n")["score"] is True


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (float("inf"), ValueError),
        ("5", TypeError),
        (True, TypeError),
    ],
)
@pytest.mark.parametrize(
    "factory",
    [
        create_mypy_evaluator,
        create_async_mypy_evaluator,
        create_pyright_evaluator,
        create_async_pyright_evaluator,
    ],
)
def test_bad_timeouts_are_refused_at_creation(factory: Any, value: Any, error: type) -> None:
    with pytest.raises(error, match="`timeout`"):
        factory(timeout=value)
