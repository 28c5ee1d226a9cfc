"""The columnar path (pure evaluators in blocks) gives what the per-row path gives (issue 25).

Hypothesis generates datasets (ids or none, groups, rows that raise, rows that cannot be
stored, resumed runs) and runs them through both paths: the result rows, aggregates, groups,
summary, report and the ``output=`` file (line by line, keys sorted) must be the same, timings
aside.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import openevals.evaluation.engines.local as runner_module
from openevals import aevaluate, evaluate, exact_match, levenshtein_distance
from openevals.evaluation import blocks
from openevals.evaluation.blocks import columnar_fits
from openevals.evaluation.spec import EvaluatorSpec

TEXT = st.sampled_from(["a", "b", "alpha beta", "alpha beta gamma", "", "é ü"])
VALUE = st.one_of(TEXT, st.none(), st.just({"k": [1, 2]}), st.just("caf\udce9"))
# Generated rows may fail every evaluation (no reference): failures are recorded, not stopped.
EVALUATORS: dict[str, Any] = {
    "exact_match": EvaluatorSpec(exact_match, fail_fast=False),
    "levenshtein_distance": EvaluatorSpec(levenshtein_distance, fail_fast=False),
}


@st.composite
def datasets(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(min_value=0, max_value=30))
    with_ids = draw(st.booleans())
    clean = draw(st.booleans())  # no row raises: the batch forms score whole blocks
    values = TEXT if clean else VALUE
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"inputs": {"q": i}, "outputs": draw(values)}
        if clean or draw(st.booleans()):
            row["reference_outputs"] = draw(values)
        if draw(st.booleans()):
            row["topic"] = draw(st.sampled_from(["x", "y"]))
        if with_ids:
            row["id"] = f"row-{i}"
        rows.append(row)
    return rows


def _strip(value: Any) -> Any:
    """``value`` without timings (they differ from run to run)."""
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if k not in ("elapsed_sec", "mean_elapsed_sec", "started_at", "concurrency")
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _file(path: Path) -> list[str]:
    return [
        json.dumps(_strip(json.loads(line)), sort_keys=True)
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _run(
    rows: list[dict[str, Any]], out: Path, *, columnar: bool, resume_at: int, use_async: bool
) -> tuple[Any, list[str]]:
    mp = pytest.MonkeyPatch()
    if not columnar:
        mp.setattr(runner_module, "columnar_fits", lambda run: False)
    kwargs: dict[str, Any] = {"progress": False, "output": out, "group_by": "topic"}
    try:
        if resume_at:
            evaluate(rows[:resume_at], EVALUATORS, **kwargs)
        if use_async:
            result = asyncio.run(aevaluate(rows, EVALUATORS, **kwargs))
        else:
            result = evaluate(rows, EVALUATORS, **kwargs)
    finally:
        mp.undo()
    return result, _file(out)


def _report(result: Any) -> str:
    """The HTML report of ``result`` with every timing set to zero."""
    from openevals.report.html import render_report

    timed = copy.copy(result)
    timed.rows = _zeroed(list(result.rows))
    timed.summary = _zeroed(result.summary)
    return render_report(timed, title="paths")


def _zeroed(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: 0.0 if k in ("elapsed_sec", "mean_elapsed_sec") else _zeroed(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_zeroed(v) for v in value]
    return value


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=datasets(),
    resume=st.integers(min_value=0, max_value=30),
    block=st.sampled_from([1, 3, 1024]),
    use_async=st.booleans(),
)
def test_both_paths_give_the_same_results(
    rows: list[dict[str, Any]], resume: int, block: int, use_async: bool, tmp_path_factory: Any
) -> None:
    work = tmp_path_factory.mktemp("paths")
    resume_at = min(resume, len(rows))
    mp = pytest.MonkeyPatch()
    mp.setattr(blocks, "BLOCK_ROWS", block)
    try:
        fast, fast_file = _run(
            rows, work / "fast.jsonl", columnar=True, resume_at=resume_at, use_async=use_async
        )
    finally:
        mp.undo()
    slow, slow_file = _run(
        rows, work / "slow.jsonl", columnar=False, resume_at=resume_at, use_async=use_async
    )
    assert _strip(fast.rows) == _strip(slow.rows)
    assert _report(fast) == _report(slow)
    assert fast.aggregates == slow.aggregates
    assert fast.by_group == slow.by_group
    assert {**_strip(fast.summary), "output": None} == {**_strip(slow.summary), "output": None}
    assert fast_file == slow_file
    assert _strip([json.loads(x) for x in (fast.to_jsonl() or "").splitlines()]) == _strip(
        [json.loads(x) for x in (slow.to_jsonl() or "").splitlines()]
    )


def test_the_columnar_path_is_taken_and_uses_batch_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = exact_match.batch  # type: ignore[attr-defined]

    def counting(outputs: Any, reference_outputs: Any) -> Any:
        calls.append(len(outputs))
        return original(outputs, reference_outputs)

    monkeypatch.setattr(exact_match, "batch", counting)
    monkeypatch.setattr(blocks, "BLOCK_ROWS", 10)
    rows = [{"outputs": str(i), "reference_outputs": str(i % 2)} for i in range(25)]
    result = evaluate(rows, [exact_match], progress=False)
    assert calls == [10, 10, 5]
    assert [r["evaluations"]["exact_match"]["results"][0]["score"] for r in result.rows] == [
        str(i) == str(i % 2) for i in range(25)
    ]


def test_a_target_or_a_judge_keeps_the_per_row_path() -> None:
    async def judge(outputs: Any) -> bool:
        return True

    seen: list[bool] = []

    def spy(run: Any) -> bool:
        seen.append(columnar_fits(run))
        return seen[-1]

    mp = pytest.MonkeyPatch()
    mp.setattr(runner_module, "columnar_fits", spy)
    try:
        rows = [{"outputs": "a", "reference_outputs": "a"}]
        evaluate(rows, [exact_match], progress=False)
        evaluate(rows, [exact_match, judge], progress=False)
        evaluate(rows, [exact_match], target=lambda inputs: "a", progress=False)
    finally:
        mp.undo()
    assert seen == [True, False, False]


def test_batch_forms_equal_per_row_calls() -> None:
    outs = ["a", {"x": 1}, "abc", ""]
    refs = ["a", {"x": 1.0}, "abd", ""]
    for fn in (exact_match, levenshtein_distance):
        assert fn.batch(outs, refs) == [  # type: ignore[attr-defined]
            fn(outputs=o, reference_outputs=r) for o, r in zip(outs, refs, strict=True)
        ]
        with pytest.raises(ValueError, match="as many outputs"):
            fn.batch(["a"], [])  # type: ignore[attr-defined]


def test_one_raising_row_costs_only_its_own_call(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    original = exact_match.batch  # type: ignore[attr-defined]

    def counting(outputs: Any, reference_outputs: Any) -> Any:
        sizes.append(len(outputs))
        return original(outputs, reference_outputs)

    monkeypatch.setattr(exact_match, "batch", counting)
    rows: list[dict[str, Any]] = [{"outputs": "a", "reference_outputs": "a"} for _ in range(16)]
    rows[5]["outputs"] = None
    result = evaluate(rows, [exact_match], progress=False)
    statuses = [r["evaluations"]["exact_match"]["status"] for r in result.rows]
    assert statuses == ["success"] * 5 + ["error"] + ["success"] * 10
    assert (
        "exact_match needs `outputs`"
        in result.rows[5]["evaluations"]["exact_match"]["error"]["message"]
    )
    # halves: 16 fails; 8 (rows 0-7) fails; 4 (0-3) ok; 4 (4-7) fails; 2 (4-5) fails;
    # 1 (row 4) ok; 1 (row 5) fails and runs alone; 2 (6-7) ok; 8 (8-15) ok
    assert sizes == [16, 8, 4, 4, 2, 1, 1, 2, 8]


@settings(max_examples=25, deadline=None)
@given(rows=datasets(), use_async=st.booleans())
def test_a_mixed_run_scores_its_pure_evaluators_in_blocks(
    rows: list[dict[str, Any]], use_async: bool
) -> None:
    """A judge with pure evaluators: the pure ones are scored a block at a time by their batch
    forms, the judge row by row; the results are those of per-row calls."""

    async def judge(outputs: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"key": "judged", "score": outputs == "a", "comment": None}

    evaluators = {**EVALUATORS, "judge": judge}
    mp = pytest.MonkeyPatch()
    calls: list[int] = []
    real = exact_match.batch  # type: ignore[attr-defined]

    def counting(outputs: Any, reference_outputs: Any) -> Any:
        calls.append(len(outputs))
        return real(outputs=outputs, reference_outputs=reference_outputs)

    mp.setattr(blocks, "BLOCK_ROWS", 4)
    mp.setattr(runner_module, "BLOCK_ROWS", 4)
    mp.setattr(exact_match, "batch", counting)
    try:
        run = asyncio.run(aevaluate(rows, evaluators, progress=False)) if use_async else None
        fast = run if run is not None else evaluate(rows, evaluators, progress=False)
    finally:
        mp.undo()
    mp.setattr(runner_module, "pure_batch_forms", lambda evaluators: {})
    try:
        slow = evaluate(rows, evaluators, progress=False)
    finally:
        mp.undo()
    assert _strip(fast.rows) == _strip(slow.rows)
    assert fast.aggregates == slow.aggregates
    clean_blocks = [r for r in rows if isinstance(r.get("reference_outputs"), str)]
    if len(clean_blocks) == len(rows) and len(rows) >= 2:
        assert calls, "the batch form scored the pure evaluator's rows"
