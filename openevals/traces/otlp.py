"""OTLP as it is written to files: JSON (the Collector's file exporter) and protobuf.

**JSON.** A file holds ``ExportTraceServiceRequest`` objects in the OTLP/JSON encoding
(``resourceSpans`` → ``scopeSpans`` → ``spans``; ids as hex text, 64-bit integers as text), either
one per line (JSON Lines, what the Collector's ``file`` exporter writes; read line by line) or a
single JSON document (one request, or a list of them; read as a whole, since a JSON document
cannot be streamed with the standard library). Ids written in base64 (the protobuf JSON mapping's
default for bytes) and the older ``instrumentationLibrarySpans`` key are accepted too.

**Protobuf.** A file holds ``ExportTraceServiceRequest`` messages, each preceded by its length
as a 4-byte big-endian unsigned integer (the framing of the Collector's ``file`` exporter with
``format: proto``). :class:`~openevals.traces.sdk.OtlpFileExporter` writes both forms with the
SDK's own OTLP encoder. Reading protobuf needs ``opentelemetry-proto`` (``openevals[traces]``).

Each request ("batch") is turned into :class:`~openevals.traces.model.Span` objects by
:func:`spans_of_request`; a span without a trace or span id, or with a malformed one, raises a
``TraceError`` naming the file, the batch and the span (or is skipped and counted).
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from openevals._repr import show
from openevals.traces.model import Event, Span, TraceError

__all__ = ["Batch", "read_batches", "spans_of_request"]

_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_STATUS_NAMES = {"STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}
_MAX_FRAME = 1 << 30


class Batch:
    """One request read from a file: where it was (``where``: "line 3", "message 2") and its
    spans, with the count of spans skipped as malformed."""

    __slots__ = ("skipped", "spans", "where")

    def __init__(self, where: str, spans: list[Span], skipped: int) -> None:
        self.where = where
        self.spans = spans
        self.skipped = skipped


# --------------------------------------------------------------------------- values


def _any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON form) as a plain Python value."""
    if type(value) is not dict and not isinstance(value, Mapping):
        return value
    text = value.get("stringValue")
    if text is not None:
        return text
    for key, convert in _SCALARS:
        raw = value.get(key)
        if raw is not None:
            return convert(raw)
    array = value.get("arrayValue")
    if array is not None:
        return [_any_value(v) for v in array.get("values") or ()]
    kvlist = value.get("kvlistValue")
    if kvlist is not None:
        return _attributes(kvlist.get("values"))
    raw_bytes = value.get("bytesValue")
    if raw_bytes is not None:
        return raw_bytes  # kept as the base64 text it is written as
    return _snake_value(value)


def _snake_value(value: Mapping[str, Any]) -> Any:
    """The snake_case field names of the protobuf JSON mapping (``string_value``...)."""
    for kind in ("string", "int", "double", "bool", "array", "kvlist", "bytes"):
        if f"{kind}_value" in value:
            return _any_value({f"{kind}Value": value[f"{kind}_value"]})
    return None


_SCALARS = (("intValue", int), ("doubleValue", float), ("boolValue", bool))


def _attributes(items: Any) -> dict[str, Any]:
    if not items:
        return {}
    out: dict[str, Any] = {}
    try:  # the common case: every item has a key and an AnyValue object, most of them text
        for item in items:
            value = item["value"]
            text = value.get("stringValue")
            if text is None:
                number = value.get("intValue")
                text = int(number) if number is not None else _any_value(value)
            out[item["key"]] = text
        return out
    except (KeyError, AttributeError, TypeError):
        pass
    out = {}  # again, item by item, for the other shapes (a missing value reads as None)
    for item in items:
        value = item.get("value")
        out[item["key"]] = None if value is None else _any_value(value)
    return out


_FROM_HEX = bytes.fromhex


def _hex(raw: Any, size: int) -> str | None:
    """A trace (``size`` 16) or span (8) id as lowercase hex, from hex or base64 text."""
    try:  # the common case: hex text, as OTLP/JSON writes ids
        if len(raw) == 2 * size and len(_FROM_HEX(raw)) == size:
            return raw.lower()  # type: ignore[no-any-return]
    except (TypeError, ValueError):
        pass
    return _hex_id(raw, size)


def _hex_id(raw: Any, size: int) -> str | None:
    """A trace (``size`` 16) or span (8) id as lowercase hex, from hex or base64 text."""
    if not isinstance(raw, str) or not raw:
        return None
    if len(raw) == 2 * size:
        try:
            int(raw, 16)
        except ValueError:
            return None
        return raw.lower()
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == size else None


def _status(raw: Any) -> tuple[str, str]:
    if not raw:
        return "UNSET", ""
    code = raw.get("code", 0)
    name = _STATUS.get(code) if isinstance(code, int) else _STATUS_NAMES.get(code, "UNSET")
    return name or "UNSET", raw.get("message") or ""


def _events(raw: Any) -> tuple[Event, ...]:
    if not raw:
        return ()
    return tuple(
        Event(e.get("name", ""), int(e.get("timeUnixNano") or 0), _attributes(e.get("attributes")))
        for e in raw
    )


def spans_of_request(
    request: Any, *, source: str, where: str, strict: bool = True
) -> tuple[list[Span], int]:
    """The spans of one ``ExportTraceServiceRequest`` (JSON form), and how many were skipped.

    Raises:
        TraceError: the request is not an object, or (``strict``) a span lacks a valid trace or
            span id or has malformed fields; the message names ``source``, ``where`` and the span.
    """
    if not isinstance(request, Mapping):
        raise TraceError(
            f"{source} {where}: expected an OTLP ExportTraceServiceRequest object "
            f"(with 'resourceSpans'); got {type(request).__name__}"
        )
    spans: list[Span] = []
    skipped = 0
    for resource_spans in request.get("resourceSpans") or request.get("resource_spans") or ():
        resource = _attributes((resource_spans.get("resource") or {}).get("attributes"))
        scopes = (
            resource_spans.get("scopeSpans")
            or resource_spans.get("scope_spans")
            or resource_spans.get("instrumentationLibrarySpans")
            or ()
        )
        for scope_spans in scopes:
            scope = scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}
            scope_name = scope.get("name") or ""
            raw_spans = scope_spans.get("spans") or ()
            try:  # the common case: every span reads
                spans.extend(_spans(raw_spans, resource, scope_name))
                continue
            except _BAD_SPAN:
                pass
            for index, raw in enumerate(raw_spans):  # again, one by one, to name the bad one
                try:
                    spans.extend(_spans((raw,), resource, scope_name))
                except _BAD_SPAN as exc:
                    if strict:
                        raise TraceError(
                            f"{source} {where}: span {index} of scope {show(scope_name)} cannot be "
                            f"read: {exc}"
                        ) from None
                    skipped += 1
    return spans, skipped


_BAD_SPAN = (TraceError, TypeError, ValueError, KeyError, AttributeError)


def _spans(raw_spans: Any, resource: Mapping[str, Any], scope: str) -> list[Span]:
    """The spans of one scope. The spans of a request share trace ids and parents, so each id
    text is checked once (``traces``, ``parents``: id as written -> checked id)."""
    traces: dict[str, str] = {}
    parents: dict[str, str] = {}
    out: list[Span] = []
    for raw in raw_spans:
        get = raw.get
        written = get("traceId")
        trace_id = traces.get(written) if type(written) is str else None
        if trace_id is None:
            trace_id = _hex(written, 16)
            if trace_id is not None:
                traces[written] = trace_id
        written_span = get("spanId")
        try:  # _hex(written_span, 8), inline: every span has its own id
            if len(written_span) == 16 and len(_FROM_HEX(written_span)) == 8:
                span_id = written_span.lower()
            else:
                span_id = _hex_id(written_span, 8)
        except (TypeError, ValueError):
            span_id = _hex_id(written_span, 8)
        if trace_id is None or span_id is None:
            raise TraceError(
                f"missing or malformed traceId {show(written)} / spanId {show(written_span)}"
                " (expected 32 and 16 hex digits)"
            )
        parent = get("parentSpanId") or None
        if parent is not None:
            checked = parents.get(parent) if type(parent) is str else None
            if checked is None:
                checked = _hex(parent, 8)
                if checked is None:
                    raise TraceError(f"span {span_id}: malformed parentSpanId {show(parent)}")
                parents[parent] = checked
            parent = checked
        status = get("status")
        state, message = _status(status) if status else ("UNSET", "")
        events = get("events")
        out.append(
            Span(
                trace_id,
                span_id,
                parent,
                get("name") or "",
                int(get("startTimeUnixNano") or 0),
                int(get("endTimeUnixNano") or 0),
                _attributes(get("attributes")),
                _events(events) if events else (),
                state,
                message,
                resource,
                scope,
            )
        )
    return out


# --------------------------------------------------------------------------- files


def read_batches(path: Path, *, strict: bool = True) -> Iterator[Batch]:
    """The requests of an OTLP file, one :class:`Batch` at a time.

    The format is told by content: a file whose first byte is ``{`` or ``[`` is JSON (JSON Lines
    when the first line is a complete object, else one document); anything else is
    length-prefixed protobuf.

    Raises:
        FileNotFoundError: no such file.
        TraceError: a line or message that cannot be read (naming the file and where), a
            truncated file.
    """
    if not path.exists():
        raise FileNotFoundError(f"data: no such traces file {show(str(path))}")
    with path.open("rb") as fh:
        head = fh.read(1)
        while head in (b" ", b"\n", b"\r", b"\t", b"\xef", b"\xbb", b"\xbf"):
            head = fh.read(1)
    if head in (b"{", b"["):
        return _json_batches(path, strict=strict)
    if not head:
        return iter(())
    return _proto_batches(path, strict=strict)


def _batch(request: Any, source: str, where: str, strict: bool) -> Batch:
    """The :class:`Batch` of the request read at ``where`` (see :func:`spans_of_request`)."""
    return Batch(where, *spans_of_request(request, source=source, where=where, strict=strict))


def _json_batches(path: Path, *, strict: bool) -> Iterator[Batch]:
    source = str(path)
    with path.open("rb") as fh:
        lines = enumerate(fh, start=1)
        for lineno, line in lines:
            if line.isspace() or not line:  # stops at the first other byte: no copy of the line
                continue
            try:
                request = json.loads(line)
            except ValueError as exc:
                if lineno == 1:  # not JSON Lines: one document over several lines
                    yield from _json_document(path, strict=strict)
                    return
                if not line.endswith(b"\n") and next(lines, None) is None:
                    raise TraceError(
                        f"{source} line {lineno}: the file ends in the middle of a line (it is "
                        f"truncated: {exc}); the lines before it were read"
                    ) from None
                raise TraceError(f"{source} line {lineno} is not valid JSON ({exc})") from None
            if isinstance(request, list):
                for index, item in enumerate(request):
                    yield _batch(item, source, f"line {lineno} item {index}", strict)
                continue
            batch = _batch(request, source, f"line {lineno}", strict)
            del request  # not alive while the next line is parsed
            yield batch


def _json_document(path: Path, *, strict: bool) -> Iterator[Batch]:
    source = str(path)
    try:
        document = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:
        raise TraceError(
            f"{source} is neither JSON Lines nor one JSON document ({exc}); is it truncated?"
        ) from None
    requests = document if isinstance(document, list) else [document]
    for index, request in enumerate(requests):
        yield _batch(request, source, f"request {index}", strict)


def _proto_batches(path: Path, *, strict: bool) -> Iterator[Batch]:
    from openevals.traces.sdk import request_from_bytes

    source = str(path)
    with path.open("rb") as fh:
        index = 0
        while True:
            header = fh.read(4)
            if not header:
                return
            where = f"message {index} (byte {fh.tell() - len(header)})"
            if len(header) < 4:
                raise TraceError(f"{source} {where}: truncated length prefix")
            (size,) = struct.unpack(">I", header)
            if size > _MAX_FRAME:
                raise TraceError(
                    f"{source} {where}: a length prefix of {size} bytes; this is not an OTLP "
                    "protobuf file with 4-byte big-endian length prefixes (or it is corrupt)"
                )
            body = fh.read(size)
            if len(body) < size:
                raise TraceError(
                    f"{source} {where}: the file ends {size - len(body)} bytes into a "
                    f"{size}-byte message (it is truncated); the messages before it were read"
                )
            yield _batch(request_from_bytes(body, f"{source} {where}"), source, where, strict)
            index += 1
