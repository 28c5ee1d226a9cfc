"""evaluate(..., trials=): real repeated calls, pass@k / pass^k, flaky rows, the variance split
(checked by exact simulation), the report, and compare clustered by row."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai import OpenAI

from openevals import compare, evaluate
from openevals._contract import EvaluatorInfo, attach_info
from openevals.evaluation.trials import Trials
from openevals.llm import create_llm_as_judge
from openevals.testing import FakeOpenAIServer
from openevals.trust.trials import pass_at, pass_hat, variance_split

# Per row, the outcome of each of its 4 trials: row a always passes, b never, c passes 1 of 4,
# d passes 3 of 4.
PLAN = {"a": "1111", "b": "0000", "c": "1000", "d": "1110"}


def _scripted_target() -> Any:
    seen: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    def target(inputs: Any) -> str:
        with lock:
            count = seen[inputs]
            seen[inputs] += 1
        return "pass" if PLAN[inputs][count] == "1" else "fail"

    target.seen = seen  # type: ignore[attr-defined]
    return target


def _judge(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
    return {"key": "ok", "score": outputs == "pass"}


attach_info(_judge, EvaluatorInfo(run_name="ok", feedback_keys=("ok",), score_type="boolean"))


def _rows() -> list[dict[str, Any]]:
    return [{"id": row, "inputs": row} for row in PLAN]


def test_trials_run_the_target_k_times_and_give_pass_at_k() -> None:
    target = _scripted_target()
    run = evaluate(_rows(), [_judge], target=target, trials=4, progress=False)
    assert dict(target.seen) == {row: 4 for row in PLAN}
    assert len(run.rows) == 16 and run.rows[0]["id"] == "a@trial0"
    assert run.rows[1]["extra"]["trial"] == {"row": "a", "index": 1}
    stats = run.trial_stats()["ok"]
    passed = {"a": 4, "b": 0, "c": 1, "d": 3}
    for j in range(1, 5):
        assert stats.pass_at[j] == pytest.approx(
            np.mean([pass_at(c, 4, j) for c in passed.values()])
        )
        assert stats.pass_hat[j] == pytest.approx(
            np.mean([pass_hat(c, 4, j) for c in passed.values()])
        )
    assert stats.pass_at[1] == pytest.approx(0.5) and stats.pass_at[4] == pytest.approx(0.75)
    assert stats.pass_hat[4] == pytest.approx(0.25)
    assert stats.flaky == 2 and stats.flip_rate == pytest.approx(0.5)
    assert {r.id for r in stats.flakiest} == {"c", "d"}
    assert "pass@4 0.750" in str(stats)


def test_pass_estimators_by_hand() -> None:
    assert pass_at(1, 4, 1) == pytest.approx(0.25)
    assert pass_at(1, 4, 2) == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    assert pass_at(0, 4, 4) == 0.0 and pass_at(1, 4, 4) == 1.0
    assert pass_hat(3, 4, 2) == pytest.approx(3 / 6) and pass_hat(2, 4, 3) == 0.0


def test_judge_repeats_are_real_calls_and_a_cached_rerun_is_free(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_responder(lambda body: {"json": {"reasoning": "r", "score": True}})
    client = OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    judge = create_llm_as_judge(
        prompt="Answer: {outputs}\nGrade it.", judge=client, model="gpt-test", max_retries=0
    )
    rows = [{"id": f"r{i}", "outputs": f"answer {i}"} for i in range(3)]
    cache = str(tmp_path / "cache.sqlite")
    shape = Trials(trials=2, judge_repeats=3)
    run = evaluate(rows, [judge], trials=shape, cache=cache, progress=False)
    # 3 rows x 2 trials x 3 repeats, all real although a row's requests are the same text.
    assert len(fake_openai.chat_requests) == 18
    names = sorted(run.rows[0]["evaluations"])
    assert names == ["llm_as_judge", "llm_as_judge@repeat1", "llm_as_judge@repeat2"]
    evaluate(rows, [judge], trials=shape, cache=cache, progress=False)
    assert len(fake_openai.chat_requests) == 18  # each trial x repeat found its own cache entry
    stats = run.trial_stats()["score"]
    assert stats.judge_repeats == 3 and stats.flaky == 0


def test_variance_split_by_exact_simulation() -> None:
    """200 simulated runs (seed 7) of y = row + app + judge with known variances (row 0.04, app
    0.02, judge 0.01), 120 rows x 4 trials x 3 repeats. The estimates are unbiased: their mean
    over the runs is within 3 standard errors of the truth; the 95% row-bootstrap intervals of
    the app and judge variances cover the truth in 88-99% of runs (percentile intervals of
    variances run a little short; the band allows that and the binomial s.d. of 0.015)."""
    rng = np.random.default_rng(7)
    truth = {"row": 0.04, "app": 0.02, "judge": 0.01}
    runs, rows, k, m = 200, 120, 4, 3
    found: dict[str, list[float]] = {name: [] for name in truth}
    covered = {name: 0 for name in truth}
    for _ in range(runs):
        grid = (
            rng.normal(0, truth["row"] ** 0.5, (rows, 1, 1))
            + rng.normal(0, truth["app"] ** 0.5, (rows, k, 1))
            + rng.normal(0, truth["judge"] ** 0.5, (rows, k, m))
        )
        split = variance_split(grid, resamples=200, seed=1)
        for name, est in split.items():
            assert est.value is not None and est.low is not None and est.high is not None
            found[name].append(est.value)
            covered[name] += est.low <= truth[name] <= est.high
    for name, values in found.items():
        se = np.std(values) / np.sqrt(runs)
        assert abs(np.mean(values) - truth[name]) < 3 * se, name
    for name in ("app", "judge"):
        assert 0.88 <= covered[name] / runs <= 0.99, (name, covered[name] / runs)


def test_report_lists_the_flakiest_rows(tmp_path: Path) -> None:
    run = evaluate(_rows(), [_judge], target=_scripted_target(), trials=4, progress=False)
    page = run.report_html(tmp_path / "r.html").read_text("utf-8")
    assert "Repeated trials" in page and "Flakiest rows" in page and "pass^j" in page
    section = page[page.index("Flakiest rows") :]
    assert section.index(">c<") < section.index("Rows")


def test_compare_treats_each_row_as_one_cluster(tmp_path: Path) -> None:
    base = evaluate(
        _rows(), [_judge], target=_scripted_target(), trials=4, progress=False,
        output=tmp_path / "base.jsonl",
    )  # fmt: skip

    def better(inputs: Any) -> str:
        return "pass"

    cand = evaluate(_rows(), [_judge], target=better, trials=4, progress=False)
    for baseline in (base, str(tmp_path / "base.jsonl")):
        found = compare(baseline, cand).key("ok")
        assert found.n == 4  # four data rows, not sixteen trial rows
        assert found.kind == "continuous" and found.test.startswith("Wilcoxon")
        assert found.baseline_mean == pytest.approx(0.5)
        assert found.difference == pytest.approx(np.mean([0, 1, 0.75, 0.25]))


def test_bad_trials_are_refused() -> None:
    with pytest.raises(TypeError, match="`trials`"):
        evaluate(_rows(), [_judge], trials="3", progress=False)
    with pytest.raises(ValueError, match="`judge_repeats`"):
        Trials(trials=2, judge_repeats=0)
    with pytest.raises(ValueError, match="`trials`"):
        evaluate(_rows(), [_judge], trials=0, progress=False)
    plain = evaluate(_rows(), [_judge], progress=False)
    with pytest.raises(ValueError, match="no trials"):
        plain.trial_stats()
    assert json.dumps(evaluate(_rows(), [_judge], trials=1, progress=False).summary, default=str)


def test_cli_trials_print_the_trial_figures(tmp_path: Path, capsys: Any) -> None:
    from openevals.cli import main

    data = tmp_path / "rows.jsonl"
    rows = [
        {"id": f"r{i}", "outputs": "a", "reference_outputs": "a" if i % 2 else "b"}
        for i in range(6)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    status = main(["run", str(data), "-e", "exact_match", "--trials", "3", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and "6 rows x 3 trials x 1 judge repeats" in out
    assert "pass@3 0.500" in out and "flaky rows 0 of 6" in out
    assert main(["run", str(data), "-e", "exact_match", "--judge-repeats", "0"]) == 2
    assert "--judge-repeats must be >= 1" in capsys.readouterr().err
