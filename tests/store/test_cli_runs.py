"""The command line with the run store: recording (and ``--no-store``), ``openevals runs ...``,
and ``calibrate runs:RUN`` on labels given in the viewer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openevals.cli import main
from openevals.store import RunStore


def _data(path: Path, bad_from: int) -> str:
    rows = [
        {
            "id": f"r{i}",
            "inputs": f"q{i}",
            "outputs": "b" if i >= bad_from else "a",
            "reference_outputs": "a",
        }
        for i in range(80)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_run_records_by_default_and_runs_commands_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # rich tables wide enough for the temporary paths
    db = str(tmp_path / "runs.db")
    good, bad = _data(tmp_path / "good.jsonl", 75), _data(tmp_path / "bad.jsonl", 40)
    base = ["-e", "exact_match", "--no-progress", "--store", db]
    assert main(["run", good, *base, "--tag", "main"]) == 0
    assert "Recorded: run 1" in capsys.readouterr().out
    assert main(["run", bad, *base]) == 0
    assert main(["run", bad, *base, "--no-store"]) == 0
    with RunStore(db) as store:
        assert [r.id for r in store.runs()] == [2, 1]
        assert store.run("main").id == 1
    capsys.readouterr()
    assert main(["runs", "--store", db, "list"]) == 0
    listing = capsys.readouterr().out
    assert "good.jsonl" in listing and "bad.jsonl" in listing
    assert main(["runs", "--store", db, "show", "main"]) == 0
    shown = capsys.readouterr().out
    assert "exact_match" in shown and "0.938" in shown  # 75 of 80
    assert main(["runs", "--store", db, "diff", "main", "latest", "--fail-on-regression"]) == 1
    assert "regressed" in capsys.readouterr().out
    assert main(["runs", "--store", db, "trend", "exact_match"]) == 0
    assert "regressed" in capsys.readouterr().out
    assert main(["runs", "--store", db, "show", "nope"]) == 2
    assert "has no run 'nope'" in capsys.readouterr().err
    assert main(["runs", "--store", db]) == 2


def test_compare_is_recorded_and_a_bad_store_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "runs.db")
    good = _data(tmp_path / "good.jsonl", 75)
    out = str(tmp_path / "out.jsonl")
    assert (
        main(["run", good, "-e", "exact_match", "--no-progress", "--output", out, "--store", db])
        == 0
    )
    assert main(["compare", out, out, "--store", db]) == 0
    assert "Recorded: comparison 2" in capsys.readouterr().out
    with RunStore(db) as store:
        record = store.run(2)
        assert record.kind == "compare" and record.details["comparison"]["rows"]["paired"] == 80
        assert store.run("latest").id == 1  # a comparison is not the latest run
    assert main(["run", good, "-e", "exact_match", "--store", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["run", good, "-e", "exact_match", "--store", db, "--tag", "42"]) == 2


JUDGE = """
def judge(*, outputs, reference_outputs):
    return {"key": "correct", "score": outputs == reference_outputs}
"""


def test_calibrate_on_labels_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "runs.db")
    data = _data(tmp_path / "d.jsonl", 70)
    assert main(["run", data, "-e", "exact_match", "--no-progress", "--store", db]) == 0
    with RunStore(db) as store:
        for i in range(60, 80):  # the person agrees with the judge except on r60..r64
            store.add_label(
                1, f"r{i}", labeller="ann", value=i < 60 or 65 <= i < 70, reason=f"looked {i}"
            )
        store.add_label(1, "r61", labeller="bob", value=False)
    judge = tmp_path / "judge.py"
    judge.write_text(JUDGE, encoding="utf-8")
    args = [
        "calibrate",
        "runs:1",
        "--judge-function",
        f"{judge}:judge",
        "--no-progress",
        "--store",
        db,
    ]
    assert main([*args, "--labeller", "ann", "--label-type", "boolean"]) == 0
    out = capsys.readouterr().out
    assert "20" in out and "Recorded: run 2" in out
    with RunStore(db) as store:
        cal = store.run(2)
        assert cal.kind == "calibrate"
        assert cal.details["calibration"]["n"] == 20
        disagreeing = {d["id"] for d in cal.details["calibration"]["disagreements"]}
        assert disagreeing == {"r60", "r61", "r62", "r63", "r64"}
    assert (
        main(
            [
                "calibrate",
                "runs:1",
                "--judge-function",
                f"{judge}:judge",
                "--store",
                db,
                "--labeller",
                "zed",
            ]
        )
        == 2
    )
    assert "no labelled rows by 'zed'" in capsys.readouterr().err
