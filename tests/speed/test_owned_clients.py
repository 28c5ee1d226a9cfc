"""Clients the judge builds for itself: the SDK's client on its own aiohttp transport, pool sized to the concurrency, one pool
per event loop, closed with its loop; a caller's own client is used as it is; a sync judge used from
threads keeps one keep-alive pool."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai

from openevals._judge.shell import judge_core
from openevals.evaluation import aevaluate, evaluate
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nCorrect?"


async def test_owned_async_client_is_the_sdks_on_its_aiohttp_transport(
    server: FakeOpenAIServer,
) -> None:
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    result = await judge(inputs="2+2", outputs="4")
    assert result["score"] is True
    backend = judge_core(judge).backend
    client = backend._loop_client()
    assert type(client) is openai.AsyncOpenAI and client.max_retries == 0
    # Outside a batch run the pool has the SDK's default size.
    assert backend.pool_size() == 1000


async def test_pool_is_sized_to_the_run_concurrency(server: FakeOpenAIServer) -> None:
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    seen: list[int] = []

    async def judged(**kwargs: Any) -> Any:
        result = await judge(**kwargs)
        seen.append(judge_core(judge).backend.pool_size())
        return result

    rows = [{"inputs": f"q{i}", "outputs": "a"} for i in range(12)]
    result = await aevaluate(rows, [judged], concurrency=3, progress=False)
    assert result.summary["pairs"]["failed"] == 0
    assert set(seen) == {3}
    assert server.peak_in_flight <= 3 and server.connections_opened <= 3


def test_one_client_per_event_loop_closed_with_its_loop(server: FakeOpenAIServer) -> None:
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    backend = judge_core(judge).backend

    async def run() -> Any:
        await asyncio.gather(*(judge(inputs=f"q{i}", outputs="a") for i in range(5)))
        first = backend._loop_client()
        await judge(inputs="again", outputs="a")
        assert backend._loop_client() is first  # one pool for the whole loop
        return first

    clients = [asyncio.run(run()) for _ in range(3)]
    assert len({id(c) for c in clients}) == 3  # every loop gets its own
    assert all(c.is_closed() for c in clients)  # closed when asyncio.run shut the loop down
    assert len(server.chat_requests) == 18


def test_a_bigger_run_on_the_same_loop_gets_a_bigger_pool(server: FakeOpenAIServer) -> None:
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    rows = [{"inputs": f"q{i}", "outputs": "a"} for i in range(8)]
    sizes = []
    for concurrency in (2, 4, 3):

        async def judged(**kwargs: Any) -> Any:
            result = await judge(**kwargs)
            sizes.append(judge_core(judge).backend.pool_size())
            return result

        result = evaluate(rows, [judged], concurrency=concurrency, progress=False)
        assert result.summary["pairs"]["failed"] == 0
    assert sizes == [2] * 8 + [4] * 8 + [4] * 8  # a smaller run reuses the bigger pool


async def test_a_callers_client_is_used_as_it_is(server: FakeOpenAIServer) -> None:
    mine = openai.AsyncOpenAI(base_url=server.base_url, api_key="test-key", max_retries=5)
    judge = create_async_llm_as_judge(prompt=PROMPT, judge=mine, model="gpt-test")
    rows = [{"inputs": f"q{i}", "outputs": "a"} for i in range(4)]
    result = await aevaluate(rows, [judge], concurrency=2, progress=False)
    assert result.summary["pairs"]["failed"] == 0
    backend = judge_core(judge).backend
    assert backend.client is mine and backend._async_clients is None
    assert mine.max_retries == 5
    await mine.close()


def test_sync_judge_from_threads_keeps_one_keep_alive_pool(server: FakeOpenAIServer) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    judge(inputs="warm", outputs="up")
    before = server.connections_opened
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: judge(inputs=f"q{i}", outputs="a"), range(60)))
    assert all(r["score"] is True for r in results)
    # 60 calls from 6 threads: at most one new connection per thread, reused across calls.
    assert server.connections_opened - before <= 6
    # The runner's sync mode (a thread pool) reuses the same pool.
    before = server.connections_opened
    rows = [{"inputs": f"r{i}", "outputs": "a"} for i in range(40)]
    result = evaluate(rows, [judge], concurrency=4, progress=False)
    assert result.summary["pairs"]["failed"] == 0
    assert server.connections_opened - before <= 4


def test_import_and_judge_creation_load_no_http_stack() -> None:
    code = (
        "import sys, openevals\n"
        "from openevals.llm import create_async_llm_as_judge\n"
        "create_async_llm_as_judge(prompt='{inputs}', model='openai:gpt-test')\n"
        "print(sorted(m for m in ('aiohttp', 'openai', 'httpx') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="."
    )
    assert out.stdout.strip() == "[]"
