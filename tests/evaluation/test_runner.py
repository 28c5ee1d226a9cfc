"""The batch runner: evaluators, isolation, concurrency, targets, resume, batch metrics."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openevals._contract import EvaluatorInfo, attach_info
from openevals.evaluation import BatchMetrics, Budget, EvaluatorSpec, aevaluate, evaluate
from openevals.evaluation.result import EvaluationInterrupted
from openevals.exact import exact_match, exact_match_async
from openevals.string.levenshtein import levenshtein_distance

DATA = [
    {
        "id": f"r{i}",
        "inputs": {"q": f"q{i}"},
        "outputs": f"a{i % 3}",
        "reference_outputs": "a0",
        "template_id": f"t{i % 2}",
        "context": f"ctx{i}",
    }
    for i in range(12)
]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def eval_records(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["kind"] == "eval"]


class Calls:
    """Counts calls per (evaluator, row output) and the most calls in flight at once."""

    def __init__(self) -> None:
        self.count: Counter[tuple[str, Any]] = Counter()
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0

    def enter(self, name: str, key: Any) -> None:
        with self.lock:
            self.count[(name, key)] += 1
            self.active += 1
            self.peak = max(self.peak, self.active)

    def leave(self) -> None:
        with self.lock:
            self.active -= 1


# ----------------------------------------------------------------------------- basics


def test_sync_async_and_pure_evaluators_all_run_once_per_row() -> None:
    calls = Calls()

    def sync_len(*, outputs: str, **kwargs: Any) -> dict[str, Any]:
        calls.enter("sync", outputs)
        time.sleep(0.001)
        calls.leave()
        return {"key": "length", "score": len(outputs), "comment": f"len of {outputs}"}

    async def async_upper(*, inputs: dict[str, str], outputs: str) -> dict[str, Any]:
        calls.enter("async", inputs["q"])
        await asyncio.sleep(0.001)
        calls.leave()
        return {"key": "upper", "score": outputs.isupper()}

    result = evaluate(
        DATA, [exact_match, levenshtein_distance, sync_len, async_upper], progress=False
    )
    assert len(result.rows) == len(DATA)
    assert [r["id"] for r in result.rows] == [d["id"] for d in DATA]
    # 12 rows: outputs cycle a0/a1/a2 (4 rows each); every input q0..q11 is unique.
    assert {k: v for k, v in calls.count.items() if k[0] == "sync"} == {
        ("sync", "a0"): 4,
        ("sync", "a1"): 4,
        ("sync", "a2"): 4,
    }
    assert {k: v for k, v in calls.count.items() if k[0] == "async"} == {
        ("async", f"q{i}"): 1 for i in range(12)
    }
    assert result.evaluators == ["exact_match", "levenshtein_distance", "sync_len", "async_upper"]
    agg = result.aggregates
    assert agg["exact_match"]["type"] == "boolean"
    assert agg["exact_match"]["rate"] == pytest.approx(4 / 12)
    assert agg["length"]["mean"] == 2.0
    assert agg["upper"]["rate"] == 0.0
    row = result.rows[1]
    assert row["status"] == "success"
    assert row["evaluations"]["sync_len"]["results"][0]["comment"] == "len of a1"
    assert row["extra"] == {"template_id": "t1", "context": "ctx1"}
    assert result.summary["pairs"] == {
        "done": 48,
        "succeeded": 48,
        "failed": 0,
        "resumed": 0,
        "reevaluated": 0,
    }


async def test_aevaluate_matches_evaluate() -> None:
    sync_result = await asyncio.to_thread(
        evaluate, DATA, [exact_match, levenshtein_distance], progress=False
    )
    async_result = await aevaluate(DATA, [exact_match_async, levenshtein_distance], progress=False)
    assert async_result.aggregates["exact_match"] == sync_result.aggregates["exact_match"]
    assert async_result.aggregates == sync_result.aggregates


async def test_evaluate_works_inside_a_running_event_loop() -> None:
    result = evaluate(DATA[:3], [exact_match], progress=False)
    assert [r["status"] for r in result.rows] == ["success"] * 3


def test_evaluators_get_only_the_arguments_they_accept() -> None:
    seen: dict[str, set[str]] = {}

    def narrow(*, outputs: Any) -> bool:
        seen["narrow"] = {"outputs"}
        return True

    def with_context(*, outputs: Any, context: str) -> dict[str, Any]:
        seen["with_context"] = {"outputs", "context"}
        return {"key": "ctx", "score": context.startswith("ctx")}

    def everything(**kwargs: Any) -> dict[str, Any]:
        seen["everything"] = set(kwargs)
        return {"key": "all", "score": 1}

    result = evaluate(DATA[:2], [narrow, with_context, everything], progress=False)
    assert result.summary["pairs"]["failed"] == 0
    assert seen["everything"] == {
        "inputs",
        "outputs",
        "reference_outputs",
        "template_id",
        "context",
    }
    assert result.aggregates["ctx"]["rate"] == 1.0
    assert result.aggregates["narrow"]["rate"] == 1.0


def test_the_callers_data_is_not_mutated() -> None:
    data = copy.deepcopy(DATA)

    def target(inputs: dict[str, str]) -> str:
        return inputs["q"].upper()

    evaluate(data, [exact_match, levenshtein_distance], target=target, progress=False)
    assert data == DATA


# ----------------------------------------------------------------------------- failures


def test_an_evaluator_error_is_recorded_on_its_row_and_never_becomes_a_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "s3cr3t-value-123456")

    def flaky(*, outputs: str, **kwargs: Any) -> dict[str, Any]:
        if outputs == "a1":
            raise RuntimeError("upstream said no (key s3cr3t-value-123456, Bearer abcdefghijk)")
        return {"key": "flaky", "score": 1.0}

    result = evaluate(DATA, [exact_match, flaky], progress=False, group_by="template_id")
    failed = [r for r in result.rows if r["status"] == "error"]
    assert [r["outputs"] for r in failed] == ["a1"] * 4
    entry = failed[0]["evaluations"]["flaky"]
    assert entry["status"] == "error" and entry["results"] == []
    assert entry["error"]["type"] == "RuntimeError"
    assert "s3cr3t" not in entry["error"]["message"]
    assert "abcdefghijk" not in entry["error"]["message"]
    assert "[REDACTED]" in entry["error"]["message"]
    assert failed[0]["evaluations"]["exact_match"]["status"] == "success"
    assert result.aggregates["flaky"]["count"] == 8, "failed rows contribute no score"
    assert result.aggregates["exact_match"]["count"] == 12
    summary = result.summary
    assert summary["errors"] == {"by_evaluator": {"flaky": 4}, "by_type": {"RuntimeError": 4}}
    assert summary["rows_with_errors"] == 4
    assert summary["pairs"]["failed"] == 4
    per_group = result.by_group["per_group"]  # type: ignore[index]
    assert per_group["t1"]["errors"] == {"flaky": 2}
    assert per_group["t1"]["number_of_error_samples"] == 2


def test_wrong_return_types_and_missing_arguments_are_errors() -> None:
    def returns_text(**kwargs: Any) -> str:
        return "great"

    def needs_more(*, outputs: Any, reference_outputs: Any, rubric: str) -> bool:
        return True

    result = evaluate(DATA[:2], [returns_text, needs_more], progress=False)
    errors = {
        name: entry["error"]["type"]
        for name, entry in result.rows[0]["evaluations"].items()
        if entry["error"]
    }
    assert errors == {"returns_text": "TypeError", "needs_more": "TypeError"}


def test_result_shapes_are_normalised() -> None:
    def plain_bool(**kwargs: Any) -> bool:
        return True

    def many(**kwargs: Any) -> list[dict[str, Any]]:
        return [{"key": "m1", "score": 1}, {"key": "m2", "score": 0, "comment": "c"}]

    def raw_dict(**kwargs: Any) -> dict[str, Any]:
        return {"score": 0.5, "reasoning": "because"}

    result = evaluate(DATA[:1], [plain_bool, many, raw_dict], progress=False)
    evaluations = result.rows[0]["evaluations"]
    assert evaluations["plain_bool"]["results"] == [
        {"key": "plain_bool", "score": True, "comment": None, "metadata": None}
    ]
    assert [r["key"] for r in evaluations["many"]["results"]] == ["m1", "m2"]
    assert evaluations["raw_dict"]["results"][0]["comment"] == "because"
    assert set(result.aggregates) == {"plain_bool", "m1", "m2", "raw_dict"}


# ----------------------------------------------------------------------------- concurrency


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_one_global_concurrency_bound(kind: str) -> None:
    calls = Calls()

    def sync_slow(*, outputs: Any, **kw: Any) -> bool:
        calls.enter("s", outputs)
        time.sleep(0.02)
        calls.leave()
        return True

    async def async_slow(*, outputs: Any, **kw: Any) -> bool:
        calls.enter("a", outputs)
        await asyncio.sleep(0.02)
        calls.leave()
        return True

    fn = sync_slow if kind == "sync" else async_slow
    data = [{"outputs": i, "reference_outputs": i} for i in range(24)]
    result = evaluate(data, {"one": fn, "two": fn}, concurrency=4, progress=False)
    assert result.summary["pairs"]["done"] == 48
    assert calls.peak == 4, f"peak in-flight calls {calls.peak} (bound 4)"


def test_async_evaluators_overlap() -> None:
    async def wait(**kwargs: Any) -> bool:
        await asyncio.sleep(0.2)
        return True

    start = time.perf_counter()
    evaluate([{"outputs": i} for i in range(40)], [wait], concurrency=40, progress=False)
    # One at a time would take 40 x 0.2 = 8 s; the bound is loose so load cannot flake it.
    assert time.perf_counter() - start < 4.0, "40 calls of 200 ms at concurrency 40 run together"


# ----------------------------------------------------------------------------- naming / specs


def test_names_dicts_specs_and_registry_strings() -> None:
    data = [
        {
            "outputs": {"answer": "x", "docs": ["a", "b"]},
            "reference_outputs": {"answer": "x", "docs": ["a"]},
        }
    ]
    spec = EvaluatorSpec(
        exact_match,
        name="answer_exact",
        fields={"outputs": "outputs.answer", "reference_outputs": "reference_outputs.answer"},
    )
    result = evaluate(
        data,
        [
            spec,
            "recall:k=1:outputs=outputs.docs:reference_outputs=reference_outputs.docs",
            exact_match,
            exact_match,
        ],
        progress=False,
    )
    assert result.evaluators == [
        "answer_exact",
        "recall:k=1:outputs=outputs.docs:reference_outputs=reference_outputs.docs",
        "exact_match",
        "exact_match_2",
    ]
    evaluations = result.rows[0]["evaluations"]
    assert evaluations["answer_exact"]["results"][0]["score"] is True
    assert evaluations["exact_match"]["results"][0]["score"] is False
    assert result.aggregates["recall@1"]["mean"] == 1.0


def test_missing_mapped_field_is_a_row_error() -> None:
    spec = EvaluatorSpec(exact_match, fields={"outputs": "outputs.nope"})
    result = evaluate([{"outputs": {"a": 1}, "reference_outputs": 1}], [spec], progress=False)
    error = result.rows[0]["evaluations"]["exact_match"]["error"]
    assert error["type"] == "KeyError" and "outputs.nope" in error["message"]


def test_bad_arguments_are_rejected_before_running() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        evaluate(DATA, [exact_match], concurrency=0, progress=False)
    with pytest.raises(ValueError, match="evaluators is empty"):
        evaluate(DATA, [], progress=False)
    with pytest.raises(TypeError, match="each evaluator"):
        evaluate(DATA, [42], progress=False)
    with pytest.raises(ValueError, match="unknown evaluator 'nope'"):
        evaluate(DATA, ["nope"], progress=False)
    with pytest.raises(TypeError, match=r"BatchMetrics\(accumulate=\) must be a function"):
        BatchMetrics([lambda batch: {}], accumulate=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"BatchMetrics\(batch_size=\) must be an integer >= 1"):
        BatchMetrics([lambda batch: {}], batch_size=0)
    with pytest.raises(TypeError, match="batch_metrics must be a list"):
        evaluate(DATA, [exact_match], batch_metrics="bleu", progress=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress"):
        evaluate(DATA, [exact_match], progress=3)
    with pytest.raises(TypeError, match="target"):
        evaluate(DATA, [exact_match], target="nope", progress=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="used twice"):
        evaluate(
            DATA,
            [EvaluatorSpec(exact_match, name="a"), EvaluatorSpec(levenshtein_distance, name="a")],
            progress=False,
        )


# ----------------------------------------------------------------------------- targets


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_target_produces_outputs_with_time_and_usage(kind: str) -> None:
    def sync_target(inputs: dict[str, str]) -> dict[str, Any]:
        return {
            "answer": inputs["q"].upper(),
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        }

    async def async_target(inputs: dict[str, str]) -> dict[str, Any]:
        await asyncio.sleep(0.001)
        return sync_target(inputs)

    def check(*, outputs: dict[str, Any], inputs: dict[str, str]) -> bool:
        return outputs["answer"] == inputs["q"].upper()

    target = sync_target if kind == "sync" else async_target
    result = evaluate(DATA[:5], [check], target=target, progress=False)
    assert result.aggregates["check"]["rate"] == 1.0
    row = result.rows[0]
    assert row["outputs"]["answer"] == "Q0"
    assert row["target"]["status"] == "success"
    assert row["target"]["elapsed_sec"] >= 0
    assert row["target"]["usage"] == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    assert result.summary["target"]["calls"] == 5
    assert result.summary["target"]["usage"]["total_tokens"] == 25


def test_target_failure_marks_the_rows_evaluators_as_errors() -> None:
    def target(inputs: dict[str, str]) -> str:
        if inputs["q"] == "q1":
            raise ConnectionError("model down")
        return "a0"

    result = evaluate(DATA[:3], [exact_match, levenshtein_distance], target=target, progress=False)
    bad = result.rows[1]
    assert bad["target"]["status"] == "error"
    assert bad["target"]["error"] == {"type": "ConnectionError", "message": "model down"}
    for entry in bad["evaluations"].values():
        assert entry["error"]["type"] == "TargetError"
        assert "ConnectionError: model down" in entry["error"]["message"]
    assert result.summary["target"]["errors"] == 1
    assert result.summary["errors"]["by_type"] == {"ConnectionError": 1, "TargetError": 2}
    assert result.rows[0]["status"] == "success"


# ----------------------------------------------------------------------------- resume


def test_rerun_with_the_same_output_resumes_without_repeating_work(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    calls = Calls()

    def counted(*, outputs: Any, **kw: Any) -> bool:
        calls.enter("counted", outputs)
        calls.leave()
        return outputs == "a0"

    first = evaluate(DATA[:6], [exact_match], output=out, progress=False)
    assert len(eval_records(out)) == 6
    second = evaluate(DATA, [exact_match, counted], output=out, progress=False)
    evals = eval_records(out)
    pairs = Counter((r["row_id"], r["evaluator"]) for r in evals)
    assert set(pairs.values()) == {1}, "no pair is written twice"
    assert len(pairs) == 12 + 12
    assert sum(calls.count.values()) == 12
    assert second.summary["pairs"]["resumed"] == 6
    assert second.summary["evaluators"]["exact_match"]["resumed"] == 6
    assert second.aggregates["exact_match"]["count"] == 12
    assert second.rows[0]["evaluations"]["exact_match"]["resumed"] is True
    assert second.rows[11]["evaluations"]["exact_match"]["resumed"] is False
    assert first.aggregates["exact_match"]["count"] == 6
    third = evaluate(DATA, [exact_match, counted], output=out, progress=False)
    assert sum(calls.count.values()) == 12, "a finished run resumes to nothing"
    assert third.aggregates == second.aggregates
    assert sum(1 for r in records(out) if r["kind"] == "row") == 12


def test_a_torn_last_line_is_cut_off_and_its_pair_rerun(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    evaluate(DATA[:4], [exact_match], output=out, progress=False)
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    torn = "".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    out.write_text(torn, encoding="utf-8")
    result = evaluate(DATA[:4], [exact_match], output=out, progress=False)
    evals = eval_records(out)
    assert Counter((r["row_id"], r["evaluator"]) for r in evals) == Counter(
        {(f"r{i}", "exact_match"): 1 for i in range(4)}
    )
    assert result.summary["pairs"]["resumed"] == 3
    for line in out.read_text(encoding="utf-8").splitlines():
        json.loads(line)


def test_resume_reuses_target_outputs(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    calls = Calls()

    def target(inputs: dict[str, str]) -> str:
        calls.enter("target", inputs["q"])
        calls.leave()
        return inputs["q"]

    evaluate(DATA[:4], [exact_match], target=target, output=out, progress=False)
    result = evaluate(
        DATA[:4], [exact_match, levenshtein_distance], target=target, output=out, progress=False
    )
    assert sum(calls.count.values()) == 4, "the target ran once per row across both runs"
    assert result.summary["target"]["reused"] == 4
    assert result.rows[2]["outputs"] == "q2"
    assert result.aggregates["levenshtein_distance"]["count"] == 4


def test_retry_errors_reruns_only_failed_pairs(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    state = {"broken": True}

    def sometimes(*, outputs: Any, **kw: Any) -> bool:
        if state["broken"] and outputs == "a1":
            raise RuntimeError("temporary")
        return True

    first = evaluate(DATA, [sometimes], output=out, progress=False)
    assert first.summary["pairs"]["failed"] == 4
    state["broken"] = False
    plain = evaluate(DATA, [sometimes], output=out, progress=False)
    assert plain.summary["pairs"]["failed"] == 4, "errors are final unless retry_errors=True"
    retried = evaluate(DATA, [sometimes], output=out, retry_errors=True, progress=False)
    assert retried.summary["pairs"] == {
        "done": 12,
        "succeeded": 12,
        "failed": 0,
        "resumed": 8,
        "reevaluated": 0,
    }
    assert len(eval_records(out)) == 16


async def test_cancelling_aevaluate_keeps_finished_work(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"

    async def slow(*, outputs: Any, **kw: Any) -> bool:
        await asyncio.sleep(0.01)
        return True

    data = [{"id": str(i), "outputs": i} for i in range(200)]
    task = asyncio.create_task(aevaluate(data, [slow], concurrency=4, output=out, progress=False))
    while not out.exists() or len(eval_records(out)) < 20:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    done = len(eval_records(out))
    assert 20 <= done < 200
    result = await aevaluate(data, [slow], concurrency=16, output=out, progress=False)
    assert result.summary["pairs"]["resumed"] == done
    assert Counter(r["row_id"] for r in eval_records(out)) == Counter(
        {str(i): 1 for i in range(200)}
    )


def test_ctrl_c_stops_cleanly_and_returns_the_finished_rows(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"

    async def slow(*, outputs: Any, **kw: Any) -> bool:
        await asyncio.sleep(0.01)
        return True

    data = [{"id": str(i), "outputs": i} for i in range(400)]
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(EvaluationInterrupted) as info:
            evaluate(data, [slow], concurrency=4, output=out, progress=False)
    finally:
        timer.cancel()
    partial = info.value.result
    assert isinstance(info.value, KeyboardInterrupt)
    assert partial.interrupted and partial.summary["interrupted"]
    assert 0 < len(partial.rows) < 400
    assert len(eval_records(out)) == len(partial.rows)
    rest = evaluate(data, [slow], concurrency=16, output=out, progress=False)
    assert rest.summary["pairs"]["resumed"] == len(partial.rows)
    assert len(eval_records(out)) == 400


# ----------------------------------------------------------------------------- dataset metrics


def test_batch_metrics_with_default_sum_and_custom_accumulate() -> None:
    batches: list[int] = []

    def counts(batch: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
        batches.append(len(batch["id"]))
        correct = sum(1 for s in batch["scores"] if s.get("exact_match"))
        return {"Correct": {"value": correct}, "Total": {"value": len(batch["outputs"])}}

    def accuracy(per_batch: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        correct = sum(m["value"] for m in per_batch["Correct"])
        total = sum(m["value"] for m in per_batch["Total"])
        return {
            "Total": {"value": total},
            "Accuracy": {"value": correct / total, "is_algebraic": True},
        }

    summed = evaluate(
        DATA, [exact_match], batch_metrics=BatchMetrics([counts], batch_size=5), progress=False
    )
    assert sorted(batches) == [2, 5, 5]
    assert summed.batch_metrics["Correct"] == {"value": 4, "batches": 3}
    assert summed.batch_metrics["Total"]["value"] == 12
    custom = evaluate(
        DATA,
        [exact_match],
        batch_metrics=BatchMetrics([counts], accumulate=accuracy, batch_size=4),
        progress=False,
    )
    assert custom.batch_metrics["Accuracy"] == {
        "value": pytest.approx(4 / 12),
        "is_algebraic": True,
    }
    assert custom.batch_metrics["Total"] == {"value": 12}


def test_batch_columns_include_extra_fields() -> None:
    seen: dict[str, list[Any]] = {}

    def grab(batch: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
        seen.update(batch)
        return {"n": {"value": len(batch["id"])}}

    evaluate(
        DATA[:3], [exact_match], batch_metrics=BatchMetrics([grab], batch_size=10), progress=False
    )
    assert set(seen) == {
        "id",
        "inputs",
        "outputs",
        "reference_outputs",
        "template_id",
        "context",
        "scores",
    }
    assert sorted(seen["id"]) == ["r0", "r1", "r2"]


def test_a_failing_batch_metric_is_reported_not_raised() -> None:
    def broken(batch: dict[str, list[Any]]) -> dict[str, Any]:
        raise ZeroDivisionError("no rows")

    def words(batch: dict[str, list[Any]]) -> dict[str, Any]:
        return {"label": {"value": "text"}}

    result = evaluate(DATA[:3], [exact_match], batch_metrics=[broken, words], progress=False)
    errors = result.summary["batch_metric_errors"]
    assert errors[0]["metric_fn"] == "broken" and errors[0]["type"] == "ZeroDivisionError"
    assert errors[-1]["metric_fn"] == "accumulate" and "accumulate=" in errors[-1]["message"]
    assert result.aggregates["exact_match"]["count"] == 3


# ----------------------------------------------------------------------------- progress


def test_progress_callback_sees_running_aggregates_with_intervals() -> None:
    snapshots: list[dict[str, Any]] = []

    def scored(*, outputs: Any, **kw: Any) -> dict[str, Any]:
        return {"key": "score", "score": 1.0 if outputs == "a0" else 0.0}

    def metric(batch: dict[str, list[Any]]) -> dict[str, Any]:
        return {"rows": {"value": len(batch["id"])}}

    evaluate(
        DATA,
        [scored],
        progress=snapshots.append,
        batch_metrics=BatchMetrics([metric], batch_size=3),
    )
    assert [s["rows_done"] for s in snapshots[:-1]] == list(range(1, 13))
    final = snapshots[-1]
    assert final["finished"] is True and final["rows_total"] == 12
    running = final["running"]["score"]
    assert running["count"] == 12 and running["mean"] == pytest.approx(4 / 12)
    low, high = running["ci95"]
    assert low < running["mean"] < high
    assert final["batch_metrics"] == {"rows": 12}
    mid = snapshots[5]["running"]["score"]
    assert mid["count"] == 6


def test_rich_progress_renders_to_a_console() -> None:
    from io import StringIO

    from rich.console import Console

    from openevals.report.progress import RichProgress

    buffer = StringIO()
    console = Console(file=buffer, width=120, force_terminal=False)
    evaluate(DATA, [exact_match], progress=RichProgress(console=console))
    text = buffer.getvalue()
    assert "12/12" in text
    assert "exact_match" in text and "95% CI" in text


def test_usage_and_cost_are_summed_per_evaluator() -> None:
    def judge(**kwargs: Any) -> dict[str, Any]:
        usage = {"input_tokens": 1000, "output_tokens": 500, "total_tokens": 1500}
        return {"key": "judged", "score": True, "comment": "ok", "metadata": {"usage": usage}}

    attach_info(judge, EvaluatorInfo(run_name="judge", model="gpt-4.1-mini", judge=True))
    result = evaluate(DATA[:4], [judge], progress=False)
    info = result.summary["evaluators"]["judge"]
    assert info["usage"] == {"input_tokens": 4000, "output_tokens": 2000, "total_tokens": 6000}
    assert info["model"] == "gpt-4.1-mini"
    assert info["cost_usd"] == pytest.approx((4000 * 0.40 + 2000 * 1.60) / 1e6)
    assert result.summary["cost_usd"] == pytest.approx(info["cost_usd"])
    custom = evaluate(
        DATA[:4], [judge], budget=Budget(prices={"gpt-4.1-mini": (1.0, 1.0)}), progress=False
    )
    assert custom.summary["cost_usd"] == pytest.approx(6000 / 1e6)
    with pytest.raises(TypeError, match=r"prices\['x'\]"):
        Budget(prices={"x": "cheap"})
    with pytest.raises(TypeError, match=r"budget must be a Budget"):
        evaluate(DATA, [judge], budget={"x": (1, 1)}, progress=False)  # type: ignore[arg-type]


def test_to_jsonl_and_repr() -> None:
    result = evaluate(DATA[:3], [exact_match], progress=False)
    text = result.to_jsonl()
    assert text is not None
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["id"] for line in lines] == ["r0", "r1", "r2"]
    assert "exact_match=" in repr(result) and "rows=3" in repr(result)
