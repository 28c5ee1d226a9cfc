"""Batch-evaluation benchmark: judge throughput, cached reruns, and memory when streaming.

    python benchmarks/batch_workload.py [--rows 1000] [--latency 0.05] [--concurrency 50]
                                        [--client openai-async|openai-aiohttp|openai-string|
                                                  openai-string-sync|openai-sync|langchain-async]
                                        [--memory-rows 100000] [--skip-memory] [--json]

1. ``rows`` x 2 LLM-judge evaluators through the fake OpenAI server (run in a separate process so
   its CPU does not compete with the client) with ``latency`` seconds per request at
   ``concurrency``. Ideal wall time: rows x 2 x latency / concurrency (2 s with the defaults);
   target <= 1.3x. An untimed warm-up run of ``concurrency`` rows comes first, as in
   ``judge_floor.py``: it pays the one-off set-up (a model string imports ``langchain_openai`` to
   resolve the client, about 1 s; connections are opened), which is printed on its own.
2. The same run twice more with a SQLite judge cache: the cold run fills it, the warm rerun must
   make no model calls (target < 1 s).
3. Where the time goes: the runner alone (evaluators that just sleep ``latency``), and the judge
   core's CPU per call without HTTP (an in-memory stub client), next to the HTTP client's.
4. Peak memory of ``memory-rows`` rows x exact match streamed from a JSONL file, measured in a
   fresh interpreter (target < 500 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"
VERDICT = {"reasoning": "The answer matches the question.", "score": True}


# --------------------------------------------------------------------------- server process


def serve(latency: float) -> None:
    """Child mode: run the fake server; answer ``count`` / ``quit`` on stdin."""
    from openevals.testing import FakeOpenAIServer

    server = FakeOpenAIServer()
    server.latency = latency
    server.set_default_chat(json=VERDICT)
    print(server.base_url, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "count":
            print(len(server.chat_requests), flush=True)
        elif command == "quit":
            break
    server.stop()


class ServerProcess:
    """``script --serve LATENCY`` in a child process: it prints its base URL, then answers
    ``count`` and stops on ``quit`` (``benchmarks/judge_floor.py`` uses it too)."""

    def __init__(self, latency: float, script: str = __file__) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, script, "--serve", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()

    def count(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=10)


# --------------------------------------------------------------------------- judges


def make_judges(kind: str, base_url: str) -> dict[str, Any]:
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge

    def judge(feedback_key: str) -> Any:
        if kind in ("openai-string", "openai-string-sync"):  # the judge builds its own client
            os.environ["OPENAI_BASE_URL"] = base_url
            os.environ.setdefault("OPENAI_API_KEY", "bench")
            factory = create_llm_as_judge if kind.endswith("sync") else create_async_llm_as_judge
            return factory(prompt=PROMPT, feedback_key=feedback_key, model="openai:gpt-test")
        if kind in ("openai-async", "openai-aiohttp"):
            import openai

            http = openai.DefaultAioHttpClient() if kind == "openai-aiohttp" else None
            client = openai.AsyncOpenAI(
                base_url=base_url, api_key="bench", max_retries=0, http_client=http
            )
            return create_async_llm_as_judge(
                prompt=PROMPT, feedback_key=feedback_key, judge=client, model="gpt-test"
            )
        if kind == "openai-sync":
            import openai

            client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0)
            return create_llm_as_judge(
                prompt=PROMPT, feedback_key=feedback_key, judge=client, model="gpt-test"
            )
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        model = ChatOpenAI(
            base_url=base_url, api_key=SecretStr("bench"), model="gpt-test", max_retries=0
        )
        return create_async_llm_as_judge(prompt=PROMPT, feedback_key=feedback_key, judge=model)

    return {"correctness": judge("correct"), "helpfulness": judge("helpful")}


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"q{i}", "inputs": {"question": f"What is {i} + {i}?"}, "outputs": str(2 * i)}
        for i in range(n)
    ]


def timed_run(
    data: list[dict[str, Any]], evaluators: Any, **kwargs: Any
) -> tuple[float, float, Any]:
    from openevals.evaluation import evaluate

    cpu, start = time.process_time(), time.perf_counter()
    result = evaluate(data, evaluators, progress=False, **kwargs)
    return time.perf_counter() - start, time.process_time() - cpu, result


# --------------------------------------------------------------------------- breakdown


def runner_only(n: int, latency: float, concurrency: int) -> tuple[float, float]:
    async def sleeper(**kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(latency)
        return {"key": "x", "score": True, "comment": "ok", "metadata": None}

    async def sleeper2(**kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(latency)
        return {"key": "y", "score": 1.0, "comment": "ok", "metadata": None}

    wall, cpu, _ = timed_run(rows(n), [sleeper, sleeper2], concurrency=concurrency)
    return wall, cpu


def completion_json() -> dict[str, Any]:
    """A chat completion whose answer is :data:`VERDICT`."""
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps(VERDICT)},
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
    }


def judge_core_cpu_per_call(calls: int) -> float:
    """CPU milliseconds per judge call with an in-memory client (no HTTP)."""
    from openai.types.chat import ChatCompletion

    from openevals.llm import create_async_llm_as_judge

    completion = ChatCompletion.model_validate(completion_json())

    class Completions:
        async def create(self, **kwargs: Any) -> Any:
            return completion

    class Chat:
        completions = Completions()

    class StubClient:
        chat = Chat()

    judge = create_async_llm_as_judge(prompt=PROMPT, judge=StubClient(), model="gpt-test")

    async def go() -> float:
        for i in range(20):
            await judge(inputs={"question": i}, outputs="x")
        cpu = time.process_time()
        for i in range(calls):
            await judge(inputs={"question": i}, outputs=str(i))
        return (time.process_time() - cpu) / calls * 1000

    return asyncio.run(go())


def http_client_cpu_per_call(base_url: str, calls: int) -> float:
    """CPU milliseconds per bare ``AsyncOpenAI`` chat call to the fake server."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)

    async def go() -> float:
        messages = [{"role": "user", "content": "hello"}]
        for _ in range(20):
            await client.chat.completions.create(model="gpt-test", messages=messages)  # type: ignore[arg-type]
        cpu = time.process_time()
        for _ in range(calls):
            await client.chat.completions.create(model="gpt-test", messages=messages)  # type: ignore[arg-type]
        return (time.process_time() - cpu) / calls * 1000

    return asyncio.run(go())


# --------------------------------------------------------------------------- memory


def memory_child(path: str) -> None:
    """Child mode: evaluate ``path`` with exact match; print RSS figures as JSON."""
    from openevals.evaluation import evaluate
    from openevals.exact import exact_match

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    result = evaluate(path, [exact_match], progress=False)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "rows": len(result.rows),
                "rss_after_imports_mb": round(base, 1),
                "peak_rss_mb": round(peak, 1),
                "wall_s": round(wall, 2),
                "rate": result.aggregates["exact_match"]["rate"],
            }
        )
    )


def memory_run(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):
                row = {
                    "inputs": {"question": f"What is {i} + 1?"},
                    "outputs": str(i + 1 if i % 7 else i),
                    "reference_outputs": str(i + 1),
                }
                fh.write(json.dumps(row) + "\n")
        size_mb = path.stat().st_size / 1e6
        proc = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["file_mb"] = round(size_mb, 1)
    return figures


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument(
        "--client",
        choices=(
            "openai-async",
            "openai-aiohttp",
            "openai-string",
            "openai-string-sync",
            "openai-sync",
            "langchain-async",
        ),
        default="openai-async",
    )
    parser.add_argument("--memory-rows", type=int, default=100_000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print all figures as JSON")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0
    if args.memory_child:
        memory_child(args.memory_child)
        return 0

    figures: dict[str, Any] = {"client": args.client, "rows": args.rows}
    ideal = args.rows * 2 * args.latency / args.concurrency
    server = ServerProcess(args.latency)
    try:
        data = rows(args.rows)
        judges = make_judges(args.client, server.base_url)
        warm_up = [{**row, "id": f"warm-{row['id']}"} for row in rows(args.concurrency)]
        setup, _, _ = timed_run(warm_up, judges, concurrency=args.concurrency)
        figures["warm_up_s"] = setup
        before_run = server.count()
        wall, cpu, result = timed_run(data, judges, concurrency=args.concurrency)
        requests = server.count() - before_run
        failed = result.summary["pairs"]["failed"]
        figures["judge"] = {"wall_s": wall, "cpu_s": cpu, "ideal_s": ideal, "requests": requests}
        print(
            f"[1] {args.rows} rows x 2 judges ({args.client}), latency {args.latency * 1000:.0f} ms,"
            f" concurrency {args.concurrency}"
        )
        print(
            f"    wall {wall:.2f} s vs ideal {ideal:.2f} s -> {wall / ideal:.2f}x (target <= 1.3x);"
            f" client CPU {cpu:.2f} s; {requests} model calls; {failed} failed"
        )
        print(
            f"    untimed warm-up before it: {args.concurrency} rows in {setup:.2f} s "
            f"(ideal {2 * args.latency:.2f} s; the rest is one-off set-up)"
        )

        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "judge-cache.sqlite"
            before = server.count()
            cold, _, _ = timed_run(data, judges, concurrency=args.concurrency, cache=cache)
            after_cold = server.count()
            warm, warm_cpu, warm_result = timed_run(
                data, judges, concurrency=args.concurrency, cache=cache
            )
            after_warm = server.count()
        hits = warm_result.summary["cache"]["hits"]
        figures["cache"] = {
            "cold_wall_s": cold,
            "cold_requests": after_cold - before,
            "warm_wall_s": warm,
            "warm_cpu_s": warm_cpu,
            "warm_requests": after_warm - after_cold,
            "warm_hits": hits,
        }
        print(
            f"[2] cache: cold run {cold:.2f} s ({after_cold - before} calls); warm rerun "
            f"{warm:.2f} s with {after_warm - after_cold} model calls, {hits} hits (target < 1 s)"
        )

        runner_wall, runner_cpu = runner_only(args.rows, args.latency, args.concurrency)
        core_ms = judge_core_cpu_per_call(1000)
        http_ms = http_client_cpu_per_call(server.base_url, 300)
        per_call_ms = cpu / max(requests, 1) * 1000
        figures["breakdown"] = {
            "runner_only_wall_s": runner_wall,
            "runner_only_cpu_s": runner_cpu,
            "judge_core_cpu_ms_per_call": core_ms,
            "http_client_cpu_ms_per_call": http_ms,
            "full_path_cpu_ms_per_call": per_call_ms,
        }
        print(
            f"[3] where the time goes: runner alone (sleeping evaluators) {runner_wall:.2f} s wall,"
            f" {runner_cpu:.2f} s CPU; per judge call CPU: full path {per_call_ms:.2f} ms ="
            f" judge core {core_ms:.2f} ms (no HTTP) + AsyncOpenAI HTTP call {http_ms:.2f} ms"
            f" (sequential, one connection)"
        )
    finally:
        server.close()

    if not args.skip_memory:
        mem = memory_run(args.memory_rows)
        figures["memory"] = mem
        print(
            f"[4] {mem['rows']} rows x exact match streamed from a {mem['file_mb']} MB JSONL: peak"
            f" RSS {mem['peak_rss_mb']} MB (after imports {mem['rss_after_imports_mb']} MB;"
            f" target < 500 MB), {mem['wall_s']} s"
        )
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
