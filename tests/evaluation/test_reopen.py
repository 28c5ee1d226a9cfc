"""Reopening a finished run from its output file: ``load_run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openevals import compare, evaluate, exact_match, levenshtein_distance, load_run
from openevals.evaluation.result import EvaluationResult


def _rows(n: int = 40) -> list[dict[str, Any]]:
    return [
        {
            "inputs": {"q": i},
            "outputs": str(i % 3),
            "reference_outputs": "1",
            "category": "ab"[i % 2],
        }
        for i in range(n)
    ]


def _flaky(*, outputs: Any, reference_outputs: Any) -> bool:
    if outputs == "2":
        raise RuntimeError("judge down")
    return bool(outputs == reference_outputs)


def test_reopened_run_equals_the_live_result(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    live = evaluate(
        _rows(),
        [exact_match, levenshtein_distance],
        output=out,
        progress=False,
        group_by="category",
    )
    again = load_run(out)
    assert again.aggregates == live.aggregates
    assert again.by_group == live.by_group
    assert list(again.rows) == list(live.rows)
    assert again.evaluators == live.evaluators
    assert again.summary["reopened"] == str(out)
    assert again.summary["pairs"] == live.summary["pairs"]
    assert again.to_pandas().equals(live.to_pandas())
    assert not hasattr(EvaluationResult, "load")  # load_run is the one way in


def test_errors_are_errors_and_report_and_compare_work(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    live = evaluate(_rows(30), {"flaky": _flaky}, output=out, progress=False)
    again = load_run(out)
    assert again.summary["errors"] == live.summary["errors"]
    assert again.summary["rows_with_errors"] == 10
    assert [r["status"] for r in again.rows] == [r["status"] for r in live.rows]
    html = again.report_html(tmp_path / "r.html").read_text()
    assert "judge down" in html
    assert compare(again, out).rows_paired == 30


def test_a_resumed_file_keeps_the_last_evaluation(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    evaluate(_rows(30), {"flaky": _flaky}, output=out, progress=False)

    def fixed(*, outputs: Any, reference_outputs: Any) -> bool:
        return bool(outputs == reference_outputs)

    live = evaluate(_rows(30), {"flaky": fixed}, output=out, progress=False, retry_errors=True)
    again = load_run(out)
    assert again.summary["rows_with_errors"] == 0
    assert again.aggregates == live.aggregates


def test_a_torn_last_line_is_skipped_and_the_file_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    evaluate(_rows(10), [exact_match], output=out, progress=False)
    with out.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "eval", "row_id": "x", "evalu')
    size = out.stat().st_size
    again = load_run(out)
    assert len(again.rows) == 10
    assert out.stat().st_size == size


def test_bad_sources_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such run file"):
        load_run(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a run's output file"):
        load_run(bad)
    with pytest.raises(TypeError, match="`source` must be"):
        load_run(3)
