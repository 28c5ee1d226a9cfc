"""compare(): pairing, verdicts, exclusions, groups, flips, the gate, the CLI and the report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openevals import compare as top_level_compare
from openevals.cli import main
from openevals.comparison import Comparison, assert_no_regression, compare
from openevals.evaluation import EvaluationResult, evaluate
from openevals.evaluation.spec import EvaluatorSpec


def _run(scores: dict[str, list[Any]], ids: list[str] | None = None, **extra: Any) -> Any:
    """An EvaluationResult whose rows carry the given scores (one evaluator per key)."""
    n = len(next(iter(scores.values())))
    ids = ids or [f"r{i}" for i in range(n)]
    rows = [
        {
            "id": ids[i],
            "outputs": f"out {i}",
            **{f"s_{k}": v[i] for k, v in scores.items()},
            **{name: value[i] for name, value in extra.items()},
        }
        for i in range(n)
    ]
    evaluators = {key: _spec(key, f"s_{key}") for key in scores}
    return evaluate(rows, evaluators, progress=False)


def _spec(key: str, column: str) -> Any:
    """An evaluator named ``key`` that scores each row with its ``column``."""
    from openevals.evaluation import EvaluatorSpec

    def scorer(*, value: Any, **_: Any) -> Any:
        return {"key": key, "score": value, "comment": f"{key} says"}

    return EvaluatorSpec(scorer, name=key, fields={"value": column})


def test_a_planted_improvement_on_2000_boolean_rows_is_found() -> None:
    rng = np.random.default_rng(7)
    base = rng.random(2000) < 0.70
    cand = np.where(rng.random(2000) < 0.05 / 0.30, True, base)  # +0.05 from failures fixed
    comparison = compare(
        _run({"ok": [bool(v) for v in base]}), _run({"ok": [bool(v) for v in cand]})
    )
    item = comparison.key("ok")
    assert item.kind == "boolean" and item.test == "exact McNemar" and item.n == 2000
    assert item.verdict == "improved" and item.p_adjusted < 0.05
    assert item.ci_low is not None and item.ci_low > 0
    assert item.flips_to_pass > 0 and item.flips_to_fail == 0


@pytest.mark.parametrize("kind", ["boolean", "continuous"])
def test_false_positive_rate_over_200_seeds_stays_near_alpha(kind: str) -> None:
    """Two runs of 2,000 rows with no real difference (each run re-draws its noise): the test of
    each key type rejects at alpha 0.05 in 2% to 8% of 200 seeds."""
    from openevals.comparison.results import key_comparison

    rejections = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        if kind == "boolean":
            truth = rng.random(2000) < 0.7
            b = (truth ^ (rng.random(2000) < 0.1)).astype(float)
            c = (truth ^ (rng.random(2000) < 0.1)).astype(float)
        else:
            truth = rng.uniform(0, 1, 2000)
            b = np.clip(truth + rng.normal(0, 0.1, 2000), 0, 1)
            c = np.clip(truth + rng.normal(0, 0.1, 2000), 0, 1)
        p = key_comparison(
            "k",
            kind,
            b,
            c,
            alpha=0.05,
            min_effect=0.02,
            seed=seed,
            test="auto",
            higher=True,
            resamples=200,
            excluded={},
        ).p_value
        rejections += p < 0.05
    assert 0.02 <= rejections / 200 <= 0.08


def test_continuous_keys_use_wilcoxon_and_regressions_are_named() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.4, 0.9, 300)
    cand = np.clip(base - rng.uniform(0.0, 0.1, 300), 0, 1)
    comparison = compare(_run({"q": list(base)}), _run({"q": list(cand)}))
    item = comparison.key("q")
    assert item.kind == "continuous" and item.test.startswith("Wilcoxon")
    assert item.verdict == "regressed"
    assert comparison.failures() and "q: significant regression" in comparison.failures()[0]
    with pytest.raises(AssertionError, match="the candidate regressed"):
        comparison.check()
    assert comparison.failures(fail_on_regression=False) == []
    changed = [r for r in comparison.changed if r.key == "q"]
    assert changed and changed[0].change == "down" and changed[0].baseline_comment == "q says"


def test_lower_is_better_flips_the_verdict() -> None:
    comparison = compare(
        _run({"cost": [1.0] * 40}), _run({"cost": [0.5] * 40}), lower_is_better=["cost"]
    )
    assert comparison.key("cost").verdict == "improved"


def test_underpowered_gives_the_detectable_difference() -> None:
    comparison = compare(_run({"ok": [True, False] * 5}), _run({"ok": [False, True] * 5}))
    item = comparison.key("ok")
    assert item.verdict == "underpowered" and item.detectable is not None
    assert item.detectable > 0.02
    assert "underpowered" in str(comparison) and "detect differences of" in str(comparison)


def test_no_change_with_enough_pairs_is_no_detectable_change() -> None:
    scores = [0.5] * 5000
    item = compare(_run({"s": scores}), _run({"s": scores})).key("s")
    assert item.verdict == "no detectable change" and item.p_value == 1.0


def test_rows_and_keys_in_one_run_only_are_counted_and_listed() -> None:
    base = _run({"a": [True] * 5, "only_b": [1.0] * 5}, ids=["x", "y", "z", "u", "v"])
    cand = _run({"a": [True] * 4, "only_c": [1.0] * 4}, ids=["x", "y", "z", "w"])
    comparison = compare(base, cand)
    assert comparison.rows_paired == 3
    assert comparison.only_in_baseline == ("u", "v") and comparison.only_in_candidate == ("w",)
    assert comparison.keys_only_in_baseline == ("only_b",)
    assert comparison.keys_only_in_candidate == ("only_c",)
    assert comparison.evaluators_only_in_baseline == ("only_b",)
    assert any("2 row(s) only in the baseline" in n for n in comparison.notes)
    data = comparison.to_dict()
    assert data["rows"]["only_in_candidate_ids"] == ["w"]


def test_nan_scores_and_errors_on_one_side_are_reported_exclusions() -> None:
    base = _run({"s": [0.5, float("nan"), 0.5, 0.5, None]})
    cand = _run({"s": [0.6, 0.6, 0.6, 0.6, 0.6]})

    def boom(**_: Any) -> float:
        raise RuntimeError("judge down")

    rows = [{"id": f"r{i}", "outputs": "o"} for i in range(5)]
    failing = evaluate(rows, {"s": EvaluatorSpec(boom, fail_fast=False)}, progress=False)
    item = compare(base, cand).key("s")
    assert item.n == 3 and item.excluded == {"NaN or no score": 2}
    item = compare(failing, cand).key("s")  # the failing run never scored the key
    assert item.n == 0 and item.excluded == {"error in baseline": 5}
    assert item.verdict == "underpowered"
    mixed = evaluate(
        [{"id": f"r{i}", "outputs": f"o{i}"} for i in range(5)],
        {"s": _flaky},
        progress=False,
    )
    item = compare(mixed, cand).key("s")
    assert item.excluded == {"error in baseline": 2} and item.n == 3


def _flaky(*, outputs: Any, **_: Any) -> dict[str, Any]:
    if outputs.endswith(("1", "3")):
        raise RuntimeError("flaky")
    return {"key": "s", "score": 0.5}


def test_a_key_boolean_in_one_run_and_numeric_in_the_other_is_excluded_with_reason() -> None:
    comparison = compare(_run({"k": [True, False, True]}), _run({"k": [0.4, 0.2, 0.9]}))
    assert comparison.keys == ()
    assert (
        "boolean in the baseline but continuous in the candidate" in comparison.excluded_keys["k"]
    )
    assert any("key 'k' not compared" in n for n in comparison.notes)


def test_groups_are_compared_within_each_group() -> None:
    base = _run({"ok": [True] * 40}, topic=["a"] * 20 + ["b"] * 20)
    cand = _run({"ok": [True] * 20 + [False] * 20}, topic=["a"] * 20 + ["b"] * 20)
    comparison = compare(base, cand, group_by="topic")
    assert set(comparison.groups) == {"a", "b"}
    assert comparison.groups["a"][0].difference == 0
    assert comparison.groups["b"][0].verdict == "regressed"


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"alpha": 1.5}, ValueError, "`alpha`"),
        ({"alpha": 1}, ValueError, "`alpha`"),
        ({"min_effect": -1}, ValueError, "`min_effect`"),
        ({"min_effect": math.nan}, ValueError, "`min_effect`"),
        ({"min_effect": math.inf}, ValueError, "`min_effect`"),
        ({"seed": -1}, ValueError, "`seed` must be a whole number >= 0"),
        ({"test": "t"}, ValueError, "`test`"),
        ({"seed": "x"}, TypeError, "`seed`"),
        ({"keys": "ok"}, TypeError, "`keys`"),
        ({"keys": ["nope"]}, ValueError, "neither run has"),
        ({"resamples": 5}, ValueError, "`resamples`"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], error: type[Exception], words: str) -> None:
    run = _run({"ok": [True, False]})
    with pytest.raises(error, match=words.replace("`", ".")):
        compare(run, run, **kwargs)


def test_bad_runs(tmp_path: Path) -> None:
    run = _run({"ok": [True, False]})
    with pytest.raises(ValueError, match="share no row id"):
        compare(run, _run({"ok": [True, False]}, ids=["p", "q"]))
    empty = EvaluationResult(rows=[], aggregates={}, summary={})
    with pytest.raises(ValueError, match="baseline run is empty"):
        compare(empty, run)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a run's output file"):
        compare(text, run)
    other = tmp_path / "data.jsonl"
    other.write_text('{"inputs": 1, "outputs": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: not a record of a run's output file"):
        compare(other, run)
    with pytest.raises(FileNotFoundError, match="no such run file"):
        compare(tmp_path / "missing.jsonl", run)
    with pytest.raises(TypeError, match="EvaluationResult or the path"):
        compare([{"id": 1}], run)


def _files(tmp_path: Path, base: list[bool], cand: list[bool]) -> tuple[Path, Path]:
    paths = []
    for name, scores in (("base", base), ("cand", cand)):
        path = tmp_path / f"{name}.jsonl"
        rows = [
            {"id": f"r{i}", "outputs": "yes" if s else "no", "reference_outputs": "yes"}
            for i, s in enumerate(scores)
        ]
        evaluate(rows, ["exact_match"], output=path, progress=False)
        paths.append(path)
    return paths[0], paths[1]


def test_files_equal_results_and_cli_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 60, [True] * 30 + [False] * 30)
    from_files = compare(base_file, cand_file)
    assert from_files.key("exact_match").verdict == "regressed"
    changed = [r for r in from_files.changed if r.change == "pass -> fail"]
    assert changed[0].baseline_outputs == "yes" and changed[0].candidate_outputs == "no"
    report = tmp_path / "out" / "compare.html"
    assert main(["compare", str(base_file), str(cand_file), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "regressed" in out and "exact_match" in out and report.is_file()
    assert main(["compare", str(base_file), str(cand_file), "--fail-on-regression"]) == 1
    assert "gate: exact_match: significant regression" in capsys.readouterr().err
    assert main(["compare", str(base_file), str(cand_file), "--max-drop", "exact_match=0.6"]) == 0
    assert main(["compare", str(base_file), str(cand_file), "--max-drop", "exact_match=0.1"]) == 1
    assert main(["compare", str(base_file), str(cand_file), "--max-drop", "exact_match"]) == 2
    assert "KEY=NUMBER" in capsys.readouterr().err
    assert main(["compare", str(base_file), str(tmp_path / "nope.jsonl")]) == 2
    assert main(["compare", str(base_file), str(cand_file), "--max-drop", "other=0.1"]) == 2


def test_an_empty_or_header_only_run_file_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 3, [True] * 3)
    empty = tmp_path / "empty-run.jsonl"
    empty.write_bytes(b"")
    header_only = tmp_path / "header-only.jsonl"
    header_only.write_text(cand_file.read_text(encoding="utf-8").splitlines()[0] + "\n")
    for bad, words in ((empty, "is empty"), (header_only, "holds no row records")):
        assert main(["compare", str(base_file), str(bad)]) == 2
        err = capsys.readouterr().err
        assert str(bad) in err and words in err and "`candidate`" in err
        with pytest.raises(ValueError, match=bad.name):
            compare(bad, cand_file)


def test_pytest_helper_fails_with_the_table(tmp_path: Path) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 60, [True] * 30 + [False] * 30)
    with pytest.raises(AssertionError) as info:
        assert_no_regression(base_file, cand_file)
    assert "exact_match" in str(info.value) and "verdict" in str(info.value)
    same = assert_no_regression(base_file, base_file)
    assert isinstance(same, Comparison) and top_level_compare is compare


def test_report_and_notebook_view_escape_outputs(tmp_path: Path) -> None:
    base = _run({"s": [0.1, 0.2, 0.3, 0.4]})
    rows = [{"id": f"r{i}", "outputs": "<script>x</script>", "s_s": 0.9} for i in range(4)]
    cand = evaluate(rows, [_spec("s", "s_s")], progress=False)
    comparison = compare(base, cand)
    html = comparison.report_html(tmp_path / "c.html").read_text(encoding="utf-8")
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
    assert 'id="summary"' in html and "<svg" in html and 'id="rows"' in html
    assert "<table>" in comparison._repr_html_()
    assert json.loads(json.dumps(comparison.to_dict(), default=str))["keys"][0]["key"] == "s"
    assert not math.isnan(comparison.key("s").difference or math.nan)


# --------------------------------------------------------------------------- extreme values (issue 43)


def test_statistics_that_are_not_finite_get_no_verdict_and_never_pass_a_gate() -> None:
    """Scores near the float range's ends made the means inf or NaN, which read as "no detectable
    change" and passed ``--max-drop``; now the verdict says so and every gate fails."""
    big = 1.7e308
    base = _run({"score": [big, -big] * 10, "fine": [0.5] * 20})
    cand = _run({"score": [big, big] * 10, "fine": [0.5] * 20})
    result = compare(base, cand)
    item = result.key("score")
    assert item.verdict == "not finite"
    assert not all(map(math.isfinite, (item.candidate_mean or 0.0, item.difference or 0.0)))
    assert result.key("fine").verdict != "not finite"
    lines = result.failures()
    assert lines and lines[0].startswith("score: the statistics are not finite")
    assert result.failures(fail_on_regression=False, max_drop={"score": 1.0})
    assert result.failures(fail_on_regression=False) == []
    with pytest.raises(AssertionError, match="not finite"):
        result.check()
