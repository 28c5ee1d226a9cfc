"""The ``openevals`` command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openevals.cli import main
from openevals.testing import FakeOpenAIServer
from openevals.testing.plugin import OPENAI_ENV_KEY

REPO = Path(__file__).resolve().parents[1]
ROWS = [
    {
        "id": f"r{i}",
        "inputs": {"question": f"{i}+{i}?"},
        "outputs": str(2 * i if i % 4 else i),
        "reference_outputs": str(2 * i),
        "topic": "small" if i < 4 else "large",
    }
    for i in range(1, 9)
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_run_writes_results_report_and_summary(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    status = main(
        [
            "run",
            str(data),
            "-e",
            "exact_match",
            "--evaluator",
            "levenshtein_distance",
            "--group-by",
            "topic",
            "--output",
            str(output),
            "--report",
            str(report),
            "--no-progress",
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "Scores" in out and "exact_match (rate)" in out and "0.750" in out
    assert "Groups" in out and "small" in out and "macro" in out
    assert "8 rows, 0 with errors; 16 evaluations" in out
    assert f"Report: {report}" in out
    kinds = [json.loads(line)["kind"] for line in output.read_text().splitlines()]
    assert kinds.count("eval") == 16 and kinds.count("row") == 8
    assert "<svg" in report.read_text(encoding="utf-8")
    assert (
        main(
            [
                "run",
                str(data),
                "-e",
                "exact_match",
                "-e",
                "levenshtein_distance",
                "--output",
                str(output),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "16 resumed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "usage"),
        (["run", "DATA"], "the following arguments are required: -e/--evaluator"),
        (["run", "DATA", "-e", "meteor"], "unknown evaluator 'meteor'"),
        (["run", "DATA", "-e", "exact_match:strict=1"], "does not take option"),
        (["run", "DATA", "-e", "llm:CORRECTNESS_PROMPT"], "pass --model"),
        (["run", "missing.jsonl", "-e", "exact_match"], "no such file"),
        (["run", "DATA", "-e", "exact_match", "--concurrency", "0"], "--concurrency must be >= 1"),
        (["run", "DATA", "-e", "exact_match", "--target", "nocolon"], "--target must look like"),
        (["run", "DATA", "-e", "exact_match", "--target", "no_such_mod_xyz:f"], "cannot import"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], message: str, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(data) if a == "DATA" else a for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err


def test_exit_1_only_when_every_row_failed(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = ["run", str(data), "-e", "exact_match:outputs=outputs.missing", "--no-progress"]
    assert main(broken) == 1
    err = capsys.readouterr().err
    assert "KeyError" in err and "... and 3 more failed evaluations" in err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        json.dumps({"outputs": "a", "reference_outputs": "a"})
        + "\n"
        + json.dumps({"outputs": "b"})
        + "\n"
    )
    assert main(["run", str(mixed), "-e", "exact_match", "--no-progress"]) == 0


def test_target_from_a_file(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "my_app.py"
    module.write_text(
        "def answer(inputs):\n"
        "    a, _ = inputs['question'].rstrip('?').split('+')\n"
        "    return str(2 * int(a))\n",
        encoding="utf-8",
    )
    status = main(
        ["run", str(data), "-e", "exact_match", "--target", f"{module}:answer", "--no-progress"]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "8 rows, 0 with errors" in out
    assert "1.000" in out


@pytest.mark.usefixtures("openai_env")
def test_llm_judge_with_model_and_cache(
    data: Path,
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_openai.set_default_chat(json={"reasoning": "Right.", "score": True})
    cache = tmp_path / "cache.sqlite"
    argv = [
        "run",
        str(data),
        "-e",
        "llm:CORRECTNESS_PROMPT",
        "--model",
        "openai:gpt-test",
        "--cache",
        str(cache),
        "--no-progress",
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "8 rows, 0 with errors" in first, first
    assert len(fake_openai.chat_requests) == 8
    assert "correctness (rate)" in first and "0 hits / 8 misses" in first
    assert main(argv) == 0
    second = capsys.readouterr().out
    assert len(fake_openai.chat_requests) == 8, "the cached rerun made no model calls"
    assert "8 hits / 0 misses" in second
    assert OPENAI_ENV_KEY not in first + second


def test_evaluators_command_lists_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluators"]) == 0
    out = capsys.readouterr().out
    for name in ("exact_match", "levenshtein_distance", "json_match", "recall", "ndcg", "llm"):
        assert f"\n{name}\n" in f"\n{out}"


def test_demo_runs_offline_and_writes_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    report = tmp_path / "demo.html"
    assert main(["demo", "--report", str(report), "--no-progress"]) == 0
    out = capsys.readouterr().out
    for key in ("exact_match", "levenshtein_distance", "json_match:average", "recall@3"):
        assert key in out
    assert "24 rows, 0 with errors" in out
    page = report.read_text(encoding="utf-8")
    assert "openevals demo" in page and "geography" in page


def test_console_entry_point_in_a_subprocess(data: Path, tmp_path: Path) -> None:
    env: dict[str, Any] = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "openevals.cli",
            "run",
            str(data),
            "-e",
            "recall:k=1",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, "recall over string outputs fails on every row"
    assert "8 rows, 8 with errors" in proc.stdout
