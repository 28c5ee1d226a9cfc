"""Traces as a data source: :func:`read_traces` and the reader behind ``evaluate("x.otlp.json")``.

**Streaming and memory.** A file is read one request (a JSON line, a protobuf message) at a time,
and spans are grouped by trace id. A trace is complete - and becomes rows - once its root span
(a span without a parent) has been read and ``settle`` more requests after the one holding it
(default 1: exporters send a trace's spans as they end, children before their parent, so the
spans still to come belong to the same or the next batch). Memory is therefore bounded by the
traces open at one time, not by the file; ``max_spans`` bounds one trace. At the end of the
file every trace still open is complete (those without a root span read as orphans, see
:mod:`.model`). A span that arrives for a trace already emitted is counted in
``stats["late_spans"]`` and dropped (the reader remembers the last 65,536 emitted trace ids). A
single JSON document (not JSON Lines) is read as a whole: it cannot be streamed.

**Errors.** With ``on_error="raise"`` (default) a malformed span, a truncated file, duplicate span
ids with different content, a parent cycle or a trace over ``max_spans`` raise
:class:`~openevals.traces.model.TraceError` naming the file, where in it, the trace and the span
ids. With ``on_error="skip"`` such spans and traces are skipped and counted in
:attr:`TraceReader.stats` (``skipped_spans``, ``skipped_traces``, ``late_spans``, ``orphans``,
``duplicates``) - a truncated last line or message still raises, after the rows before it.
``stats["peak_open_traces"]`` is the most traces held at once.
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from openevals._repr import show
from openevals.traces.model import Span, Trace, TraceError
from openevals.traces.otlp import Batch, read_batches
from openevals.traces.rows import agent_spans, trace_row

__all__ = ["TraceReader", "read_traces"]

_REMEMBERED = 65_536
_PER = ("trace", "agent")


def _names(value: Any, name: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, Collection) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    raise TypeError(f"`{name}` must be a str or a collection of str; got {type(value).__name__}")


def _time_ns(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"`{name}` must be an ISO 8601 time such as '2026-01-31T12:00:00Z'; got {show(value)}"
            ) from None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp() * 1e9)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(
        f"`{name}` must be a datetime, an ISO 8601 string or nanoseconds since the epoch; got "
        f"{type(value).__name__}"
    )


@dataclass(frozen=True)
class ReadOptions:
    """The checked options of :func:`read_traces` (times in ns since the epoch)."""

    per: str = "trace"
    service: frozenset[str] | None = None
    span_name: frozenset[str] | None = None
    since: int | None = None
    until: int | None = None
    reference: Callable[[dict[str, Any]], Any] | Mapping[str, Any] | None = None
    strict: bool = True
    settle: int = 1
    max_spans: int = 100_000


class TraceReader:
    """The rows of a traces source (see :func:`read_traces`); iterate it for row dicts, or call
    :meth:`traces` for :class:`~openevals.traces.model.Trace` objects. Each iteration reads the
    source again; :attr:`stats` counts what the last one skipped."""

    def __init__(self, source: Any, options: ReadOptions) -> None:
        self.name, self._batches = _opened(source)
        self.options = options
        self.stats: dict[str, int] = {}

    # ------------------------------------------------------------------ traces
    def traces(self) -> Iterator[Trace]:
        """The traces of the source, each complete and checked (see the module docstring)."""
        self.stats = dict.fromkeys(
            (
                "skipped_spans",
                "skipped_traces",
                "late_spans",
                "orphans",
                "duplicates",
                "traces",
                "peak_open_traces",
            ),
            0,
        )
        options = self.options
        for trace_id, spans in self._grouped():
            try:
                trace = Trace.build(trace_id, spans, source=self.name)
            except TraceError:
                if options.strict:
                    raise
                self.stats["skipped_traces"] += 1
                continue
            self.stats["traces"] += 1
            self.stats["orphans"] += trace.orphans
            self.stats["duplicates"] += trace.duplicates
            yield trace

    def _grouped(self) -> Iterator[tuple[str, list[Span]]]:
        open_traces: dict[str, list[Span]] = {}
        too_big: set[str] = set()
        ready: deque[tuple[int, str]] = deque()
        emitted: OrderedDict[str, None] = OrderedDict()
        stats = self.stats
        settle, max_spans = self.options.settle, self.options.max_spans
        number = 0
        for batch in self._batches(self.options.strict):
            stats["skipped_spans"] += batch.skipped
            for span in batch.spans:
                trace_id = span.trace_id
                spans = open_traces.get(trace_id)
                if spans is None:
                    if trace_id in emitted or trace_id in too_big:
                        stats["late_spans"] += 1
                        continue
                    spans = open_traces[trace_id] = []
                spans.append(span)
                if span.parent_id is None:
                    ready.append((number + settle, trace_id))
                if len(spans) > max_spans:
                    self._too_big(batch, trace_id, open_traces, too_big)
            stats["peak_open_traces"] = max(stats["peak_open_traces"], len(open_traces))
            while ready and ready[0][0] <= number:
                trace_id = ready.popleft()[1]
                spans_done = open_traces.pop(trace_id, None)
                if spans_done is not None:
                    emitted[trace_id] = None
                    if len(emitted) > _REMEMBERED:
                        emitted.popitem(last=False)
                    yield trace_id, spans_done
            number += 1
        yield from open_traces.items()

    def _too_big(
        self, batch: Batch, trace_id: str, open_traces: dict[str, list[Span]], too_big: set[str]
    ) -> None:
        if self.options.strict:
            raise TraceError(
                f"{self.name} {batch.where}: trace {trace_id} has more than "
                f"{self.options.max_spans} "
                "spans (`max_spans`); raise the limit or read with on_error='skip'"
            )
        self.stats["skipped_traces"] += 1
        self.stats["skipped_spans"] += len(open_traces.pop(trace_id))
        too_big.add(trace_id)

    # ------------------------------------------------------------------ rows
    def _wanted(self, span: Span) -> bool:
        options = self.options
        if options.service is not None and span.service not in options.service:
            return False
        if options.span_name is not None and span.name not in options.span_name:
            return False
        if options.since is not None and span.start < options.since:
            return False
        return options.until is None or span.start < options.until

    def rows_of(self, trace: Trace) -> list[dict[str, Any]]:
        """The rows of one trace (one, or one per agent span), filtered."""
        per_agent = self.options.per == "agent"
        tops = agent_spans(trace) if per_agent else [trace.root]
        rows = []
        for top in tops:
            if not self._wanted(top):
                continue
            row = trace_row(trace, top if per_agent else None)
            reference = self.options.reference
            if isinstance(reference, Mapping):
                if row["id"] in reference:
                    row["reference_outputs"] = reference[row["id"]]
            elif reference is not None:
                row["reference_outputs"] = reference(row)
            rows.append(row)
        return rows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for trace in self.traces():
            yield from self.rows_of(trace)

    def __repr__(self) -> str:
        return f"TraceReader({show(self.name)}, per={show(self.options.per)})"


def _opened(source: Any) -> tuple[str, Callable[[bool], Iterable[Batch]]]:
    """``(name, batches(strict))`` of a file path, an exporter or an iterable of spans."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"data: no such traces file {show(str(path))}")
        return str(path), lambda strict: read_batches(path, strict=strict)
    getter = getattr(source, "get_finished_spans", None)
    if callable(getter):  # InMemorySpanExporter
        return "InMemorySpanExporter", lambda strict: [_sdk_batch(getter())]
    if isinstance(source, (bytes, bytearray, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(
            "read_traces: expected an OTLP file path, an InMemorySpanExporter, or an iterable of "
            f"spans (ReadableSpan or openevals Span); got {type(source).__name__}"
        )
    return "spans", lambda strict: [_sdk_batch(list(source))]


def _sdk_batch(spans: list[Any]) -> Batch:
    if spans and not all(isinstance(s, Span) for s in spans):
        from openevals.traces.sdk import spans_from_sdk

        spans = spans_from_sdk(spans)
    return Batch("spans", spans, 0)


def read_traces(
    source: Any,
    *,
    per: str = "trace",
    service: str | Collection[str] | None = None,
    span_name: str | Collection[str] | None = None,
    since: Any = None,
    until: Any = None,
    reference: Callable[[dict[str, Any]], Any] | Mapping[str, Any] | None = None,
    on_error: str = "raise",
    settle: int = 1,
    max_spans: int = 100_000,
) -> TraceReader:
    """Traces as evaluation rows, for ``evaluate(read_traces(...), evaluators)``.

    Args:
        source: an OTLP file (JSON Lines, one JSON document, or length-prefixed protobuf; see
            :mod:`openevals.traces.otlp`), an ``InMemorySpanExporter``, or an iterable of the
            SDK's ``ReadableSpan`` (or :class:`~openevals.traces.model.Span`) objects.
        per: ``"trace"`` - one row per trace, id = trace id; ``"agent"`` - one row per agent
            span (``invoke_agent`` / OpenInference ``AGENT``; the root span when a trace has
            none), id = ``"<trace id>:<span id>"``.
        service: keep rows whose span (root or agent) has this ``service.name`` (or one of these).
        span_name: keep rows whose span has this name (or one of these).
        since, until: keep rows whose span started in ``[since, until)`` (datetimes - naive
            ones are UTC -, ISO 8601 strings, or ns since the epoch).
        reference: ``reference_outputs`` per row: a mapping of row id -> value, or a callable
            taking the row dict.
        on_error: ``"raise"`` or ``"skip"`` (count in ``.stats``) bad spans and traces.
        settle: requests to read past a trace's root span before the trace is complete.
        max_spans: the most spans one trace may have.

    Raises:
        FileNotFoundError, TypeError, ValueError: a bad argument (at the call); TraceError
        while reading (see the module docstring).
    """
    if per not in _PER:
        raise ValueError(f"`per` must be 'trace' or 'agent'; got {show(per)}")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"`on_error` must be 'raise' or 'skip'; got {show(on_error)}")
    for value, label in ((settle, "settle"), (max_spans, "max_spans")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"`{label}` must be an int >= 0; got {show(value)}")
    if reference is not None and not (callable(reference) or isinstance(reference, Mapping)):
        raise TypeError(
            "`reference` must be a mapping of row id -> reference outputs or a callable "
            f"taking the row; got {type(reference).__name__}"
        )
    options = ReadOptions(
        per=per,
        service=_names(service, "service"),
        span_name=_names(span_name, "span_name"),
        since=_time_ns(since, "since"),
        until=_time_ns(until, "until"),
        reference=reference,
        strict=on_error == "raise",
        settle=settle,
        max_spans=max_spans,
    )
    return TraceReader(source, options)
