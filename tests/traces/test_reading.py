"""Reading spans: SDK spans, OTLP/JSON lines, one JSON document, length-prefixed protobuf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openevals.traces import TraceError, read_traces
from tests.traces.conftest import EXPECTED_MESSAGES, Recorder, agent_run


@pytest.mark.parametrize("semconv", ["parts", "legacy", "events", "openinference"])
def test_each_convention_gives_the_same_conversation(recorder: Recorder, semconv: str) -> None:
    agent_run(recorder, semconv=semconv)
    (row,) = list(read_traces(recorder.memory))
    assert row["outputs"]["messages"] == EXPECTED_MESSAGES
    assert row["outputs"]["output"] == "It is sunny."


def test_row_facts(recorder: Recorder) -> None:
    agent_run(recorder)
    (row,) = list(read_traces(recorder.memory))
    spans = recorder.spans()
    root = next(s for s in spans if s.parent is None)
    assert row["id"] == f"{root.context.trace_id:032x}"
    meta = row["metadata"]
    assert meta["name"] == "invoke_agent weather"
    assert meta["service"] == "shop"
    assert meta["models"] == ["gpt-4o-mini"]
    assert meta["usage"] == {"input_tokens": 30, "output_tokens": 8, "total_tokens": 38}
    assert meta["span_count"] == 4
    assert meta["latency_ms"] == pytest.approx((root.end_time - root.start_time) / 1e6)
    assert row["outputs"]["steps"] == [
        ["chat gpt-4o-mini", "execute_tool get_weather", "chat gpt-4o-mini"]
    ]
    assert row["inputs"] == {"messages": [{"role": "user", "content": "weather in Paris?"}]}


@pytest.mark.parametrize("fmt", ["json", "protobuf"])
def test_files_written_by_the_sdk_encoder_read_like_memory(
    recorder: Recorder, tmp_path: Path, fmt: str
) -> None:
    for n in range(3):
        agent_run(recorder, f"question {n}")
    path = recorder.write(tmp_path / f"spans.{fmt}", format=fmt, batch=3)
    assert list(read_traces(path)) == list(read_traces(recorder.memory))


def test_single_json_document_and_base64_ids(recorder: Recorder, tmp_path: Path) -> None:
    """The protobuf JSON mapping (base64 ids), pretty-printed as one document."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    agent_run(recorder)
    request = MessageToDict(encode_spans(recorder.spans()))
    assert len(request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]) == 24
    path = tmp_path / "one.json"
    path.write_text(json.dumps(request, indent=2))
    assert list(read_traces(path)) == list(read_traces(recorder.memory))


def test_error_status_and_exceptions_are_reported(recorder: Recorder) -> None:
    tracer = recorder.tracer
    with (
        tracer.start_as_current_span("agent"),
        pytest.raises(RuntimeError),
        tracer.start_as_current_span("execute_tool search"),
    ):
        raise RuntimeError("tool broke")
    (row,) = list(read_traces(recorder.memory))
    (error,) = row["metadata"]["errors"]
    assert error["type"] == "RuntimeError"
    assert error["message"] == "tool broke"
    assert error["name"] == "execute_tool search"


def test_spans_with_no_conventions_still_give_a_row(recorder: Recorder) -> None:
    tracer = recorder.tracer
    with tracer.start_as_current_span("handler"), tracer.start_as_current_span("db.query"):
        pass
    (row,) = list(read_traces(recorder.spans()))
    assert row["outputs"]["messages"] == []
    assert row["outputs"]["steps"] == [["db.query"]]
    assert row["inputs"] is None and row["metadata"]["usage"] is None


def test_streaming_emits_a_trace_before_the_file_ends(recorder: Recorder, tmp_path: Path) -> None:
    from openevals.traces import otlp

    for n in range(5):
        agent_run(recorder, f"q{n}")
    path = recorder.write(tmp_path / "s.otlp.jsonl", batch=4)  # a trace is 4 spans
    read: list[str] = []

    def counting(path: Path, *, strict: bool = True):  # type: ignore[no-untyped-def]
        for batch in original(path, strict=strict):
            read.append(batch.where)
            yield batch

    original = otlp.read_batches
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("openevals.traces.source.read_batches", counting)
        traces = read_traces(path, settle=1).traces()
        first = next(traces)
        assert len(first) == 4
        assert read == ["line 1", "line 2"]  # the root's batch and one to settle
        assert len([first, *traces]) == 5


def test_memory_holds_only_open_traces(recorder: Recorder, tmp_path: Path) -> None:
    """While a long file is read, only the traces not yet complete are held."""
    for n in range(30):
        agent_run(recorder, f"q{n}")
    path = recorder.write(tmp_path / "s.otlp.jsonl", batch=4)
    reader = read_traces(path)
    assert len(list(reader.traces())) == 30
    assert reader.stats["peak_open_traces"] == 2
    everything = read_traces(path, settle=100)
    assert len(list(everything.traces())) == 30
    assert everything.stats["peak_open_traces"] == 30


def test_missing_file_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such traces file"):
        read_traces(tmp_path / "nope.otlp.json")
    with pytest.raises(ValueError, match="`per` must be"):
        read_traces([], per="span")
    with pytest.raises(TypeError, match="`service` must be"):
        read_traces([], service=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`since` must be an ISO 8601"):
        read_traces([], since="yesterday")
    with pytest.raises(TypeError, match="expected an OTLP file path"):
        read_traces(42)


def test_empty_file_has_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "empty.otlp.jsonl"
    path.write_bytes(b"")
    assert list(read_traces(path)) == []
    assert isinstance(TraceError("x"), ValueError)


def test_tool_spans_complete_the_conversation(recorder: Recorder) -> None:
    """Without message capture, tool spans alone give the calls; a tool span without a call id
    whose result a model call already saw adds nothing."""
    tracer = recorder.tracer
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
    first = {
        **tool,
        "gen_ai.tool.call.arguments": '{"q": "otel"}',
        "gen_ai.tool.call.result": "found",
    }
    with (
        tracer.start_as_current_span("agent"),
        tracer.start_as_current_span("execute_tool search", attributes=first),
    ):
        pass
    (row,) = list(read_traces(recorder.memory))
    assert row["outputs"]["messages"] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q": "otel"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "search", "content": "found"},
    ]
    recorder.memory.clear()
    parts = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search"}]}]
        ),
    }
    with tracer.start_as_current_span("agent"):
        with tracer.start_as_current_span("chat", attributes=parts):
            pass
        done = {**tool, "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "found"}
        with tracer.start_as_current_span("execute_tool search", attributes=done):
            pass
        again = {**tool, "gen_ai.tool.call.result": "found"}  # the same call, logged without id
        with tracer.start_as_current_span("execute_tool search", attributes=again):
            pass
    (row,) = list(read_traces(recorder.memory))
    assert [m["role"] for m in row["outputs"]["messages"]] == ["user", "assistant", "tool"]
