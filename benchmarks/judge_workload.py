"""LLM-as-judge throughput and construction cost, runnable against either ``openevals``.

Uses only names both packages export (``create_async_llm_as_judge`` with an ``AsyncOpenAI`` judge,
``create_llm_as_judge`` with a ``model`` string), and the repository's fake OpenAI server
(``openevals.testing.FakeOpenAIServer``, standard library only) with a fixed latency, so the figures
measure the library's overhead on top of an ideal server.

    python benchmarks/judge_workload.py              # both measurements, printed
    python benchmarks/judge_workload.py --json       # one JSON line per measurement
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CALLS = 500
LATENCY = 0.05
CONCURRENCY = 50
IDEAL = CALLS * LATENCY / CONCURRENCY


_SERVE = (
    "import sys, time\n"
    "from openevals.testing import FakeOpenAIServer\n"
    "server = FakeOpenAIServer()\n"
    "server.latency = float(sys.argv[1])\n"
    "server.set_default_chat(json={'reasoning': 'The answer is correct.', 'score': True})\n"
    "print(server.base_url, flush=True)\n"
    "sys.stdin.read()\n"
)


class _ServerProcess:
    """The fake server in its own process, so its threads do not compete for our GIL."""

    def __init__(self, latency: float = LATENCY) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        # Any interpreter with the standard library serves; use the one running the benchmark.
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(REPO),
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def _fake_server() -> _ServerProcess:
    return _ServerProcess()


async def _throughput(base_url: str, calls: int, concurrency: int) -> tuple[float, int]:
    from openai import AsyncOpenAI

    from openevals.llm import create_async_llm_as_judge

    client = AsyncOpenAI(base_url=base_url, api_key="bench-key", max_retries=0)
    judge = create_async_llm_as_judge(
        prompt="Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?",
        judge=client,
        model="gpt-test",
    )
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Any:
        async with semaphore:
            return await judge(inputs=f"What is {i} + {i}?", outputs=str(2 * i))

    # Warm up connections and imports so the timing measures steady-state throughput.
    await asyncio.gather(*(one(i) for i in range(concurrency)))
    start = time.perf_counter()
    results = await asyncio.gather(*(one(i) for i in range(calls)))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed, sum(1 for r in results if r["score"] is True)


def judge_throughput(calls: int = CALLS, concurrency: int = CONCURRENCY) -> dict[str, Any]:
    """Wall time of ``calls`` async judge calls at ``concurrency`` against a 50 ms server."""
    server = _fake_server()
    try:
        elapsed, ok = asyncio.run(_throughput(server.base_url, calls, concurrency))
    finally:
        server.stop()
    ideal = calls * LATENCY / concurrency
    return {
        "name": "judge_throughput",
        "seconds": elapsed,
        "ideal_seconds": ideal,
        "ratio_to_ideal": elapsed / ideal,
        "calls_scored_true": ok,
    }


_CONSTRUCT = (
    "import time, os\n"
    "os.environ.setdefault('OPENAI_API_KEY', 'bench-key')\n"
    "t = time.perf_counter()\n"
    "from openevals.llm import create_llm_as_judge\n"
    "e = create_llm_as_judge(prompt='{outputs}', model='openai:gpt-4.1-mini')\n"
    "print(time.perf_counter() - t)\n"
)


def judge_construction(rounds: int = 5) -> dict[str, Any]:
    """Fresh-process time to import the judge and create it with ``model='openai:...'``."""
    env = {**os.environ, "OPENAI_API_KEY": "bench-key"}
    times = []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, "-c", _CONSTRUCT], capture_output=True, text=True, env=env, check=True
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    times.sort()
    return {"name": "judge_construction", "seconds": times[len(times) // 2]}


def main() -> None:
    as_json = "--json" in sys.argv
    for result in (judge_throughput(), judge_construction()):
        if as_json:
            print(json.dumps(result))
        else:
            print(
                ", ".join(
                    f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in result.items()
                )
            )


if __name__ == "__main__":
    main()
