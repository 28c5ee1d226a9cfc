"""``openevals calibrate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openevals.cli import main
from openevals.testing import FakeOpenAIServer

JUDGE_FILE = """
def judge(*, inputs, outputs):
    # wrong on every third row
    good = outputs.startswith("right")
    return {"key": "correct", "score": good if int(inputs[1:]) % 3 else not good,
            "comment": "looked at " + outputs}
"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "labelled.jsonl"
    rows = [
        {
            "id": f"r{i}",
            "inputs": f"q{i}",
            "outputs": "right" if i % 2 else "wrong",
            "human": i % 2 == 1,
            "why": f"because {i}",
        }
        for i in range(9)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_calibrate_prints_the_report_and_writes_files(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = tmp_path / "myjudge.py"
    judge.write_text(JUDGE_FILE, encoding="utf-8")
    report, out_json = tmp_path / "r.html", tmp_path / "r.json"
    code = main(
        [
            "calibrate",
            str(data),
            "--judge-function",
            f"{judge}:judge",
            "--label",
            "human",
            "--reason",
            "why",
            "--report",
            str(report),
            "--json",
            str(out_json),
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "accuracy              0.667" in printed  # rows 0, 3 and 6 are wrong
    assert "Disagreements: 3" in printed and "human: because 3" in printed
    assert "<h2>Calibration</h2>" in report.read_text(encoding="utf-8")
    figures = json.loads(out_json.read_text(encoding="utf-8"))
    assert figures["figures"]["accuracy"]["value"] == pytest.approx(6 / 9)
    assert [d["id"] for d in figures["disagreements"]] == ["r0", "r6", "r3"]


@pytest.mark.usefixtures("openai_env")
def test_calibrate_with_an_llm_judge_spec(
    data: Path,
    fake_openai: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_openai.set_default_chat(json={"reasoning": "fine", "score": True})
    code = main(
        [
            "calibrate",
            str(data),
            "--judge",
            "llm:CORRECTNESS_PROMPT",
            "--model",
            "openai:gpt-test",
            "--label",
            "human",
            "--no-progress",
        ]
    )
    assert code == 0
    assert len(fake_openai.chat_requests) == 9
    assert "accuracy              0.444" in capsys.readouterr().out  # 4 of 9 labels are true


@pytest.mark.usefixtures("openai_env")
def test_usage_errors_exit_2_before_any_call(
    data: Path,
    fake_openai: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["calibrate", str(data), "--judge", "llm:CORRECTNESS_PROMPT", "--model", "openai:x"]
    assert main([*base, "--label", "nope", "--no-progress"]) == 2
    assert "no row has a label in column 'nope'" in capsys.readouterr().err
    assert main([*base, "--label", "human", "--label-type", "continuous"]) == 2
    assert main(["calibrate", str(data), "--judge", "nonsense", "--label", "human"]) == 2
    assert main(["calibrate", str(data), "--label", "human"]) == 2  # no judge given
    assert fake_openai.chat_requests == []
