"""The OpenTelemetry SDK side: in-process spans, and OTLP files written with the SDK's encoder.

* :func:`spans_from_sdk` turns the SDK's ``ReadableSpan`` objects (what
  ``InMemorySpanExporter.get_finished_spans()`` returns, or what an exporter receives) into
  :class:`~openevals.traces.model.Span` objects.
* :class:`OtlpFileExporter` is a ``SpanExporter`` that writes each export batch as one
  ``ExportTraceServiceRequest``, encoded by ``opentelemetry-exporter-otlp-proto-common``: as a
  line of OTLP/JSON (hex ids, the Collector file exporter's layout) or as a protobuf message
  preceded by its 4-byte big-endian length.

Needs ``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-common`` and
``opentelemetry-proto`` (``pip install 'openevals[traces]'``).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from openevals._repr import show
from openevals.traces.model import Event, Span, TraceError

__all__ = ["OtlpFileExporter", "request_from_bytes", "span_from_sdk", "spans_from_sdk"]

_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _plain_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    return {key: _plain(value) for key, value in attributes.items()}


def span_from_sdk(span: ReadableSpan, resource_cache: dict[int, dict[str, Any]]) -> Span:
    """One ``ReadableSpan`` as a :class:`Span` (``resource_cache`` shares resource dicts)."""
    context = span.context
    if context is None:
        raise TraceError(f"span {show(span.name)} has no span context")
    parent = span.parent
    resource = span.resource
    key = id(resource)
    attrs = resource_cache.get(key)
    if attrs is None:
        attrs = resource_cache[key] = _plain_attributes(resource.attributes if resource else None)
    status = span.status
    scope = span.instrumentation_scope
    return Span(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        name=span.name,
        start=span.start_time or 0,
        end=span.end_time or 0,
        attributes=_plain_attributes(span.attributes),
        events=tuple(
            Event(e.name, e.timestamp or 0, _plain_attributes(e.attributes)) for e in span.events
        ),
        status=_STATUS.get(status.status_code.value, "UNSET"),
        status_message=status.description or "",
        resource=attrs,
        scope=scope.name if scope is not None else "",
    )


def spans_from_sdk(spans: Iterable[ReadableSpan]) -> list[Span]:
    """``ReadableSpan`` objects (e.g. ``InMemorySpanExporter().get_finished_spans()``) as
    :class:`Span` objects."""
    cache: dict[int, dict[str, Any]] = {}
    return [span_from_sdk(span, cache) for span in spans]


# --------------------------------------------------------------------------- OTLP encoding


def _hex_ids(request: dict[str, Any]) -> dict[str, Any]:
    """The protobuf JSON mapping writes bytes as base64; OTLP/JSON writes ids as hex."""

    def fix(holder: dict[str, Any], key: str) -> None:
        raw = holder.get(key)
        if raw:
            holder[key] = base64.b64decode(raw).hex()

    for resource_spans in request.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                for key in ("traceId", "spanId", "parentSpanId"):
                    fix(span, key)
                for link in span.get("links", ()):
                    fix(link, "traceId")
                    fix(link, "spanId")
    return request


def encode_json(spans: Sequence[ReadableSpan]) -> str:
    """``spans`` as one OTLP/JSON ``ExportTraceServiceRequest`` (one line, no newline)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = MessageToDict(encode_spans(spans))
    return json.dumps(_hex_ids(request), separators=(",", ":"), ensure_ascii=False)


def encode_protobuf(spans: Sequence[ReadableSpan]) -> bytes:
    """``spans`` as one length-prefixed OTLP protobuf ``ExportTraceServiceRequest``."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    body: bytes = encode_spans(spans).SerializeToString()
    return struct.pack(">I", len(body)) + body


def request_from_bytes(body: bytes, where: str) -> dict[str, Any]:
    """One protobuf ``ExportTraceServiceRequest`` in its JSON form.

    Raises:
        TraceError: the bytes are not such a message (naming ``where``).
    """
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise ImportError(
            "reading OTLP protobuf files needs the opentelemetry-proto package; install it with "
            "`pip install 'openevals[traces]'`"
        ) from None
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise TraceError(f"{where}: not an OTLP ExportTraceServiceRequest ({exc})") from None
    request: dict[str, Any] = MessageToDict(message)
    return request


class OtlpFileExporter(SpanExporter):
    """A ``SpanExporter`` writing OTLP files that :func:`~openevals.traces.read_traces` reads.

    ``format="json"`` (default) appends one OTLP/JSON request per export batch, one per line;
    ``format="protobuf"`` appends length-prefixed protobuf messages. Each batch is written with
    one ``write`` on a file opened for appending, so concurrent exporters do not interleave.

    Raises:
        ValueError: an unknown ``format``.
    """

    def __init__(self, path: str | os.PathLike[str], *, format: str = "json") -> None:
        if format not in ("json", "protobuf"):
            raise ValueError(f"`format` must be 'json' or 'protobuf'; got {show(format)}")
        self.path = Path(path)
        self.format = format
        self._lock = threading.Lock()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        if self.format == "json":
            data = (encode_json(spans) + "\n").encode("utf-8")
        else:
            data = encode_protobuf(spans)
        with self._lock:
            if self._fd is None:
                return SpanExportResult.FAILURE
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
