"""How close the judge gets to the wire: async judge calls against a floor made of raw sockets.

    .venv/bin/python benchmarks/judge_floor.py --baseline-python .venv-baseline/bin/python
    .venv/bin/python benchmarks/judge_floor.py --calls 500 --concurrency 50 --latency 0.05

A cheap asyncio HTTP/1.1 keep-alive server runs in its own process (so its CPU does not compete
with the clients' event loop): every ``POST /v1/chat/completions`` is answered after ``latency``
seconds with the same valid chat completion, whose content is a judge verdict. Then, in one run,
each client makes ``calls`` requests with at most ``concurrency`` in flight, after an untimed
warm-up of ``concurrency`` calls (imports, connections):

* ``raw sockets`` - the floor: one asyncio stream per slot, hand-written requests, keep-alive,
  responses read by Content-Length; no HTTP library, no JSON parsing of the reply;
* ``SDK create()`` - ``AsyncOpenAI().chat.completions.create`` alone: a plain request on its
  default httpx transport and on ``DefaultAioHttpClient`` (the transport of the judge's own
  client), and the judge's own request (its rendered messages and ``response_format``, captured
  from one judge call) on httpx: the SDK's share of the cost;
* ``SDK with_raw_response`` - the same request through the SDK's public
  ``with_raw_response.create`` on aiohttp, the reply's JSON decoded with ``json.loads``: the
  cheapest request the SDK's public API makes, which the ``openai:`` judge cannot go below;
* ``judge, user's AsyncOpenAI (httpx)`` - our ``create_async_llm_as_judge(judge=AsyncOpenAI())``;
* ``judge, user's AsyncOpenAI (aiohttp)`` - the same with ``http_client=DefaultAioHttpClient()``;
* ``judge, 'openai:' string`` - our judge building its own client (``model="openai:gpt-test"``);
* ``public release, user's AsyncOpenAI`` - ``openevals`` 0.2.2 from ``--baseline-python``.

Every figure is the best of ``--repeat`` timed rounds, printed with its ratio to the floor and to
the ideal (``calls * latency / concurrency``). Targets: the ``openai:`` string at most 1.35x the
floor; the judge on the user's httpx client no slower than the SDK's own ``create()`` sending
the same request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"
MESSAGES = [{"role": "user", "content": "Question: 2+2?\nAnswer: 4\nIs the answer correct?"}]


# --------------------------------------------------------------------------- the server


def serve(latency: float) -> None:
    """Child mode: print the base URL, serve until ``quit`` (or the end of stdin)."""
    from batch_workload import completion_json

    body = json.dumps(completion_json()).encode()
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    reply = head + body

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                header = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in header.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                if length:
                    await reader.readexactly(length)
                await asyncio.sleep(latency)
                writer.write(reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        read = asyncio.get_running_loop().run_in_executor
        while (await read(None, sys.stdin.readline)).strip() not in ("quit", ""):
            pass
        server.close()

    asyncio.run(main())


# --------------------------------------------------------------------------- clients

Call = Callable[[int], Awaitable[Any]]


async def timed(
    make: Callable[[], Awaitable[tuple[Call, Callable[[], Awaitable[None]]]]],
    calls: int,
    concurrency: int,
    repeat: int,
) -> float:
    """Best of ``repeat`` rounds of ``calls`` calls, ``concurrency`` at a time, after a warm-up."""
    call, close = await make()
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Any:
        async with semaphore:
            return await call(i)

    try:
        await asyncio.gather(*(one(i) for i in range(concurrency)))
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(calls)))
            best = min(best, time.perf_counter() - start)
        return best
    finally:
        await close()


def raw_sockets(base_url: str, concurrency: int) -> Any:
    host, port = base_url.split("//", 1)[1].split("/", 1)[0].split(":")
    payload = json.dumps({"model": "gpt-test", "messages": MESSAGES}).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
        b"Content-Type: application/json\r\nAuthorization: Bearer k\r\n"
        b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload
    )

    async def make() -> tuple[Call, Callable[[], Awaitable[None]]]:
        pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        for _ in range(concurrency):
            pool.put_nowait(await asyncio.open_connection(host, int(port)))

        async def call(i: int) -> bytes:
            reader, writer = await pool.get()
            try:
                writer.write(request)
                header = await reader.readuntil(b"\r\n\r\n")
                length = int(header.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                return await reader.readexactly(length)
            finally:
                pool.put_nowait((reader, writer))

        async def close() -> None:
            while not pool.empty():
                pool.get_nowait()[1].close()

        return call, close

    return make


def judge_request(base_url: str) -> dict[str, Any]:
    """The keyword arguments the judge passes to a caller's ``chat.completions.create`` (its
    rendered messages and ``response_format`` included), captured from one call."""
    import openai

    from openevals.llm import create_async_llm_as_judge

    captured: dict[str, Any] = {}

    async def capture() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
        create = client.chat.completions.create

        async def recording(**kwargs: Any) -> Any:
            captured.update(kwargs)
            return await create(**kwargs)

        client.chat.completions.create = recording  # type: ignore[method-assign]
        judge = create_async_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test")
        await judge(inputs="What is 1 + 1?", outputs="2")
        await client.close()

    asyncio.run(capture())
    return captured


def sdk_create(
    base_url: str, how: str = "httpx", raw: bool = False, request: dict[str, Any] | None = None
) -> Any:
    """The SDK alone: ``request`` (default: a plain chat request) through ``create()``, or
    through ``with_raw_response.create`` with the reply decoded by ``json.loads``."""
    kwargs = request or {"model": "gpt-test", "messages": MESSAGES}

    async def make() -> tuple[Call, Callable[[], Awaitable[None]]]:
        import openai

        http = openai.DefaultAioHttpClient() if how == "aiohttp" else None
        client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, http_client=http)

        async def call(i: int) -> Any:
            if raw:
                response = await client.chat.completions.with_raw_response.create(**kwargs)
                return json.loads(response.content)
            return await client.chat.completions.create(**kwargs)

        return call, client.close

    return make


def our_judge(base_url: str, how: str) -> Any:
    async def make() -> tuple[Call, Callable[[], Awaitable[None]]]:
        import openai

        from openevals.llm import create_async_llm_as_judge

        client: Any = None
        if how == "string":
            os.environ["OPENAI_BASE_URL"] = base_url
            os.environ["OPENAI_API_KEY"] = "k"
            judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
        else:
            http = openai.DefaultAioHttpClient() if how == "aiohttp" else None
            client = openai.AsyncOpenAI(
                base_url=base_url, api_key="k", max_retries=0, http_client=http
            )
            judge = create_async_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test")

        async def call(i: int) -> Any:
            result = await judge(inputs=f"What is {i} + {i}?", outputs=str(2 * i))
            assert result["score"] is True, result
            return result

        async def close() -> None:
            if client is not None:
                await client.close()

        return call, close

    return make


# --------------------------------------------------------------------------- the public release

_BASELINE = """
import asyncio, json, sys, time
import openai
from openevals.llm import create_async_llm_as_judge
base_url, calls, concurrency, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PROMPT = "Question: {inputs}\\nAnswer: {outputs}\\nIs the answer correct?"
async def main():
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    judge = create_async_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test")
    sem = asyncio.Semaphore(concurrency)
    async def one(i):
        async with sem:
            return await judge(inputs=f"What is {i} + {i}?", outputs=str(2 * i))
    await asyncio.gather(*(one(i) for i in range(concurrency)))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(calls)))
        best = min(best, time.perf_counter() - start)
    assert all(r["score"] is True for r in results), results[0]
    print(json.dumps({"seconds": best}))
asyncio.run(main())
"""


def baseline(python: str, base_url: str, calls: int, concurrency: int, repeat: int) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH", "LANGCHAIN"))}
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [
            str(Path(python).absolute()),
            "-c",
            _BASELINE,
            base_url,
            str(calls),
            str(concurrency),
            str(repeat),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd="/",
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds; the best is kept")
    parser.add_argument("--baseline-python", help="interpreter with openevals 0.2.2 installed")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_API_KEY"):
        os.environ.pop(name, None)

    from batch_workload import ServerProcess

    server = ServerProcess(args.latency, script=__file__)
    figures: dict[str, float] = {}
    try:
        clients = {
            "raw sockets (floor)": raw_sockets(server.base_url, args.concurrency),
            "SDK create() (httpx)": sdk_create(server.base_url),
            "SDK create() (httpx), the judge's request": sdk_create(
                server.base_url, request=judge_request(server.base_url)
            ),
            "SDK create() (aiohttp)": sdk_create(server.base_url, "aiohttp"),
            "SDK with_raw_response (aiohttp)": sdk_create(server.base_url, "aiohttp", raw=True),
            "judge, user's AsyncOpenAI (httpx)": our_judge(server.base_url, "httpx"),
            "judge, user's AsyncOpenAI (aiohttp)": our_judge(server.base_url, "aiohttp"),
            "judge, 'openai:' string": our_judge(server.base_url, "string"),
        }
        # Rounds alternate between the clients (a fresh client and warm-up each round), so a
        # drift of the machine's speed during the run does not favour the clients timed first.
        for _ in range(args.repeat):
            for name, make in clients.items():
                seconds = asyncio.run(timed(make, args.calls, args.concurrency, 1))
                figures[name] = min(figures.get(name, float("inf")), seconds)
        if args.baseline_python:
            figures["public release 0.2.2, user's AsyncOpenAI"] = baseline(
                args.baseline_python, server.base_url, args.calls, args.concurrency, args.repeat
            )
    finally:
        server.close()

    ideal = args.calls * args.latency / args.concurrency
    floor = figures["raw sockets (floor)"]
    print(
        f"{args.calls} judge calls, {args.concurrency} in flight, {args.latency * 1000:.0f} ms per "
        f"request (ideal {ideal:.2f} s); best of {args.repeat}"
    )
    print("| client | seconds | / floor | / ideal |")
    print("|---|---|---|---|")
    for name, seconds in figures.items():
        print(f"| {name} | {seconds:.3f} | {seconds / floor:.2f}x | {seconds / ideal:.2f}x |")
    string = figures["judge, 'openai:' string"]
    httpx_judge = figures["judge, user's AsyncOpenAI (httpx)"]
    sdk = figures["SDK create() (httpx), the judge's request"]
    checks = {
        "'openai:' string <= 1.35x floor": string <= 1.35 * floor,
        "user's httpx AsyncOpenAI <= SDK create() of the same request": httpx_judge <= sdk,
    }
    for label, ok in checks.items():
        print(f"target {label}: {'met' if ok else 'MISSED'}")
    if args.json:
        print(json.dumps({"ideal": ideal, "figures": figures, "targets": checks}, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]
    sys.exit(main())
