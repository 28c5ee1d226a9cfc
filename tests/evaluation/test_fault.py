"""Fault test: injected 5xx and malformed judge answers, SIGKILL mid-run, then resume.

After the rerun every row x evaluator has exactly one record (none lost, none duplicated), the
errors are counted, and the API key appears in no result, report or log.
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

from openevals.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
ROWS = 240
EVALUATORS = ("correct", "helpful", "leaky")
SECRET = "sk-fault-SECRETKEY-0123456789abcdef"


def _responder() -> Any:
    rng = random.Random(1234)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            draw = rng.random()
        if draw < 0.10:
            return {"status": 500}
        if draw < 0.15:
            return {"content": "Looks fine to me, nothing to add."}
        return {"json": {"reasoning": "The sum is right.", "score": True}}

    return respond


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LANGSMITH", "LANGCHAIN")) and k != "OPENAI_BASE_URL"
    }
    env["OPENAI_API_KEY"] = SECRET
    env["PYTHONPATH"] = str(REPO)
    return env


def _eval_records(path: Path, *, torn_ok: bool = False) -> list[dict[str, Any]]:
    out = []
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            # Only the very last line of a killed run may be torn (no trailing newline).
            assert torn_ok and i == len(lines) - 1, f"line {i + 1} is not JSON: {line[:200]!r}"
            continue
        if record["kind"] == "eval":
            out.append(record)
    return out


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    return path.read_bytes().count(b'"kind": "eval"')


def test_kill_and_resume_loses_and_duplicates_nothing(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.latency = 0.03
    fake_openai.set_responder(_responder())
    output = tmp_path / "results.jsonl"
    report = tmp_path / "report.html"
    cmd = [sys.executable, "-m", "tests.evaluation.fault_worker", fake_openai.base_url, str(output)]

    # Run 1: killed with SIGKILL once some pairs are finished.
    first = subprocess.Popen(
        [*cmd, str(ROWS)],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _count_lines(output) < 90 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    out1, err1 = first.communicate(timeout=30)
    assert first.returncode == -signal.SIGKILL, (first.returncode, err1.decode()[-2000:])
    killed_at = len(_eval_records(output, torn_ok=True)) if output.exists() else 0
    assert 0 < killed_at < ROWS * len(EVALUATORS), "the kill must land mid-run"

    # Run 2: resume to the end.
    second = subprocess.run(
        [*cmd, str(ROWS), str(report)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert second.returncode == 0, second.stderr.decode()[-3000:]
    summary = json.loads(second.stdout.decode().strip().splitlines()[-1])

    records = _eval_records(output)
    pairs = Counter((r["row_id"], r["evaluator"]) for r in records)
    expected = {(f"row-{n}", e) for n in range(ROWS) for e in EVALUATORS}
    assert set(pairs) == expected, "every row x evaluator has a record"
    assert max(pairs.values()) == 1, "no row x evaluator is recorded twice"
    row_records = Counter(
        json.loads(line)["row_id"]
        for line in output.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["kind"] == "row"
    )
    assert set(row_records) == {f"row-{n}" for n in range(ROWS)}
    assert max(row_records.values()) == 1

    failed = [r for r in records if r["status"] == "error"]
    assert summary["pairs"]["done"] == ROWS * len(EVALUATORS)
    assert summary["pairs"]["resumed"] == killed_at, "every pair finished before the kill is kept"
    assert summary["pairs"]["failed"] == len(failed) > 0
    by_evaluator = Counter(r["evaluator"] for r in failed)
    assert summary["errors"]["by_evaluator"] == dict(by_evaluator)
    assert by_evaluator["leaky"] == ROWS // 20
    assert by_evaluator["helpful"] > 0, "10% 5xx without retries must show up as errors"
    for record in failed:
        assert record["results"] == [] and record["error"]["type"] and record["error"]["message"]
    error_types = set(summary["errors"]["by_type"])
    assert "PermissionError" in error_types
    assert error_types <= {"PermissionError", "InternalServerError", "JudgeOutputError"}
    for record in records:
        if record["status"] == "success" and record["evaluator"] != "leaky":
            assert record["results"][0]["score"] is True

    # The key really was sent to the server, and appears nowhere we wrote.
    auth = [r.headers.get("authorization", "") for r in fake_openai.requests]
    assert any(SECRET in value for value in auth)
    scanned = {
        "results file": output.read_text(encoding="utf-8"),
        "report": report.read_text(encoding="utf-8"),
        "run 1 stdout": out1.decode(),
        "run 1 stderr": err1.decode(),
        "run 2 stdout": second.stdout.decode(),
        "run 2 stderr": second.stderr.decode(),
    }
    for name, text in scanned.items():
        assert SECRET not in text, f"the API key leaked into the {name}"
        assert "SECRETKEY" not in text, f"part of the API key leaked into the {name}"
        assert "Bearer sk-" not in text, f"an auth header leaked into the {name}"
    assert "[REDACTED]" in scanned["results file"]
