"""OnlineEvaluator: a real TracerProvider, spans ending on the app's thread, scores written to a
run file and back into the traces."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation.online import OnlineEvaluator
from tests.traces.conftest import Recorder, agent_run


def tool_calls(*, outputs: dict[str, Any]) -> dict[str, Any]:
    calls = sum(len(m.get("tool_calls") or ()) for m in outputs["messages"])
    return {"key": "tool_calls", "score": calls, "comment": f"{calls} call(s)"}


def answered(*, outputs: dict[str, Any]) -> bool:
    return bool(outputs["output"])


def broken(*, outputs: dict[str, Any]) -> bool:
    raise RuntimeError("evaluator bug")


def _wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _attach(rec: Recorder, evaluators: Any, **options: Any) -> OnlineEvaluator:
    online = OnlineEvaluator(evaluators, tracer_provider=rec.provider, settle=0.0, **options)
    rec.provider.add_span_processor(online)
    return online


def test_scores_go_to_the_run_file_and_back_into_the_trace(
    recorder: Recorder, tmp_path: Path
) -> None:
    output = tmp_path / "online.jsonl"
    online = _attach(recorder, [tool_calls, answered, broken], output=output)
    for n in range(3):
        agent_run(recorder, f"q{n}")
    assert online.force_flush(10_000)
    assert online.stats["scored"] == 3 and online.stats["evaluator_errors"] == 3
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["kind"] for line in lines].count("run") == 1
    evals = [line for line in lines if line["kind"] == "eval"]
    assert {line["evaluator"] for line in evals} == {"tool_calls", "answered", "broken"}
    failed = [line for line in evals if line["evaluator"] == "broken"]
    assert all(line["status"] == "error" and not line["results"] for line in failed)

    spans = recorder.spans()
    roots = {f"{s.context.span_id:016x}": s for s in spans if s.parent is None}
    written = [s for s in spans if s.name == "openevals.evaluation"]
    assert len(written) == 3
    for span in written:
        assert span.parent is not None and f"{span.parent.span_id:016x}" in roots
        root = roots[f"{span.parent.span_id:016x}"]
        assert span.context.trace_id == root.context.trace_id
        assert span.links[0].context.span_id == root.context.span_id
        events = {e.attributes["gen_ai.evaluation.name"]: dict(e.attributes) for e in span.events}
        assert events["tool_calls"]["gen_ai.evaluation.score.value"] == 1.0
        assert events["tool_calls"]["gen_ai.evaluation.explanation"] == "1 call(s)"
        assert events["answered"]["gen_ai.evaluation.score.label"] == "pass"
        assert events["broken"]["error.type"] == "RuntimeError"
    # the evaluation spans reach the processor too, and are not scored again
    online.force_flush(5_000)
    assert online.stats["scored"] == 3


def test_the_run_file_feeds_compare(recorder: Recorder, tmp_path: Path) -> None:
    """Two evaluator versions scoring the same production traffic, compared."""
    from openevals.evaluation import compare

    def strict(*, outputs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "quality", "score": len(outputs["messages"]) >= 5}

    def lenient(*, outputs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "quality", "score": len(outputs["messages"]) >= 2}

    files = [tmp_path / "strict.jsonl", tmp_path / "lenient.jsonl"]
    processors = [
        _attach(recorder, [judge], output=path, write_back=False)
        for judge, path in zip((strict, lenient), files, strict=True)
    ]
    for n in range(12):
        agent_run(recorder, f"q{n}")
    assert all(p.force_flush(10_000) for p in processors)
    comparison = compare(files[0], files[1])
    summary = comparison.to_dict()
    assert summary["rows"]["paired"] == 12
    assert [key["key"] for key in summary["keys"]] == ["quality"]


def test_sampling_and_filter(recorder: Recorder) -> None:
    none = _attach(recorder, [tool_calls], sample_rate=0.0, write_back=False)
    only_paris = _attach(
        recorder,
        [tool_calls],
        write_back=False,
        filter=lambda row: "Paris" in row["inputs"]["messages"][0]["content"],
    )
    agent_run(recorder, "weather in Paris?")
    agent_run(recorder, "weather in Oslo?")
    assert none.force_flush(5_000) and only_paris.force_flush(5_000)
    assert none.stats["received"] == 0 and none.stats["scored"] == 0
    assert only_paris.stats["scored"] == 1 and only_paris.stats["filtered"] == 1
    assert only_paris.results[0]["inputs"]["messages"][0]["content"] == "weather in Paris?"


def test_half_sampling_keeps_whole_traces(recorder: Recorder) -> None:
    online = _attach(recorder, [tool_calls], sample_rate=0.5, write_back=False)
    for n in range(40):
        agent_run(recorder, f"q{n}")
    assert online.force_flush(10_000)
    scored = online.stats["scored"]
    assert 5 < scored < 35
    assert online.stats["received"] == 4 * scored  # all four spans of each sampled trace


def test_full_buffers_drop_and_count_without_blocking(recorder: Recorder) -> None:
    release = threading.Event()

    def slow(*, outputs: dict[str, Any]) -> bool:
        release.wait(5)
        return True

    online = _attach(recorder, [slow], max_queue=1, batch_size=1, write_back=False)
    started = time.perf_counter()
    for n in range(6):
        agent_run(recorder, f"q{n}")
        time.sleep(0.02)  # let the collector hand the trace over
    assert time.perf_counter() - started < 2  # the app never waited for the slow evaluator
    release.set()
    assert online.force_flush(10_000)
    assert online.stats["dropped_traces"] >= 1
    assert online.stats["scored"] + online.stats["dropped_traces"] == 6

    tiny = _attach(recorder, [tool_calls], max_spans=0, write_back=False)
    agent_run(recorder)
    assert tiny.stats["dropped_spans"] == 4 and tiny.force_flush(1_000)


def test_collected_spans_are_bounded_too(recorder: Recorder) -> None:
    online = _attach(recorder, [tool_calls], max_spans=6, write_back=False)
    online.settle = 60.0  # trace 1 stays open (complete, not settled) while trace 2 arrives
    agent_run(recorder, "first")
    _wait_until(lambda: online.stats["received"] == 4)  # the collector holds trace 1
    agent_run(recorder, "second")
    _wait_until(lambda: online.stats["received"] == 8)
    assert online.force_flush(5_000)
    assert online.stats["dropped_traces"] == 1 and online.stats["scored"] == 1
    assert online.results[0]["outputs"]["messages"][0]["content"] == "second"


def test_budget_stops_scoring(recorder: Recorder) -> None:
    def judge(*, outputs: dict[str, Any]) -> dict[str, Any]:
        usage = {"input_tokens": 60, "output_tokens": 40, "total_tokens": 100}
        return {"key": "judged", "score": True, "metadata": {"usage": usage}}

    online = _attach(recorder, [judge], max_tokens=150, batch_size=1, write_back=False)
    for n in range(4):
        agent_run(recorder, f"q{n}")
        assert online.force_flush(5_000)
    assert online.stats["scored"] == 2 and online.stats["over_budget"] == 2
    assert online.tokens == 200


def test_shutdown_returns_within_its_timeout(recorder: Recorder) -> None:
    def stuck(*, outputs: dict[str, Any]) -> bool:
        time.sleep(3)
        return True

    online = _attach(recorder, [stuck], shutdown_timeout=0.3, write_back=False)
    agent_run(recorder)
    started = time.perf_counter()
    online.shutdown()
    assert time.perf_counter() - started < 1.5


def test_expired_traces_and_bad_options(recorder: Recorder) -> None:
    online = _attach(recorder, [tool_calls], trace_timeout=0.0, write_back=False)
    with recorder.tracer.start_as_current_span("root"):
        with recorder.tracer.start_as_current_span("child"):
            pass
        _wait_until(lambda: online.stats["expired_traces"] == 1)  # the root has not ended
    assert online.force_flush(5_000)
    assert online.stats["expired_traces"] == 1
    for bad in ({"sample_rate": 2}, {"max_queue": 0}, {"per": "span"}, {"concurrency": 0}):
        with pytest.raises(ValueError):
            OnlineEvaluator([tool_calls], **bad)
    with pytest.raises(TypeError, match="`filter` must be a callable"):
        OnlineEvaluator([tool_calls], filter="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="evaluators is empty"):
        OnlineEvaluator([])
