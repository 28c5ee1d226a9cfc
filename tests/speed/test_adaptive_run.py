"""``evaluate()`` against a server that rejects with 429 above N requests in flight: the runner
backs off, loses nothing, and keeps close to what N allows; the progress bar and the summary
show it."""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any

import pytest
from rich.console import Console

from openevals._judge.shell import judge_core
from openevals.evaluation import aevaluate, evaluate
from openevals.evaluation.concurrency import AIMD, Limiter
from openevals.evaluation.stats import RunStats
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.report.progress import RichProgress, print_summary
from openevals.testing import FakeOpenAIServer

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nCorrect?"
LIMIT, LATENCY, CAP, ROWS = 6, 0.03, 24, 360


@pytest.fixture
def server(server: FakeOpenAIServer) -> FakeOpenAIServer:
    server.latency = LATENCY
    return server


def _rows(n: int, tag: str) -> list[dict[str, Any]]:
    return [{"id": f"{tag}{i}", "inputs": f"{tag} {i}", "outputs": "a"} for i in range(n)]


def _owned_judge(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    assert judge_core(judge).backend is not None  # resolve it now
    return judge


async def _timed(judge: Any, tag: str, concurrency: int, progress: Any = False) -> Any:
    start = time.perf_counter()
    result = await aevaluate(_rows(ROWS, tag), [judge], concurrency=concurrency, progress=progress)
    return result, ROWS / (time.perf_counter() - start)


async def test_backs_off_to_the_servers_limit_and_keeps_its_throughput(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What LIMIT requests in flight allow on this (shared, busy) machine is measured by a run
    # at concurrency=LIMIT against a second server without a limit, at the same time, so that
    # both runs see the same load.
    with FakeOpenAIServer() as free:
        free.set_default_chat(json={"reasoning": "fine", "score": True})
        free.latency = LATENCY
        reference = _owned_judge(free, monkeypatch)
        judge = _owned_judge(server, monkeypatch)
        # Imports, and the connection pools the runs below use.
        await aevaluate(_rows(CAP, "warm"), [judge], concurrency=CAP, progress=False)
        await aevaluate(_rows(LIMIT, "warm"), [reference], concurrency=LIMIT, progress=False)
        server.limit_in_flight(LIMIT, retry_after=LATENCY)
        server.peak_in_flight = 0
        seen: list[int] = []
        (fixed, fixed_rate), (result, rate) = await asyncio.gather(
            _timed(reference, "fixed", LIMIT),
            _timed(judge, "r", CAP, progress=lambda snap: seen.append(snap["concurrency"])),
        )
    assert fixed.summary["concurrency"]["backoffs"] == 0 and free.rejected_in_flight == 0
    assert server.rejected_in_flight > 0  # the server really pushed back
    assert server.peak_in_flight <= LIMIT
    assert len(result.rows) == ROWS and result.summary["pairs"]["failed"] == 0
    assert {row["id"] for row in result.rows} == {f"r{i}" for i in range(ROWS)}
    control = result.summary["concurrency"]
    assert control["cap"] == CAP and control["backoffs"] >= 1 and control["lowest"] <= LIMIT
    assert max(seen) <= CAP and min(seen) <= LIMIT
    ideal_rate = LIMIT / LATENCY
    assert rate >= 0.9 * min(ideal_rate, fixed_rate), (rate, fixed_rate, ideal_rate, control)


def test_sync_judge_in_the_thread_pool_backs_off_too(server: FakeOpenAIServer) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    server.limit_in_flight(3, retry_after=0.02)
    result = evaluate(_rows(60, "s"), [judge], concurrency=12, progress=False)
    assert len(result.rows) == 60 and result.summary["pairs"]["failed"] == 0
    assert result.summary["concurrency"]["backoffs"] >= 1
    assert server.rejected_in_flight > 0 and server.peak_in_flight <= 3


def test_a_plain_evaluator_raising_429_lowers_the_limit() -> None:
    class RateLimited(Exception):
        status_code = 429

    calls = 0

    async def flaky(**kwargs: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls == 5:
            raise RateLimited("slow down")
        return True

    result = evaluate(_rows(20, "p"), [flaky], concurrency=8, progress=False)
    assert result.summary["concurrency"]["backoffs"] == 1
    assert result.summary["pairs"]["failed"] == 1  # recorded on its row, never retried here


def test_progress_bar_and_summary_show_the_concurrency() -> None:
    stats = RunStats(["judge"], rows_total=10)
    stats.limiter = Limiter(AIMD(16))
    buffer = io.StringIO()
    bar = RichProgress(console=Console(file=buffer, width=200, force_terminal=True))
    bar.start(stats)
    stats.limiter.controller.overloaded(0, 0.0)
    bar.advance(stats)
    bar.stop(stats)
    assert "concurrency 8 (1 back-offs)" in buffer.getvalue()

    result = stats.result([], cache=None, with_target=False, output=None, interrupted=False)
    assert result.summary["concurrency"] == {"cap": 16, "final": 8, "lowest": 8, "backoffs": 1}
    out = io.StringIO()
    print_summary(result, Console(file=out, width=200))
    assert "concurrency backed off 1 times (cap 16, lowest 8, final 8)" in out.getvalue()
