"""Record and replay of judge answers (openevals.testing.Cassette)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import aevaluate, evaluate
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.pairwise import create_pairwise_llm_as_judge
from openevals.testing import (
    Cassette,
    CassetteError,
    CassetteMissError,
    FakeOpenAIServer,
    async_openai_client,
    openai_client,
)

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer right?"
SECRET = "sk-proj-CASSETTE-SECRET-0123456789"


def _judge(server: FakeOpenAIServer, prompt: str = PROMPT) -> Any:
    return create_llm_as_judge(
        prompt=prompt, judge=openai_client(server, max_retries=0), model="gpt-test"
    )


def _ajudge(server: FakeOpenAIServer) -> Any:
    return create_async_llm_as_judge(
        prompt=PROMPT, judge=async_openai_client(server, max_retries=0), model="gpt-test"
    )


def _script(server: FakeOpenAIServer) -> None:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(body["messages"])
        return {"json": {"reasoning": "checked", "score": "right" in text}}

    server.set_responder(respond)


ROWS = [
    {"id": f"r{i}", "inputs": f"q{i}", "outputs": "right" if i % 2 else "wrong"} for i in range(6)
]


def test_record_then_replay_is_identical_with_zero_requests(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    with Cassette(path, mode="record"):
        recorded = [_judge(fake_openai)(inputs="q", outputs=o) for o in ("right", "wrong")]
    assert len(fake_openai.chat_requests) == 2
    fake_openai.reset()
    with Cassette(path) as cassette:
        replayed = [_judge(fake_openai)(inputs="q", outputs=o) for o in ("right", "wrong")]
    assert fake_openai.chat_requests == []
    assert cassette.hits == 2
    for a, b in zip(recorded, replayed, strict=True):
        assert (a["key"], a["score"], a["comment"]) == (b["key"], b["score"], b["comment"])


async def test_async_judges_and_aevaluate_replay(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    first = await aevaluate(
        ROWS, [_ajudge(fake_openai)], cache=Cassette(path, mode="record"), progress=False
    )
    fake_openai.reset()
    again = await aevaluate(ROWS, [_ajudge(fake_openai)], cache=Cassette(path), progress=False)
    assert fake_openai.chat_requests == []
    assert first.aggregates == again.aggregates
    assert [r["status"] for r in again.rows] == ["success"] * 6


def test_evaluate_with_pairwise_judge_replays(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "pairwise.jsonl"
    fake_openai.set_responder(lambda body: {"json": {"reasoning": "x", "preference": "A"}})
    judge = create_pairwise_llm_as_judge(
        judge=openai_client(fake_openai, max_retries=0), model="gpt-test"
    )
    rows = [{"inputs": "q", "outputs": {"a": "1", "b": "2"}}] * 2
    first = evaluate(rows, [judge], systems=["a", "b"], cache=Cassette(path, mode="record"))
    fake_openai.reset()
    again = evaluate(rows, [judge], systems=["a", "b"], cache=Cassette(path), progress=False)
    assert fake_openai.chat_requests == []
    assert first.aggregates == again.aggregates


def test_a_changed_prompt_fails_clearly_and_calls_nothing(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    with Cassette(path, mode="record"):
        _judge(fake_openai)(inputs="q", outputs="right")
    fake_openai.reset()
    with Cassette(path), pytest.raises(CassetteMissError) as info:
        _judge(fake_openai, prompt=PROMPT + " Be strict.")(inputs="q", outputs="right")
    message = str(info.value)
    assert "gpt-test" in message and "prompt sha256" in message and str(path) in message
    assert "No model was called" in message
    assert fake_openai.chat_requests == []
    # in a batch run the miss is that row's recorded error, never a score
    result = evaluate(
        ROWS[:2],
        [_judge(fake_openai, prompt=PROMPT + " Be strict.")],
        cache=Cassette(path),
        progress=False,
    )
    assert {r["status"] for r in result.rows} == {"error"} and result.aggregates == {}
    assert fake_openai.chat_requests == []


def test_auto_mode_records_only_what_is_missing(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    with Cassette(path, mode="auto"):
        _judge(fake_openai)(inputs="q", outputs="right")
    with Cassette(path, mode="auto") as cassette:
        _judge(fake_openai)(inputs="q", outputs="right")
        _judge(fake_openai)(inputs="q", outputs="wrong")
    assert len(fake_openai.chat_requests) == 2 and len(cassette) == 2


def test_no_secret_is_written(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "judges.jsonl"
    fake_openai.set_responder(
        lambda body: {"json": {"reasoning": f"I saw {SECRET}", "score": True}}
    )
    client = openai_client(fake_openai, api_key=SECRET, default_headers={"X-Api-Key": SECRET})
    judge = create_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test")
    with Cassette(path, mode="record"):
        judge(inputs=f"my key is {SECRET}", outputs="right")
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and "[REDACTED]" in text
    assert fake_openai.requests[-1].headers["authorization"] == f"Bearer {SECRET}"


def test_keys_are_stable_across_processes(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    """A cassette recorded here replays in a fresh interpreter (another hash seed)."""
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    with Cassette(path, mode="record"):
        _judge(fake_openai)(inputs="q", outputs="right")
    code = f"""
import sys
from openevals.llm import create_llm_as_judge
from openevals.testing import Cassette, FakeOpenAIServer, openai_client
with FakeOpenAIServer() as server, Cassette({str(path)!r}):
    judge = create_llm_as_judge(prompt={PROMPT!r}, judge=openai_client(server), model="gpt-test")
    out = judge(inputs="q", outputs="right")
    assert server.chat_requests == [] and out["score"] is True, out
print("ok")
"""
    env = {"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"}
    import os

    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"openevals_cassette": 99}\n', ["line 1", "format version 1", "99"]),
        ('{"something": 1}\n', ["line 1", "not an openevals cassette"]),
        ('{"openevals_cassette": 1}\n{"key": "k", "mod', ["line 2", "not a JSON object"]),
        ('{"openevals_cassette": 1}\n{"key": "k"}\n', ["line 2", "not a recorded answer"]),
        (
            '{"openevals_cassette": 1}\n{"key": "k", "model": "m", "prompt_sha256": "p", '
            '"answer": [1]}\n',
            ["line 2", "`answer` must be an object"],
        ),
    ],
)
def test_bad_files_name_the_file_and_line(tmp_path: Path, content: str, words: list[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError) as info:
        Cassette(path)
    for word in [str(path), *words]:
        assert word in str(info.value)


HEADER = b'{"openevals_cassette": 1}\n'
ENTRY = b'{"key": "k", "model": "m", "prompt_sha256": "p", "answer": {"score": 1}}\n'


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (HEADER + ENTRY + b'{"key": "caf\xe9"}\n' + ENTRY, ["line 3", "not UTF-8", "0xe9"]),
        (b"\xff\xfe" + HEADER, ["line 1", "not UTF-8", "0xff"]),
        (
            HEADER + b'{"key": "k", "answer": ' + b"[" * 5_000 + b"]" * 5_000 + b"}\n",
            ["line 2", "nested too deeply"],
        ),
        (HEADER + b"[" * 100_000 + b"\n", ["line 2", "nested too deeply"]),
    ],
)
def test_undecodable_and_deep_lines_are_cassette_errors(
    tmp_path: Path, content: bytes, words: list[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    for mode in ("replay", "auto"):
        with pytest.raises(CassetteError) as info:
            Cassette(path, mode=mode)  # type: ignore[arg-type]
        for word in [str(path), *words]:
            assert word in str(info.value)


def test_a_recorded_answer_whose_shape_changed_is_a_clear_miss(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """The file says one answer for the key; the request now wants three samples of it."""
    path = tmp_path / "judges.jsonl"
    _script(fake_openai)
    with Cassette(path, mode="record"):
        _judge(fake_openai)(inputs="q", outputs="right")
    lines = path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[1])
    entry["answer"] = {"answers": [entry["answer"]]}  # a multi-sample entry for a 1-sample call
    path.write_text(lines[0] + "\n" + json.dumps(entry) + "\n", encoding="utf-8")
    fake_openai.reset()
    with Cassette(path), pytest.raises(CassetteMissError, match="no longer fits the request"):
        _judge(fake_openai)(inputs="q", outputs="right")
    assert fake_openai.chat_requests == []


def test_bad_arguments_and_pickling(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="`mode`"):
        Cassette(tmp_path / "x.jsonl", mode="play")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`path`"):
        Cassette(3)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="record it first"):
        Cassette(tmp_path / "missing.jsonl")
    recording = Cassette(tmp_path / "r.jsonl", mode="record")
    copy = pickle.loads(pickle.dumps(recording))
    assert copy.mode == "auto" and copy.path == recording.path  # reopened: appends, never wipes
    assert pickle.loads(pickle.dumps(Cassette(tmp_path / "r.jsonl"))).mode == "replay"
