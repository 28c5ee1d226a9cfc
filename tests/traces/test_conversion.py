"""The OTLP/JSON span conversion against a plain reading of the format, on generated requests.

The reader's conversion takes shortcuts for speed (ids checked once per request, the common
attribute shapes first, a retry span by span after an error); ``_expected`` below reads each
span the slow, obvious way, and every generated request - well formed or not - must give the
same spans, or the same spans skipped.
"""

from __future__ import annotations

import base64
import binascii
import string
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.traces.model import Span, TraceError
from openevals.traces.otlp import spans_of_request

_KINDS = ("stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue")
_FIELDS = (*_KINDS, "bytesValue")
_SNAKE = {
    "string_value": "stringValue",
    "int_value": "intValue",
    "double_value": "doubleValue",
    "bool_value": "boolValue",
    "array_value": "arrayValue",
    "kvlist_value": "kvlistValue",
    "bytes_value": "bytesValue",
}


# --------------------------------------------------------------------------- the plain reading


def _value(any_value: Any) -> Any:
    if not isinstance(any_value, dict):
        return any_value
    present = [name for name in _FIELDS if any_value.get(name) is not None]
    if not present:
        snake = [name for name in _SNAKE if name in any_value]
        return _value({_SNAKE[snake[0]]: any_value[snake[0]]}) if snake else None
    kind, raw = present[0], any_value[present[0]]
    if kind == "intValue":
        return int(raw)
    if kind == "doubleValue":
        return float(raw)
    if kind == "boolValue":
        return bool(raw)
    if kind == "arrayValue":
        return [_value(v) for v in raw.get("values") or []]
    if kind == "kvlistValue":
        return _attrs(raw.get("values"))
    return raw  # text, or bytes kept as their base64 text


def _attrs(items: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for item in items or []:
        value = item.get("value")
        result[item["key"]] = None if value is None else _value(value)
    return result


def _id(raw: Any, size: int) -> str | None:
    if not isinstance(raw, str) or raw == "":
        return None
    if len(raw) == 2 * size:
        return raw.lower() if set(raw) <= set(string.hexdigits) else None
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == size else None


_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


def _expected(raw: dict[str, Any], resource: dict[str, Any]) -> tuple[Any, ...]:
    trace_id, span_id = _id(raw.get("traceId"), 16), _id(raw.get("spanId"), 8)
    if trace_id is None or span_id is None:
        raise TraceError("bad ids")
    parent = None
    if raw.get("parentSpanId"):
        parent = _id(raw["parentSpanId"], 8)
        if parent is None:
            raise TraceError("bad parent")
    status = raw.get("status") or {}
    events = tuple(
        (e.get("name", ""), int(e.get("timeUnixNano") or 0), _attrs(e.get("attributes")))
        for e in raw.get("events") or []
    )
    return (
        trace_id,
        span_id,
        parent,
        raw.get("name") or "",
        int(raw.get("startTimeUnixNano") or 0),
        int(raw.get("endTimeUnixNano") or 0),
        _attrs(raw.get("attributes")),
        events,
        _STATUS.get(status.get("code", 0), "UNSET") if status else "UNSET",
        (status.get("message") or "") if status else "",
        resource,
    )


def _fields(span: Span) -> tuple[Any, ...]:
    events = tuple((e.name, e.time, e.attributes) for e in span.events)
    return (
        span.trace_id,
        span.span_id,
        span.parent_id,
        span.name,
        span.start,
        span.end,
        span.attributes,
        events,
        span.status,
        span.status_message,
        span.resource,
    )


# --------------------------------------------------------------------------- generated requests

_text = st.text(alphabet="abcxyz. _", max_size=6)


def _any_values(*, broken: bool, depth: int = 2) -> st.SearchStrategy[Any]:
    good = [
        st.builds(lambda t: {"stringValue": t}, _text),
        st.builds(lambda n: {"intValue": str(n)}, st.integers(-(2**63), 2**63 - 1)),
        st.builds(lambda n: {"intValue": n}, st.integers(-5, 5)),
        st.builds(lambda x: {"doubleValue": x}, st.floats(allow_nan=False)),
        st.builds(lambda b: {"boolValue": b}, st.booleans()),
        st.just({"bytesValue": "AAE="}),
        st.just({"stringValue": None, "intValue": "7"}),
        st.builds(lambda t: {"string_value": t}, _text),
        st.just({}),
        st.just("bare text"),
    ]
    bad = [st.just({"intValue": "twelve"}), st.just({"arrayValue": "not a list"})]
    scalars = st.one_of(*good, *bad) if broken else st.one_of(*good)
    if depth == 0:
        return scalars
    inner = _any_values(broken=broken, depth=depth - 1)
    return st.one_of(
        scalars,
        st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(inner, max_size=3)),
        st.builds(lambda kv: {"kvlistValue": {"values": kv}}, _items(inner, broken=broken)),
    )


def _items(values: st.SearchStrategy[Any], *, broken: bool) -> st.SearchStrategy[list[Any]]:
    good = [
        st.builds(lambda k, v: {"key": k, "value": v}, _text, values),
        st.builds(lambda k: {"key": k}, _text),  # no value: reads as None
        st.builds(lambda k: {"key": k, "value": None}, _text),
    ]
    bad = [st.builds(lambda v: {"value": v}, values), st.just("not an item")]
    return st.lists(st.one_of(*good, *bad) if broken else st.one_of(*good), max_size=5)


def _ids(size: int, *, broken: bool) -> st.SearchStrategy[Any]:
    hex_text = st.text(alphabet="0123456789abcdefABCDEF", min_size=2 * size, max_size=2 * size)
    good = [
        hex_text,
        st.builds(lambda b: base64.b64encode(b).decode(), st.binary(min_size=size, max_size=size)),
    ]
    bad = [
        st.text(alphabet="0123456789abcdefgz-", min_size=2 * size, max_size=2 * size),
        st.builds(lambda b: base64.b64encode(b).decode(), st.binary(max_size=size - 1)),
        st.sampled_from(["", None, 42, "abc"]),
    ]
    return st.one_of(*good, *bad) if broken else st.one_of(*good)


_ATTRIBUTES = {b: _items(_any_values(broken=b), broken=b) for b in (False, True)}


@st.composite
def _requests(draw: st.DrawFn) -> dict[str, Any]:
    """Requests whose spans share trace ids and parents; half of them with malformed parts."""
    broken = draw(st.booleans())
    trace_pool = draw(st.lists(_ids(16, broken=broken), min_size=1, max_size=3))
    parent_pool = draw(st.lists(_ids(8, broken=broken), min_size=1, max_size=3))
    attributes = _ATTRIBUTES[broken]
    ends = ["1795925745227697924", 5, None, "x"] if broken else ["1795925745227697924", 5, None]
    spans = []
    for _ in range(draw(st.integers(1, 6))):
        span: dict[str, Any] = {
            "traceId": draw(st.sampled_from(trace_pool)),
            "spanId": draw(_ids(8, broken=broken)),
            "name": draw(_text),
            "startTimeUnixNano": str(draw(st.integers(0, 2**63))),
            "endTimeUnixNano": draw(st.sampled_from(ends)),
            "attributes": draw(attributes),
            "status": draw(st.sampled_from([{}, {"code": 2, "message": "boom"}, {"code": 1}])),
        }
        if draw(st.booleans()):
            span["parentSpanId"] = draw(st.sampled_from(parent_pool))
        if draw(st.booleans()):
            span["events"] = [{"name": "e", "timeUnixNano": "3", "attributes": draw(attributes)}]
        spans.append(span)
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
    scope = {"scope": {"name": "lib"}, "spans": spans}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def _typed(value: Any) -> Any:
    """``value`` with the type of each leaf beside it (``1 == 1.0 == True`` in Python)."""
    if isinstance(value, dict):
        return {key: _typed(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=100, deadline=None)
@given(_requests())
def test_conversion_equals_the_plain_reading(request: dict[str, Any]) -> None:
    resource = {"service.name": "svc"}
    expected, bad = [], 0
    for raw in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        try:
            expected.append(_expected(raw, resource))
        except (TraceError, TypeError, ValueError, KeyError, AttributeError):
            bad += 1
    spans, skipped = spans_of_request(request, source="f", where="line 1", strict=False)
    assert _typed([_fields(s) for s in spans]) == _typed(expected)
    assert skipped == bad
    assert all(s.scope == "lib" for s in spans)
    if bad:
        try:
            spans_of_request(request, source="f", where="line 1")
        except TraceError as exc:
            assert str(exc).startswith("f line 1: span ")
        else:
            raise AssertionError("a malformed span did not raise")
