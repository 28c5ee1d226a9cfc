"""Soak test (issue 27): a 2,000-row batch run with two judges against a faulty server, killed
once with SIGKILL and resumed (``make integration-soak``; not part of ``make test``).

The fake server answers each chat request at random (seeded): 10% 5xx, 5% malformed bodies, 2%
hangs past the client's timeout, 1% connection resets, the rest a valid verdict. The run must
end with every row x judge scored or carrying a recorded error, with no row lost or duplicated
in the ``output=`` file (every line parses), within a bounded time. The figures are printed
(run with ``-s`` to see them).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openevals.testing import MALFORMED_REPLIES, FakeOpenAIServer, schema_responder

pytestmark = pytest.mark.integration

ROWS = 2_000
JUDGES = ("correctness", "conciseness")
SEED = 27
CLIENT_TIMEOUT = 1.0
CONCURRENCY = 32
KILL_AFTER = 1_200  # eval lines written before the SIGKILL
BOUND = 600.0  # seconds for the whole soak
ROOT = Path(__file__).resolve().parents[2]
MALFORMED = ("not_json", "html_body", "empty_choices", "null_content", "text_body")
FAULTS = (("5xx", 0.10), ("malformed", 0.05), ("hang", 0.02), ("reset", 0.01))


class FaultyResponder:
    """A seeded random fault (or a valid verdict) per chat request; counts what it injected."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.injected: Counter[str] = Counter()

    def pick(self) -> str:
        with self.lock:
            draw = self.rng.random()
            edge = 0.0
            for kind, share in FAULTS:
                edge += share
                if draw < edge:
                    self.injected[kind] += 1
                    return kind
            self.injected["ok"] += 1
            return "ok"

    def __call__(self, body: dict[str, Any]) -> Any:
        kind = self.pick()
        if kind == "5xx":
            with self.lock:
                status = self.rng.choice((500, 502, 503))
            return {"status": status}
        if kind == "malformed":
            with self.lock:
                name = self.rng.choice(MALFORMED)
            return dict(MALFORMED_REPLIES[name])
        if kind == "hang":
            return {"hang": True}
        if kind == "reset":
            return {"reset": True}
        return schema_responder(body)


def write_data(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(ROWS):
            row = {
                "id": f"row-{i}",
                "inputs": {"question": f"What is {i} + {i}?"},
                "outputs": {"answer": str(2 * i)},
                "reference_outputs": {"answer": str(2 * i)},
            }
            fh.write(json.dumps(row) + "\n")


def eval_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(1 for line in fh if b'"kind": "eval"' in line)


def worker(server: FakeOpenAIServer, data: Path, output: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for name in ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2"):
        env.pop(name, None)
    args = [server.base_url, str(data), str(output), str(CLIENT_TIMEOUT), str(CONCURRENCY)]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.soak_worker", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_soak_faulty_server_sigkill_and_resume(tmp_path: Path) -> None:
    data, output = tmp_path / "data.jsonl", tmp_path / "results.jsonl"
    write_data(data)
    responder = FaultyResponder(SEED)
    start = time.monotonic()
    with FakeOpenAIServer() as server:
        server.set_responder(responder)
        first = worker(server, data, output)
        while eval_lines(output) < KILL_AFTER:
            assert first.poll() is None, first.communicate()[1].decode()[-2000:]
            assert time.monotonic() - start < BOUND, "the first run made too little progress"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed_at = eval_lines(output)
        killed_after = time.monotonic() - start
        second = worker(server, data, output)
        try:
            out, err = second.communicate(timeout=max(BOUND - (time.monotonic() - start), 1))
        except subprocess.TimeoutExpired:
            second.kill()
            pytest.fail("the resumed run did not finish within the bound")
        assert second.returncode == 0, err.decode()[-3000:]
        requests = len(server.chat_requests)
    wall = time.monotonic() - start

    # Every line parses; the last record of each row x judge is the one that counts.
    rows: Counter[str] = Counter()
    final: dict[tuple[str, str], dict[str, Any]] = {}
    eval_records = 0
    for line in output.read_text("utf-8").splitlines():
        record = json.loads(line)  # raises on a torn or garbled line
        if record["kind"] == "row":
            rows[record["row_id"]] += 1
        elif record["kind"] == "eval":
            eval_records += 1
            final[(record["row_id"], record["evaluator"])] = record
    expected_ids = {f"row-{i}" for i in range(ROWS)}
    assert set(rows) == expected_ids, "a row is missing from the output file"
    assert set(final) == {(r, j) for r in expected_ids for j in JUDGES}
    for record in final.values():
        if record["status"] == "success":
            assert isinstance(record["results"][0]["score"], bool)
        else:
            assert record["error"] and record["error"]["message"], record
    # A pair is written once, except a pair the kill caught between runs (at most one per
    # evaluation in flight): nothing is duplicated beyond what was in flight.
    duplicates = eval_records - len(final)
    assert duplicates <= CONCURRENCY, duplicates
    row_repeats = sum(n - 1 for n in rows.values())
    assert row_repeats <= CONCURRENCY, row_repeats
    statuses = Counter(r["status"] for r in final.values())
    errors = Counter(str(r["error"]["type"]) for r in final.values() if r["status"] != "success")
    assert wall < BOUND
    print(
        f"\nsoak: {ROWS} rows x {len(JUDGES)} judges; {requests} chat requests; injected "
        f"{dict(responder.injected)}; killed after {killed_after:.1f} s at {killed_at} eval "
        f"lines; final {dict(statuses)}; errors by type {dict(errors)}; duplicate eval lines "
        f"{duplicates}, repeated row lines {row_repeats}; wall {wall:.1f} s; resumed run: "
        f"{out.decode().strip()}"
    )
