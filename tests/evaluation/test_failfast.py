"""Configuration mistakes stop a run; the most common errors are shown (issue 40, item 4)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openevals import evaluate
from openevals.evaluation import EvaluatorFailing, EvaluatorSpec, aevaluate

ROWS = [{"inputs": f"q{n}", "outputs": "a", "reference": "a"} for n in range(40)]


def _wrong_column(*, outputs: Any, reference_outputs: Any) -> bool:
    return bool(outputs == reference_outputs)


def test_identical_first_failures_stop_the_run_with_the_message_and_the_partial_result() -> None:
    def judge(*, outputs: Any) -> bool:
        raise RuntimeError("OPENAI_API_KEY is not set")

    with pytest.raises(EvaluatorFailing, match=r"first 5 rows.*OPENAI_API_KEY is not set") as info:
        evaluate(ROWS, {"judge": judge}, progress=False, concurrency=1)
    stop = info.value
    assert stop.evaluator == "judge" and stop.error["type"] == "RuntimeError"
    assert stop.result is not None and stop.result.interrupted
    assert stop.result.summary["pairs"]["failed"] == 5 and len(stop.result.rows) < len(ROWS)


def test_the_columnar_path_and_aevaluate_stop_too() -> None:
    rows = [{"outputs": "a", "reference": "a"}] * 3000
    with pytest.raises(EvaluatorFailing, match="reference_outputs") as info:
        evaluate(rows, ["exact_match"], progress=False)
    assert info.value.result is not None and len(info.value.result.rows) < len(rows)

    async def broken(*, outputs: Any) -> bool:
        raise KeyError("no such column")

    with pytest.raises(EvaluatorFailing, match="no such column"):
        asyncio.run(aevaluate(ROWS, {"broken": broken}, progress=False, concurrency=1))


def test_different_errors_a_success_or_fail_fast_false_go_on() -> None:
    def varied(*, inputs: Any) -> bool:
        raise ValueError(f"bad {inputs}")

    result = evaluate(ROWS, {"varied": varied}, progress=False)
    assert result.summary["pairs"]["failed"] == len(ROWS)

    def late(*, inputs: Any) -> bool:
        if inputs == "q0":
            return True
        raise ValueError("no reference")

    assert evaluate(ROWS, {"late": late}, progress=False).summary["pairs"]["failed"] == 39
    spec = EvaluatorSpec(_wrong_column, name="strict", fail_fast=False)
    assert evaluate(ROWS, [spec], progress=False).summary["pairs"]["failed"] == len(ROWS)


def test_repr_notebook_and_summary_show_the_most_common_errors() -> None:
    def picky(*, inputs: Any) -> bool:
        if inputs in ("q0", "q1"):
            return True
        raise ValueError("no reference" if inputs == "q2" else "odd row")

    result = evaluate(ROWS, {"picky": picky}, progress=False)
    common = result.summary["common_errors"]
    assert common[0] == {
        "evaluator": "picky",
        "type": "ValueError",
        "message": "odd row",
        "count": 37,
    }
    assert common[1]["count"] == 1
    text = repr(result)
    assert "37x picky: ValueError: odd row" in text and "1x picky: ValueError: no reference" in text
    assert "37x picky: ValueError: odd row" in result._repr_html_()
