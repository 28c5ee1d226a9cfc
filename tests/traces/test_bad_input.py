"""Bad input: files written by the SDK's encoder, then cut or edited the way real files break."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openevals.traces import Span, Trace, TraceError, read_traces
from tests.traces.conftest import Recorder, agent_run


def _lines(recorder: Recorder, tmp_path: Path, traces: int = 3) -> tuple[Path, list[str]]:
    for n in range(traces):
        agent_run(recorder, f"q{n}")
    path = recorder.write(tmp_path / "s.otlp.jsonl", batch=4)
    return path, path.read_text().splitlines()


def _spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    return request["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def test_truncated_json_lines_file(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path)
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    rows = []
    with pytest.raises(TraceError, match=r"s\.otlp\.jsonl line 3: the file ends in the middle"):
        for row in read_traces(path):
            rows.append(row)
    assert len(rows) == 1  # the traces complete before the cut were read


def test_truncated_protobuf_file(recorder: Recorder, tmp_path: Path) -> None:
    agent_run(recorder)
    path = recorder.write(tmp_path / "s.otlp.pb", format="protobuf", batch=2)
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    with pytest.raises(TraceError, match=r"message 1 .*the file ends 7 bytes into"):
        list(read_traces(path))
    path.write_bytes(data + b"\x00\x00")
    with pytest.raises(TraceError, match="truncated length prefix"):
        list(read_traces(path))
    path.write_bytes(b"\x00\x00\x00\x05hello")
    with pytest.raises(TraceError, match="not an OTLP ExportTraceServiceRequest"):
        list(read_traces(path))


def test_a_line_that_is_not_json(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path)
    lines[1] = "{oops"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=r"line 2 is not valid JSON"):
        list(read_traces(path))


def test_malformed_span_raises_or_is_skipped(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path)
    request = json.loads(lines[0])
    _spans(request)[1]["spanId"] = "not-an-id"
    lines[0] = json.dumps(request)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=r"line 1: span 1 of scope 'tests' cannot be read.*spanId"):
        list(read_traces(path))
    reader = read_traces(path, on_error="skip")
    assert len(list(reader)) == 3
    assert reader.stats["skipped_spans"] == 1


def test_missing_attributes_are_not_errors(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path, traces=1)
    request = json.loads(lines[0])
    for span in _spans(request):
        span.pop("attributes", None)
        span.pop("status", None)
    path.write_text(json.dumps(request) + "\n")
    (row,) = list(read_traces(path))
    assert row["outputs"]["messages"] == [] and row["metadata"]["usage"] is None


def test_duplicate_span_ids(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path, traces=1)
    path.write_text(lines[0] + "\n" + lines[0] + "\n")  # an exporter retry: exact repeats
    reader = read_traces(path, settle=2)
    (row,) = list(reader)
    assert row["metadata"]["duplicates"] == 4 and reader.stats["duplicates"] == 4
    request = json.loads(lines[0])
    spans = _spans(request)
    spans[1]["spanId"] = spans[0]["spanId"]
    path.write_text(json.dumps(request) + "\n")
    trace_id = spans[0]["traceId"]
    with pytest.raises(
        TraceError,
        match=f"trace {trace_id} has two different spans with the span id {spans[0]['spanId']}",
    ):
        list(read_traces(path))
    skipping = read_traces(path, on_error="skip")
    assert list(skipping) == [] and skipping.stats["skipped_traces"] == 1


def test_orphan_spans_become_top_level(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path, traces=1)
    request = json.loads(lines[0])
    spans = _spans(request)
    root = next(s for s in spans if not s.get("parentSpanId"))
    spans.remove(root)  # the root span was lost
    path.write_text(json.dumps(request) + "\n")
    reader = read_traces(path)
    (row,) = list(reader)
    assert row["metadata"]["orphans"] == 3 and reader.stats["orphans"] == 3
    assert row["metadata"]["name"] == "chat gpt-4o-mini"


def test_parent_cycle_names_the_spans() -> None:
    def span(span_id: str, parent: str | None) -> Span:
        return Span("a" * 32, span_id, parent, f"s{span_id[-1]}", 1, 2, {})

    ids = [f"{n:016x}" for n in range(1, 5)]
    spans = [span(ids[0], None), span(ids[1], ids[2]), span(ids[2], ids[3]), span(ids[3], ids[1])]
    with pytest.raises(
        TraceError,
        match=f"parent cycle through the spans {ids[1]} -> {ids[2]} -> {ids[3]} -> {ids[1]}",
    ):
        Trace.build("a" * 32, spans, source="test")
    reader = read_traces(spans, on_error="skip")
    assert list(reader) == [] and reader.stats["skipped_traces"] == 1


def test_huge_trace_over_max_spans(recorder: Recorder, tmp_path: Path) -> None:
    path, _ = _lines(recorder, tmp_path)
    with pytest.raises(TraceError, match=r"has more than 3 spans \(`max_spans`\)"):
        list(read_traces(path, max_spans=3))
    reader = read_traces(path, max_spans=3, on_error="skip")
    assert list(reader) == []
    assert reader.stats["skipped_traces"] == 3 and reader.stats["skipped_spans"] == 12


def test_late_spans_are_counted(recorder: Recorder, tmp_path: Path) -> None:
    path, lines = _lines(recorder, tmp_path)
    path.write_text("\n".join([*lines, lines[0]]) + "\n")  # trace 1 again, long after it ended
    reader = read_traces(path)
    assert len(list(reader)) == 3
    assert reader.stats["late_spans"] == 4
