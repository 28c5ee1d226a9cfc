"""Every CLI error is one clear line with exit status 2 (issue 29, item 3).

* JSON/JSONL data nested 100,000 levels deep (``run`` and ``calibrate``): the file and line,
  no ``RecursionError`` traceback;
* ``--cache`` given a file that is not SQLite (or a folder): refused before any model call;
* ``calibrate --json`` into a missing folder: the folder is created, as ``--output``/``--report``
  do; a path below a file is refused before the run.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openevals.cli import main
from openevals.testing import FakeOpenAIServer
from openevals.testing.plugin import OPENAI_ENV_KEY

DEPTH = 100_000
ROW = {"inputs": "q", "outputs": "b", "reference_outputs": "b", "label": True}
JUDGE = "tests.robustness.test_cli:judge"


def judge(
    *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **_: Any
) -> Any:
    return {"key": "judge", "score": outputs == reference_outputs}


def deep_text(depth: int = DEPTH) -> str:
    return "[" * depth + "]" * depth


def write_rows(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def labelled(tmp_path: Path) -> Path:
    rows = [json.dumps({**ROW, "inputs": f"q{i}", "label": i % 2 == 0}) for i in range(4)]
    return write_rows(tmp_path / "labelled.jsonl", rows)


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


def deep_files(tmp_path: Path) -> dict[str, tuple[Path, int]]:
    jsonl = write_rows(
        tmp_path / "deep.jsonl",
        [
            json.dumps(ROW),
            json.dumps(ROW),
            '{"inputs": ' + deep_text() + ', "outputs": "b", "reference_outputs": "b"}',
        ],
    )
    whole = tmp_path / "deep.json"
    whole.write_text("[" + json.dumps(ROW) + ', {"inputs": ' + deep_text() + "}]", "utf-8")
    return {"jsonl": (jsonl, 3), "json": (whole, 1)}


@pytest.mark.parametrize("kind", ["jsonl", "json"])
@pytest.mark.parametrize("command", ["run", "calibrate"])
def test_deeply_nested_data_is_one_line_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    path, line = deep_files(tmp_path)[kind]
    if command == "run":
        argv = ["run", str(path), "-e", "exact_match", "--no-progress"]
    else:
        argv = ["calibrate", str(path), "--judge-function", JUDGE, "--no-progress"]
    assert main(argv) == 2
    message = error_line(capsys)
    assert f"{path}, line {line}: holds a JSON value nested too deeply to read" in message


@pytest.mark.parametrize(
    "content",
    [b"hello, this is not a database", b"\x00\x01\x02" * 50, b'{"a": 1}\n'],
    ids=["text", "binary", "json"],
)
@pytest.mark.parametrize("command", ["run", "calibrate"])
def test_a_cache_that_is_not_sqlite_is_refused_before_any_model_call(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_openai: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    content: bytes,
    command: str,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_ENV_KEY)
    cache = tmp_path / "cache.db"
    cache.write_bytes(content)
    data = labelled(tmp_path)
    model = ["--model", "openai:gpt-test"]
    if command == "run":
        argv = ["run", str(data), "-e", "llm:CORRECTNESS_PROMPT", *model]
    else:
        argv = ["calibrate", str(data), "--judge", "llm:CORRECTNESS_PROMPT", *model]
    assert main([*argv, "--cache", str(cache), "--no-progress"]) == 2
    message = error_line(capsys)
    assert f"--cache {cache}: is not an SQLite database" in message
    assert fake_openai.chat_requests == []
    assert cache.read_bytes() == content


def test_a_cache_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = labelled(tmp_path)
    argv = ["run", str(data), "-e", "exact_match", "--cache", str(tmp_path), "--no-progress"]
    assert main(argv) == 2
    assert "is a folder" in error_line(capsys)


def test_an_empty_or_real_cache_file_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = labelled(tmp_path)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    real = tmp_path / "real.db"
    sqlite3.connect(real).execute("CREATE TABLE t (x)").connection.close()
    for cache in (empty, real, tmp_path / "new" / "cache.db"):
        argv = ["run", str(data), "-e", "exact_match", "--cache", str(cache), "--no-progress"]
        assert main(argv) == 0, capsys.readouterr().err


def test_calibrate_json_creates_missing_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "deeper" / "report.json"
    argv = ["calibrate", str(labelled(tmp_path)), "--judge-function", JUDGE, "--no-progress"]
    assert main([*argv, "--json", str(target)]) == 0
    assert json.loads(target.read_text("utf-8"))
    assert f"JSON: {target}" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["below-a-file", "a-folder"])
def test_calibrate_json_that_cannot_be_written_fails_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    target = blocker / "report.json" if where == "below-a-file" else tmp_path
    argv = ["calibrate", str(labelled(tmp_path)), "--judge-function", JUDGE, "--no-progress"]
    assert main([*argv, "--json", str(target), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert error_line(capsys).startswith(f"error: --json {target}:")
    assert not (tmp_path / "out.jsonl").exists()  # nothing ran


@pytest.mark.parametrize("option", ["--output", "--report"])
@pytest.mark.parametrize("command", ["run", "calibrate"])
def test_an_output_path_below_a_file_fails_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, command: str
) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    data = labelled(tmp_path)
    if command == "run":
        argv = ["run", str(data), "-e", "exact_match"]
    else:
        argv = ["calibrate", str(data), "--judge-function", JUDGE]
    assert main([*argv, option, str(blocker / "out" / "file"), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no summary: nothing ran
    [line] = captured.err.strip().splitlines()
    assert line.startswith(f"error: {option} {blocker / 'out' / 'file'}: cannot")


def test_output_and_report_folders_are_created_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, report = tmp_path / "a" / "out.jsonl", tmp_path / "b" / "c" / "report.html"
    argv = ["run", str(labelled(tmp_path)), "-e", "exact_match", "--no-progress"]
    assert main([*argv, "--output", str(output), "--report", str(report)]) == 0
    assert output.exists() and report.exists()
