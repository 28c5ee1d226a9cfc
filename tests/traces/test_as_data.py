"""Traces as evaluate() data: files by suffix, read_traces() options, the CLI, compare."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate
from openevals.traces import read_traces
from openevals.trajectory import create_trajectory_match_evaluator
from tests.traces.conftest import EXPECTED_MESSAGES, Recorder, agent_run


def _tool_calls(*, outputs: dict[str, Any]) -> dict[str, Any]:
    calls = sum(len(m.get("tool_calls") or ()) for m in outputs["messages"])
    return {"key": "tool_calls", "score": calls}


def test_evaluate_reads_an_otlp_file_by_its_name(recorder: Recorder, tmp_path: Path) -> None:
    for n in range(3):
        agent_run(recorder, f"q{n}")
    path = recorder.write(tmp_path / "spans.otlp.jsonl", batch=4)
    strict = create_trajectory_match_evaluator(trajectory_match_mode="strict")
    reference = {"messages": EXPECTED_MESSAGES}
    result = evaluate(
        read_traces(path, reference=lambda row: reference), [strict, _tool_calls], progress=False
    )
    assert result.aggregates["trajectory_strict_match"]["mean"] == 1.0
    assert result.aggregates["tool_calls"]["mean"] == 1.0
    ids = {f"{s.context.trace_id:032x}" for s in recorder.spans()}
    assert {row["id"] for row in result.rows} == ids
    plain = evaluate(str(path), [_tool_calls], progress=False)  # no options: by suffix
    assert [r["id"] for r in plain.rows] == [r["id"] for r in result.rows]
    assert plain.rows[0]["extra"]["metadata"]["service"] == "shop"


def test_one_row_per_agent_span(recorder: Recorder) -> None:
    tracer = recorder.tracer
    with tracer.start_as_current_span("workflow"):
        for name in ("planner", "writer"):
            with (
                tracer.start_as_current_span(
                    f"invoke_agent {name}", attributes={"gen_ai.operation.name": "invoke_agent"}
                ),
                tracer.start_as_current_span(
                    "execute_tool lookup",
                    attributes={"gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": name},
                ),
            ):
                pass
    rows = list(read_traces(recorder.memory, per="agent"))
    spans = {s.name: s for s in recorder.spans()}
    trace_id = f"{spans['workflow'].context.trace_id:032x}"
    assert [r["id"] for r in rows] == [
        f"{trace_id}:{spans[f'invoke_agent {n}'].context.span_id:016x}"
        for n in ("planner", "writer")
    ]
    assert [r["outputs"]["messages"][0]["tool_calls"][0]["id"] for r in rows] == [
        "planner",
        "writer",
    ]
    assert (
        len(list(read_traces(recorder.memory, per="agent", span_name="invoke_agent writer"))) == 1
    )


def test_filters_by_service_name_and_time(recorder: Recorder) -> None:
    agent_run(recorder)
    other = Recorder(service="billing")
    agent_run(other)
    spans = recorder.spans() + other.spans()
    assert len(list(read_traces(spans))) == 2
    assert [r["metadata"]["service"] for r in read_traces(spans, service="billing")] == ["billing"]
    assert len(list(read_traces(spans, service={"shop", "billing"}))) == 2
    assert list(read_traces(spans, span_name="nope")) == []
    start = min(s.start_time for s in spans)
    assert len(list(read_traces(spans, since=start, until=start + 1))) == 1
    later = datetime.fromtimestamp(start / 1e9 + 3600, tz=timezone.utc)
    assert list(read_traces(spans, since=later)) == []
    assert len(list(read_traces(spans, until=later.isoformat()))) == 2
    other.provider.shutdown()


def test_reference_by_row_id(recorder: Recorder) -> None:
    agent_run(recorder)
    (row,) = list(read_traces(recorder.memory))
    (again,) = list(read_traces(recorder.memory, reference={row["id"]: {"answer": "sunny"}}))
    assert again["reference_outputs"] == {"answer": "sunny"}
    with pytest.raises(TypeError, match="`reference` must be"):
        read_traces(recorder.memory, reference=3)  # type: ignore[arg-type]


def test_cli_run_and_compare_on_traces(
    recorder: Recorder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openevals.cli import main

    for n in range(4):
        agent_run(recorder, f"q{n}")
    path = recorder.write(tmp_path / "prod.jsonl", batch=4)  # no .otlp suffix: --traces says it
    runs = []
    same = "exact_match:outputs=outputs.output:reference_outputs=outputs.output"
    for name in ("a", "b"):
        out = tmp_path / f"run_{name}.jsonl"
        code = main(
            [
                "run",
                str(path),
                "--traces",
                "trace",
                "-e",
                same,
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        assert code == 0
        runs.append(out)
    kinds = [json.loads(line)["kind"] for line in runs[0].read_text().splitlines()]
    assert kinds.count("row") == 4
    assert main(["compare", str(runs[0]), str(runs[1])]) == 0
    assert "exact_match" in capsys.readouterr().out
    code = main(["run", str(tmp_path / "missing.jsonl"), "--traces", "agent", "-e", "exact_match"])
    assert code != 0


def test_calibrate_a_judge_on_traces_labelled_by_trace_id(recorder: Recorder) -> None:
    from openevals.calibration import calibrate

    for n in range(4):
        agent_run(recorder, f"q{n}")
    ids = [row["id"] for row in read_traces(recorder.memory)]
    labels = {trace_id: {"label": n % 2 == 0} for n, trace_id in enumerate(ids)}

    def judge(*, outputs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "helpful", "score": True}

    report = calibrate(
        read_traces(recorder.memory, reference=labels),
        judge,
        label="reference_outputs.label",
        judge_scores="boolean",
        progress=False,
    )
    assert report.n == 4
    assert report.agreement.accuracy.value == 0.5  # type: ignore[union-attr]


def test_judges_take_trace_rows_unchanged(recorder: Recorder) -> None:
    import openai

    from openevals.llm import create_llm_as_judge
    from openevals.testing import FakeOpenAIServer
    from openevals.trajectory.llm import create_trajectory_llm_as_judge

    agent_run(recorder)
    with FakeOpenAIServer() as server:
        server.set_default_chat(json={"reasoning": "fine", "score": True})
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        helpful = create_llm_as_judge(
            prompt="Was this helpful? {inputs} {outputs}", judge=client, model="gpt-4o-mini"
        )
        trajectory = create_trajectory_llm_as_judge(judge=client, model="gpt-4o-mini")
        result = evaluate(read_traces(recorder.memory), [helpful, trajectory], progress=False)
        prompts = [body["messages"][-1]["content"] for body in server.chat_requests]
    assert result.summary["pairs"]["failed"] == 0
    assert result.aggregates["trajectory_accuracy"]["mean"] == 1.0
    assert all("get_weather" in prompt and "sunny" in prompt for prompt in prompts)
