"""A judge run against a flaky server: healthy rows must not starve (issue 43).

    python benchmarks/flaky_judge.py [--rows 300] [--concurrency 16] [--eval-timeout 3]
                                     [--hang 0.01] [--transient 0.04] [--latency 0.005]

The fake OpenAI server answers a row's first request with a hang (``--hang`` of the rows) or a
one-off 503 (``--transient``); every retry succeeds. The judge retries; its own per-attempt
timeout is ``--attempt-timeout`` (default: the judge's default). The script runs the same rows fault-free and faulty, and prints for each: wall
time, rows recorded as errors (by type) and the adaptive limiter's back-offs. A row that fails
here would have succeeded on retry: the target is none, and a faulty run within 1.5x of the
fault-free one.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from openevals import evaluate  # noqa: E402
from openevals.llm import create_async_llm_as_judge  # noqa: E402
from openevals.testing import FakeOpenAIServer, async_openai_client  # noqa: E402
from openevals.testing._protocol import make_reply  # noqa: E402


def _share(text: str) -> float:
    """A deterministic number in [0, 1) for a request text."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def faulty(hang: float, transient: float) -> Any:
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Any:
        text = str(body.get("messages"))
        with lock:
            seen[text] += 1
            first = seen[text] == 1
        share = _share(text)
        if first and share < hang:
            return make_reply(hang=True)
        if first and share < hang + transient:
            return make_reply(status=503, body={"error": {"message": "busy"}})
        return make_reply(json={"reasoning": "ok", "score": True})

    return respond


def run(
    rows: int,
    concurrency: int,
    eval_timeout: float,
    responder: Any,
    latency: float,
    attempt_timeout: float | None,
) -> dict[str, Any]:
    with FakeOpenAIServer() as server:
        server.latency = latency
        server.set_responder(responder)
        judge = create_async_llm_as_judge(
            prompt="Is {outputs} right for {inputs}?",
            judge=async_openai_client(server, max_retries=0),
            model="gpt-test",
            **({} if attempt_timeout is None else {"timeout": attempt_timeout}),
        )
        data = [{"inputs": f"question {i}", "outputs": f"answer {i}"} for i in range(rows)]
        start = time.perf_counter()
        result = evaluate(
            data, [judge], concurrency=concurrency, eval_timeout=eval_timeout, progress=False
        )
        wall = time.perf_counter() - start
    errors = Counter(
        (entry.get("error") or {}).get("type")
        for row in result.rows
        for entry in row["evaluations"].values()
        if entry.get("error")
    )
    return {
        "wall": wall,
        "errors": dict(errors),
        "backoffs": result.summary["concurrency"]["backoffs"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--eval-timeout", type=float, default=3.0)
    parser.add_argument("--hang", type=float, default=0.01)
    parser.add_argument("--transient", type=float, default=0.04)
    parser.add_argument("--latency", type=float, default=0.005)
    parser.add_argument(
        "--attempt-timeout", type=float, default=None, help="the judge's timeout= (default: none)"
    )
    args = parser.parse_args()
    common = {"latency": args.latency, "attempt_timeout": args.attempt_timeout}
    clean = run(args.rows, args.concurrency, args.eval_timeout, faulty(0.0, 0.0), **common)
    flaky = run(
        args.rows, args.concurrency, args.eval_timeout, faulty(args.hang, args.transient), **common
    )
    print(f"{args.rows} rows, concurrency {args.concurrency}, eval_timeout {args.eval_timeout:g} s")
    for name, figures in (("fault-free", clean), ("faulty", flaky)):
        print(
            f"  {name:10} {figures['wall']:7.2f} s   errors {figures['errors'] or 'none'}   "
            f"back-offs {figures['backoffs']}"
        )
    print(f"  faulty / fault-free: {flaky['wall'] / clean['wall']:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
