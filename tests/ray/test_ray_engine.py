"""The Ray engine on a real local Ray (2 CPUs): the same results as the local engine.

Each test compares ``engine="ray"`` with the local engine on the same data, byte for byte after
sorting keys (wall-clock timings masked: they differ between any two runs).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import BatchMetrics, RayEngine, aevaluate, evaluate
from openevals.evaluation.cache import SQLiteJudgeCache
from openevals.llm import create_llm_as_judge
from openevals.testing import FakeOpenAIServer
from tests.ray.conftest import canon, canon_result, file_records

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ray_session")]

SECRET = "sk-ray-test-secret-0123456789"


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"r{i}",
            "inputs": {"q": i},
            "outputs": str(i % 5),
            "reference_outputs": str(i % 3),
            "topic": "even" if i % 2 == 0 else "odd",
        }
        for i in range(n)
    ]


def flaky(outputs: str) -> bool:
    """A bad evaluator: raises on some rows."""
    if outputs == "3":
        raise ValueError(f"cannot score {outputs!r}")
    return len(outputs) == 1


def batch_sums(batch: dict[str, list[Any]]) -> dict[str, Any]:
    hits = sum(1 for s in batch["scores"] if s.get("exact_match"))
    return {"hits": {"value": hits}, "first_id": {"value": batch["id"][0]}}


def keep_firsts(per_batch: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "hits": {"value": sum(v["value"] for v in per_batch["hits"])},
        "firsts": {"value": [v["value"] for v in per_batch["first_id"]]},
    }


EVALUATORS = ["exact_match", "levenshtein_distance", flaky]
OPTIONS: dict[str, Any] = {
    "group_by": "topic",
    "batch_metrics": BatchMetrics([batch_sums], accumulate=keep_firsts, batch_size=7),
    "progress": False,
}


def test_same_results_records_and_file_as_local(tmp_path: Path) -> None:
    data = rows(120)
    local = evaluate(data, EVALUATORS, output=tmp_path / "local.jsonl", **OPTIONS)
    on_ray = evaluate(
        data, EVALUATORS, output=tmp_path / "ray.jsonl", engine=RayEngine(batch_size=16), **OPTIONS
    )
    assert canon_result(on_ray) == canon_result(local)
    assert [r["index"] for r in on_ray.rows] == list(range(120))
    assert on_ray.summary["errors"]["by_evaluator"] == {"flaky": 24}
    assert on_ray.rows[3]["evaluations"]["flaky"]["error"] == {
        "type": "ValueError",
        "message": "cannot score '3'",
    }
    assert file_records(tmp_path / "ray.jsonl") == file_records(tmp_path / "local.jsonl")
    assert on_ray.batch_metrics["firsts"]["value"][:3] == ["r0", "r7", "r14"]


def test_aevaluate_on_ray_equals_local() -> None:
    data = rows(40)
    local = asyncio.run(aevaluate(data, EVALUATORS, **OPTIONS))
    on_ray = asyncio.run(aevaluate(data, EVALUATORS, engine=RayEngine(workers=2), **OPTIONS))
    assert canon_result(on_ray) == canon_result(local)


def _judge() -> Any:
    return create_llm_as_judge(
        prompt="Question: {inputs}\nAnswer: {outputs}\nCorrect?",
        feedback_key="correct",
        model="openai:gpt-test",
    )


def test_judge_from_workers_against_fake_server_with_shared_cache(
    tmp_path: Path, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, ray_session: Any
) -> None:
    # The key and the base URL reach the workers through the environment (runtime_env), never a
    # file; the judge is built in each worker from the model string.
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_openai.set_default_chat(json={"reasoning": f"fine, key {SECRET}", "score": True})
    data = rows(12)
    local = evaluate(data, [_judge()], cache=tmp_path / "local.sqlite", progress=False)
    assert len(fake_openai.chat_requests) == 12
    output = tmp_path / "ray.jsonl"
    cache = tmp_path / "ray.sqlite"
    on_ray = evaluate(
        data, [_judge()], cache=cache, output=output, engine=RayEngine(batch_size=4), progress=False
    )
    assert len(fake_openai.chat_requests) == 24, "every worker row called the fake server"
    for result in (local, on_ray):
        result.summary["cache"].pop("path")
    assert canon_result(on_ray) == canon_result(local)
    assert on_ray.summary["cache"] == {"hits": 0, "misses": 12}
    # The rerun finds every answer in the SQLite file, reached through the cache actor.
    again = evaluate(data, [_judge()], cache=cache, engine="ray", progress=False)
    assert len(fake_openai.chat_requests) == 24
    assert again.summary["cache"]["hits"] == 12
    with SQLiteJudgeCache(cache) as stored:
        assert len(stored) == 12
    # The secret (echoed by the judge) is redacted everywhere, and Ray kept it off its disk.
    assert "[REDACTED]" in output.read_text() and SECRET not in output.read_text()
    assert SECRET not in json.dumps(on_ray.rows)
    session_dir = Path(ray_session._private.worker._global_node.get_session_dir_path())
    for path in session_dir.rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000 and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


class CountingBatchEvaluator:
    """An evaluator with a ``batch`` form; every batch call is logged to a file."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def __call__(self, *, outputs: str, reference_outputs: str) -> dict[str, Any]:
        if outputs == "4":
            raise ValueError("four is not allowed")
        return {"key": "same", "score": outputs == reference_outputs, "comment": None}

    def batch(self, outputs: list[str], reference_outputs: list[str]) -> list[dict[str, Any]]:
        with self.log.open("a") as fh:
            fh.write(f"{len(outputs)}\n")
        return [
            self(outputs=o, reference_outputs=r)
            for o, r in zip(outputs, reference_outputs, strict=True)
        ]


def test_batch_forms_used_on_workers_and_equal_per_row_results(tmp_path: Path) -> None:
    log = tmp_path / "batches.log"
    data = [r for r in rows(40) if r["outputs"] != "4"]
    evaluator = {"same": CountingBatchEvaluator(log)}
    local = evaluate(data, evaluator, progress=False)
    assert not log.exists(), "the local engine calls per row"
    on_ray = evaluate(data, evaluator, engine=RayEngine(batch_size=10), progress=False)
    assert canon_result(on_ray) == canon_result(local)
    assert sorted(int(n) for n in log.read_text().split()) == [2, 10, 10, 10]
    # One bad row fails the batch call: its rows fall back to per-row calls, errors stay per row.
    log.unlink()
    bad_local = evaluate(rows(20), evaluator, progress=False)
    bad_ray = evaluate(rows(20), evaluator, engine=RayEngine(batch_size=10), progress=False)
    assert canon_result(bad_ray) == canon_result(bad_local)
    assert bad_ray.summary["errors"]["by_evaluator"] == {"same": 4}


def test_batched_type_checking_equals_local(tmp_path: Path) -> None:
    from openevals.code.mypy import create_mypy_evaluator

    samples = [
        "def f(x: int) -> int:\n    return x + 1\n",
        "def f(x: int) -> str:\n    return x\n",
        "x: int = 'a'\n",
        "print('ok')\n",
    ]
    data = [{"id": f"c{i}", "inputs": None, "outputs": code} for i, code in enumerate(samples)]
    local = evaluate(data, [create_mypy_evaluator()], progress=False)
    on_ray = evaluate(
        data, [create_mypy_evaluator()], engine=RayEngine(batch_size=4), progress=False
    )
    assert canon_result(on_ray) == canon_result(local)
    (name,) = on_ray.rows[0]["evaluations"]
    assert [r["evaluations"][name]["results"][0]["score"] for r in on_ray.rows] == [
        True,
        False,
        False,
        True,
    ]


def _cut(path: Path, keep: int) -> None:
    """Keep the first ``keep`` lines and a torn line: what a ``kill -9`` mid-write leaves."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2], encoding="utf-8")


@pytest.mark.parametrize(("first", "then"), [("ray", "local"), ("local", "ray")])
def test_resume_across_engines(tmp_path: Path, first: str, then: str) -> None:
    data = rows(60)
    reference = evaluate(data, EVALUATORS, output=tmp_path / "ref.jsonl", **OPTIONS)
    output = tmp_path / "run.jsonl"
    evaluate(data, EVALUATORS, output=output, engine=first, **OPTIONS)
    _cut(output, 70)
    resumed = evaluate(data, EVALUATORS, output=output, engine=then, **OPTIONS)
    pairs = resumed.summary["pairs"]
    assert 0 < pairs["resumed"] < 180 and pairs["done"] == 180
    for row in resumed.rows:
        for entry in row["evaluations"].values():
            entry["resumed"] = False
    got, want = canon_result(resumed), canon_result(reference)
    got.pop("summary"), want.pop("summary")  # per-evaluator summaries count resumed pairs
    assert got == want
    for key in ("rows", "rows_with_errors", "errors"):
        assert resumed.summary[key] == reference.summary[key]
    # Every pair is in the file once (the torn line was cut off, nothing ran twice).
    evals = [json.loads(x) for x in output.read_text().splitlines() if '"kind": "eval"' in x]
    assert sorted((e["row_id"], e["evaluator"]) for e in evals) == sorted(
        (r["id"], name) for r in data for name in ("exact_match", "levenshtein_distance", "flaky")
    )


def kill_once(outputs: str, marker: str) -> bool:
    """Kills its worker process the first time it sees row ``"2"`` (one marker file per test)."""
    if outputs == "2":
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return True
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def test_killed_worker_loses_no_row(tmp_path: Path) -> None:
    marker = tmp_path / "killed.pid"
    data = [{**r, "marker": str(marker)} for r in rows(50)]
    evaluators = {"survives": kill_once, "exact": "exact_match"}
    output = tmp_path / "out.jsonl"
    on_ray = evaluate(
        data, evaluators, output=output, engine=RayEngine(batch_size=5), progress=False
    )
    assert marker.exists() and int(marker.read_text()) != os.getpid(), "a worker was killed"
    local = evaluate(data, evaluators, progress=False)
    assert canon_result(on_ray)["rows"] == canon_result(local)["rows"]
    assert on_ray.summary["rows_with_errors"] == 0
    lines = [json.loads(x) for x in output.read_text().splitlines()]
    evals = sorted((x["row_id"], x["evaluator"]) for x in lines if x["kind"] == "eval")
    assert evals == sorted((r["id"], n) for r in data for n in ("survives", "exact"))
    assert sorted(x["row_id"] for x in lines if x["kind"] == "row") == sorted(r["id"] for r in data)


def test_cli_engine_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from openevals.cli import main

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(10)), encoding="utf-8")
    outputs = {}
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.jsonl"
        argv = ["run", str(data), "-e", "exact_match", "--output", str(out), "--no-progress"]
        assert main([*argv, "--engine", engine]) == 0
        outputs[engine] = file_records(out)
    assert outputs["ray"] == outputs["local"]
    assert "10 rows, 0 with errors" in capsys.readouterr().out


class SharedSQLite(SQLiteJudgeCache):
    """A backend that says its storage is shared (as Redis would): no actor, workers reopen it."""

    shared_storage = True

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (SharedSQLite, (str(self.path),))


def test_shared_storage_backend_goes_to_workers_directly(
    tmp_path: Path, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_openai.set_default_chat(json={"reasoning": "ok", "score": True})
    backend = SharedSQLite(tmp_path / "shared.sqlite")
    first = evaluate(rows(6), [_judge()], cache=backend, engine="ray", progress=False)
    second = evaluate(rows(6), [_judge()], cache=backend, engine="ray", progress=False)
    assert len(fake_openai.chat_requests) == 6
    assert (first.summary["cache"]["misses"], second.summary["cache"]["hits"]) == (6, 6)
    assert canon(second.aggregates) == canon(first.aggregates)
    backend.close()


def test_cassette_records_and_replays_on_workers(
    tmp_path: Path, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Cassette reaches the workers through the cache actor: recorded there, replayed there
    with no request, and a miss on a worker is that row's error, never a live call."""
    from openevals.testing import Cassette

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_openai.set_default_chat(json={"reasoning": "fine", "score": True})
    data = rows(8)
    path = tmp_path / "judges.jsonl"
    recorded = evaluate(
        data, [_judge()], cache=Cassette(path, mode="record"), engine="ray", progress=False
    )
    assert len(fake_openai.chat_requests) == 8
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1 + 8
    assert SECRET not in path.read_text(encoding="utf-8")
    replayed = evaluate(data, [_judge()], cache=Cassette(path), engine="ray", progress=False)
    assert len(fake_openai.chat_requests) == 8, "replay made no request"
    assert replayed.aggregates == recorded.aggregates
    missing = evaluate(rows(10), [_judge()], cache=Cassette(path), engine="ray", progress=False)
    assert len(fake_openai.chat_requests) == 8
    errors = [r for r in missing.rows if r["status"] == "error"]
    assert [r["id"] for r in errors] == ["r8", "r9"]
    assert "CassetteMissError" in json.dumps(errors)
