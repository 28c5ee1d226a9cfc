"""compare(..., calibration=): the judge-corrected difference decides the calibrated key's verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openevals import compare, evaluate
from openevals.calibration import calibrate
from openevals.cli import main
from openevals.trust.ppi import ppi_difference, ppi_mean
from tests.trust.test_corrected import lenient


def _outputs(n: int, p: list[float], seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [str(k) for k in rng.choice(["ok", "meh", "bad"], size=n, p=p)]


# The lenient judge passes "ok" and "meh"; only "ok" is right. The candidate says "meh" more
# often: its judge rate goes up (0.7 -> 0.8) while its true rate goes down (0.5 -> 0.4).
BASE = _outputs(800, [0.5, 0.2, 0.3], 1)
CAND = _outputs(800, [0.4, 0.4, 0.2], 2)


def _run(outputs: list[str], output: Path) -> Any:
    rows = [{"id": f"r{i}", "inputs": f"q{i}", "outputs": o} for i, o in enumerate(outputs)]
    return evaluate(rows, [lenient], progress=False, output=output)


def _calibration(outputs: list[str], ids: range) -> Any:
    rows = [{"id": f"r{i}", "outputs": outputs[i], "label": outputs[i] == "ok"} for i in ids]
    return calibrate(rows, lenient, label="label", progress=False, resamples=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> tuple[Any, Any]:
    folder = tmp_path_factory.mktemp("runs")
    return _run(BASE, folder / "baseline.jsonl"), _run(CAND, folder / "candidate.jsonl")


def test_paired_labels_turn_an_apparent_gain_into_a_regression(runs: tuple[Any, Any]) -> None:
    base, cand = runs
    cal_b, cal_c = _calibration(BASE, range(300)), _calibration(CAND, range(300))
    raw = compare(base, cand)
    assert raw.key("correct").verdict == "improved"
    fixed = compare(base, cand, calibration={"baseline": cal_b, "candidate": cal_c})
    item = fixed.key("correct")
    judge = np.array([o in ("ok", "meh") for o in CAND], float) - np.array(
        [o in ("ok", "meh") for o in BASE], float
    )
    human = [float(CAND[i] == "ok") - float(BASE[i] == "ok") for i in range(300)]
    expected = ppi_mean(human, judge[:300], judge, confidence=0.95)
    assert item.corrected == expected
    assert item.difference == pytest.approx(judge.mean())  # the raw figure stays beside it
    assert item.corrected.high < 0 and item.verdict == "regressed"
    assert (
        fixed.failures()
        and "correct: significant regression, judge-corrected" in fixed.failures()[0]
    )
    assert "judge-corrected difference" in str(fixed)
    assert fixed.to_dict()["keys"][0]["corrected"]["n_labelled"] == 300


def test_labels_on_different_rows_use_a_rectifier_per_side(runs: tuple[Any, Any]) -> None:
    base, cand = runs
    cal_b, cal_c = _calibration(BASE, range(0, 250)), _calibration(CAND, range(300, 600))
    item = compare(base, cand, calibration={"baseline": cal_b, "candidate": cal_c}).key("correct")
    judge = np.array([o in ("ok", "meh") for o in CAND], float) - np.array(
        [o in ("ok", "meh") for o in BASE], float
    )
    expected = ppi_difference(
        ([r.human for r in cal_b.rows], [r.judge for r in cal_b.rows]),
        ([r.human for r in cal_c.rows], [r.judge for r in cal_c.rows]),
        judge,
    )
    assert item.corrected == expected and item.corrected.method == "PPI (a rectifier per side)"


def test_rectifier_per_side_covers_on_a_biased_judge() -> None:
    """2,000 simulated comparisons (seed 99): 200 labels per side, 1,000 paired rows, judge passes
    30% of failures and misses 10% of passes; true rates 0.5 vs 0.6. The 95% interval of the
    difference covers the true +0.1 in 93-97% of them (binomial s.d. 0.005)."""
    rng = np.random.default_rng(99)

    def side(n: int, rate: float) -> tuple[Any, Any]:
        truth = rng.random(n) < rate
        u = rng.random(n)
        return truth.astype(float), np.where(truth, u < 0.9, u < 0.3).astype(float)

    covered = 0
    reps = 2000
    for _ in range(reps):
        _, jb = side(1000, 0.5)
        _, jc = side(1000, 0.6)
        found = ppi_difference(side(200, 0.5), side(200, 0.6), jc - jb)
        covered += found.low <= 0.1 <= found.high
    assert 0.93 <= covered / reps <= 0.97


def test_bad_calibration_options(runs: tuple[Any, Any]) -> None:
    base, cand = runs
    cal = {"feedback_key": "correct", "rows": [{"human": 1, "judge": 1}, {"human": 0, "judge": 1}]}
    with pytest.raises(TypeError, match="both runs' outputs"):
        compare(base, cand, calibration=cal)
    other = {**cal, "feedback_key": "other"}
    with pytest.raises(ValueError, match="different keys"):
        compare(base, cand, calibration={"baseline": cal, "candidate": other})
    with pytest.raises(ValueError, match="not among the compared keys"):
        compare(base, cand, calibration={"baseline": other, "candidate": other})


def test_cli_compare_with_calibration_gates_on_the_corrected_interval(
    runs: tuple[Any, Any], tmp_path: Path, capsys: Any
) -> None:
    paths = {}
    for side, outputs in (("baseline", BASE), ("candidate", CAND)):
        report = _calibration(outputs, range(300))
        paths[side] = tmp_path / f"{side}-cal.json"
        paths[side].write_text(json.dumps(report.to_dict(), default=str), "utf-8")
    files = [run.summary["output"] for run in runs]  # the runs' output= files
    assert main(["compare", *files, "--fail-on-regression"]) == 0  # the raw figure "improved"
    capsys.readouterr()
    flags = [f"--calibration=baseline={paths['baseline']}", "--calibration"]
    status = main(
        ["compare", *files, "--fail-on-regression", *flags, f"candidate={paths['candidate']}"]
    )
    captured = capsys.readouterr()
    assert status == 1 and "judge-corrected difference" in captured.out
    assert "significant regression" in captured.err
    assert main(["compare", *files, "--calibration", "left=x"]) == 2
    assert "baseline=FILE" in capsys.readouterr().err
