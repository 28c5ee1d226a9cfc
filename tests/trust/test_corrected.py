"""result.corrected(calibration): the corrected mean beside the raw one, everywhere a user looks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openevals import evaluate
from openevals._contract import EvaluatorInfo, attach_info
from openevals.calibration import calibrate
from openevals.cli import main
from openevals.trust import CalibrationData, load_calibration, ppi_mean


def lenient(*, outputs: Any, **_: Any) -> dict[str, Any]:
    """A biased judge: passes every answer that says "ok", and also those that say "meh"."""
    return {"key": "correct", "score": outputs in ("ok", "meh")}


attach_info(
    lenient,
    EvaluatorInfo(run_name="lenient", feedback_keys=("correct",), score_type="boolean"),
)


def _rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    kinds = rng.choice(["ok", "meh", "bad"], size=n, p=[0.5, 0.2, 0.3])
    return [
        {"id": f"r{i}", "inputs": f"q{i}", "outputs": str(k), "label": bool(k == "ok")}
        for i, k in enumerate(kinds)
    ]


@pytest.fixture(scope="module")
def run() -> Any:
    return evaluate(_rows(600, seed=1), [lenient], progress=False)


@pytest.fixture(scope="module")
def report() -> Any:
    return calibrate(_rows(120, seed=2), lenient, label="label", progress=False, resamples=0)


def test_corrected_mean_is_ppi_on_the_run_and_the_labels(run: Any, report: Any) -> None:
    fixed = run.corrected(report)
    found = fixed.corrections["correct"]
    scores = [r["evaluations"]["lenient"]["results"][0]["score"] for r in run.rows]
    human = [r.human for r in report.rows]
    judge = [r.judge for r in report.rows]
    expected = ppi_mean(human, judge, scores)
    assert found.corrected == expected
    assert found.raw == pytest.approx(np.mean(scores))
    # The judge passes "meh" answers, so its rate (~0.7) is above the true one (~0.5), and the
    # corrected interval sits around the truth.
    assert found.raw - found.corrected.value > 0.1
    assert found.corrected.low < 0.5 < found.corrected.high
    entry = fixed.aggregates["correct"]["corrected"]
    assert entry["mean"] == expected.value and entry["labelled"] == 120
    assert "corrected" not in run.aggregates["correct"]  # the caller's result is not changed
    assert not run.corrections
    assert "judge 0.7" in str(found) and "120 labels" in str(found)


def test_summary_report_and_frames_show_it_beside_the_raw_figure(
    run: Any, report: Any, tmp_path: Path
) -> None:
    from rich.console import Console

    from openevals.report.progress import print_summary

    fixed = run.corrected(report)
    console = Console(record=True, width=200)
    print_summary(fixed, console)
    text = console.export_text()
    value = fixed.corrections["correct"].corrected.value
    assert "corrected" in text and f"{value:.3f}" in text
    page = fixed.report_html(tmp_path / "r.html").read_text("utf-8")
    assert "corrected mean" in page and "prediction-powered" in page
    plain = run.report_html(tmp_path / "plain.html").read_text("utf-8")
    assert "corrected mean" not in plain
    frame = fixed.to_pandas(aggregates=True)
    row = frame.set_index("key").loc["correct"]
    assert row["corrected_mean"] == pytest.approx(value) and row["labelled"] == 120
    assert row["mean"] == pytest.approx(fixed.corrections["correct"].raw)
    assert "corrected_mean" not in run.to_pandas(aggregates=True).columns
    assert fixed.to_dict()["aggregates"]["correct"]["corrected"]["labelled"] == 120
    assert "corrected by 120 labels" in fixed._repr_html_()
    assert "corrected by" not in run._repr_html_()


def test_calibration_file_round_trip(run: Any, report: Any, tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(report.to_dict(), default=str), "utf-8")
    data = load_calibration(path)
    assert data.feedback_key == "correct" and data.n == 120
    assert run.corrected(path).corrections == run.corrected(report).corrections
    lines = tmp_path / "cal.jsonl"
    lines.write_text(
        "".join(json.dumps({"human": h, "judge": j}) + "\n" for h, j in [(1, 1), (0, 1)])
    )
    assert load_calibration(lines) == CalibrationData((1.0, 0.0), (1.0, 1.0))


@pytest.mark.parametrize(
    ("calibration", "kwargs", "error", "match"),
    [
        (42, {}, TypeError, "`calibration` must be"),
        ({"rows": [{"human": "a", "judge": "b"}] * 2}, {"key": "correct"}, ValueError, "numeric"),
        ({"rows": [{"human": 1}] * 2}, {"key": "correct"}, ValueError, "`human` and `judge`"),
        ({"rows": [{"human": 1, "judge": 1}]}, {"key": "correct"}, ValueError, "at least 2"),
        ({"rows": [{"human": 1, "judge": 1}] * 2}, {"key": "nope"}, ValueError, "no feedback key"),
        ({"rows": [{"human": 1, "judge": 1}] * 2}, {"key": 3}, TypeError, "`key`"),
        ({"rows": [{"human": 1, "judge": 1}] * 2}, {"confidence": 1.5}, ValueError, "confidence"),
    ],
)
def test_bad_calibrations_are_refused(
    run: Any, calibration: Any, kwargs: Any, error: Any, match: str
) -> None:
    with pytest.raises(error, match=match):
        run.corrected(calibration, **kwargs)


def test_cli_run_prints_the_corrected_mean(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": f"r{i}", "outputs": "a", "reference_outputs": "a" if i % 4 else "b"}
        for i in range(40)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    cal = tmp_path / "cal.json"
    pairs = [{"human": i % 2 == 0, "judge": True} for i in range(20)]
    cal.write_text(json.dumps({"feedback_key": "exact_match", "rows": pairs}), "utf-8")
    status = main(
        ["run", str(data), "-e", "exact_match", "--no-progress", "--calibration", str(cal)]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "corrected" in out
    # The judge's rate is 0.75 on the run; on the labels it says 1.0 where humans say 0.5. The
    # judge is constant there, so it carries no information (lam = 0) and the corrected mean is
    # the human one, 0.5.
    assert "0.750" in out and "0.500" in out
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    assert (
        main(["run", str(data), "-e", "exact_match", "--no-progress", "--calibration", str(bad)])
        == 2
    )
    assert "rows" in capsys.readouterr().err
