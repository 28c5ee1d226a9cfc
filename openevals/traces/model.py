"""Spans and traces as plain Python objects, independent of where they were read from.

Every source (OTLP JSON, OTLP protobuf, the OpenTelemetry SDK's ``ReadableSpan``) produces
:class:`Span` objects; :class:`Trace` puts the spans of one trace id into a tree. Nothing here
imports OpenTelemetry.

A trace is checked when it is built (:meth:`Trace.build`):

* **duplicate span ids**: an exact repeat (an exporter retry) is dropped and counted; two
  different spans with one id raise :class:`TraceError` naming the trace and the span;
* **orphans**: a span whose parent is not in the trace (lost, or sampled out) becomes a
  top-level span and is counted in :attr:`Trace.orphans`;
* **parent cycles**: spans that are their own ancestors raise :class:`TraceError` naming the
  span ids of the cycle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from operator import attrgetter
from typing import Any

from openevals._repr import show

__all__ = ["Event", "Span", "Trace", "TraceError"]


class TraceError(ValueError):
    """A trace (or a span of it) that cannot be read; the message names the source, the trace id
    and the span ids."""


class Event:
    """A span event: ``name``, ``time`` (ns since the epoch) and ``attributes``."""

    __slots__ = ("attributes", "name", "time")

    def __init__(self, name: str, time: int, attributes: Mapping[str, Any]) -> None:
        self.name = name
        self.time = time
        self.attributes = attributes

    def __repr__(self) -> str:
        return f"Event({show(self.name)})"


class Span:
    """One finished span. Ids are lowercase hex text (32 characters for a trace, 16 for a span);
    times are nanoseconds since the epoch; ``status`` is ``"UNSET"``, ``"OK"`` or ``"ERROR"``;
    ``resource`` holds the resource attributes (``service.name`` among them)."""

    __slots__ = (
        "attributes",
        "end",
        "events",
        "name",
        "parent_id",
        "resource",
        "scope",
        "span_id",
        "start",
        "status",
        "status_message",
        "trace_id",
    )

    def __init__(
        self,
        trace_id: str,
        span_id: str,
        parent_id: str | None,
        name: str,
        start: int,
        end: int,
        attributes: Mapping[str, Any],
        events: tuple[Event, ...] = (),
        status: str = "UNSET",
        status_message: str = "",
        resource: Mapping[str, Any] | None = None,
        scope: str = "",
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_id = parent_id
        self.name = name
        self.start = start
        self.end = end
        self.attributes = attributes
        self.events = events
        self.status = status
        self.status_message = status_message
        self.resource = resource if resource is not None else {}
        self.scope = scope

    @property
    def service(self) -> str | None:
        """The ``service.name`` resource attribute, if any."""
        value = self.resource.get("service.name")
        return value if isinstance(value, str) else None

    @property
    def duration_ms(self) -> float:
        return max(self.end - self.start, 0) / 1e6

    def same_as(self, other: Span) -> bool:
        """Is ``other`` a repeat of this span (same content, as an exporter retry sends)?"""
        return (
            self.parent_id == other.parent_id
            and self.name == other.name
            and self.start == other.start
            and self.end == other.end
            and self.attributes == other.attributes
        )

    def __repr__(self) -> str:
        return f"Span({show(self.name)}, trace_id={self.trace_id}, span_id={self.span_id})"


class Trace:
    """The spans of one trace as a tree: :attr:`roots` (top-level spans, oldest first) and
    :meth:`children` (oldest first). Build it with :meth:`build`."""

    def __init__(self, trace_id: str, spans: dict[str, Span], source: str) -> None:
        self.trace_id = trace_id
        self.spans = spans
        self.source = source
        self.duplicates = 0
        """Exact repeats of a span that were dropped."""
        self.orphans = 0
        """Spans whose parent is not in the trace (read as top-level spans)."""
        self._children: dict[str, list[Span]] = {}
        self.roots: list[Span] = []

    @classmethod
    def build(cls, trace_id: str, spans: Iterable[Span], *, source: str = "spans") -> Trace:
        """Check and link the spans of one trace.

        Raises:
            TraceError: two different spans share a span id, or parents form a cycle (the
                message names ``source``, the trace id and the span ids).
        """
        given = spans if isinstance(spans, list) else list(spans)
        by_id = {span.span_id: span for span in given}
        duplicates = len(given) - len(by_id)
        if duplicates:  # rare: find out which, keeping the first of each id
            by_id = {}
            for span in given:
                seen = by_id.setdefault(span.span_id, span)
                if seen is not span and not seen.same_as(span):
                    raise TraceError(
                        f"{source}: trace {trace_id} has two different spans with the span id "
                        f"{span.span_id} ({show(seen.name)} and {show(span.name)}); span ids must be unique "
                        "within a trace"
                    )
        trace = cls(trace_id, by_id, source)
        trace.duplicates = duplicates
        trace._link()
        return trace

    def _link(self) -> None:
        children: defaultdict[str, list[Span]] = defaultdict(list)
        spans = self.spans
        roots = self.roots
        for span in spans.values():
            parent = span.parent_id
            if parent is None:
                roots.append(span)
            elif parent in spans:
                children[parent].append(span)
            else:
                self.orphans += 1
                roots.append(span)
        self._children = children
        for kids in children.values():
            kids.sort(key=_START)
        self.roots.sort(key=_START)
        # every span is reached from a top-level one unless parents form a cycle
        stack = list(self.roots)
        reached = 0
        while stack:
            span = stack.pop()
            reached += 1
            below = children.get(span.span_id)
            if below:
                stack.extend(below)
        if reached != len(self.spans):
            self._raise_cycle()

    def _raise_cycle(self) -> None:
        reachable = {span.span_id for span in self.walk()}
        start = next(sid for sid in self.spans if sid not in reachable)
        path: list[str] = []
        current: str | None = start
        while current is not None and current not in path:
            path.append(current)
            current = self.spans[current].parent_id
        cycle = path[path.index(current) :] if current in path else path
        raise TraceError(
            f"{self.source}: trace {self.trace_id} has a parent cycle through the spans "
            f"{' -> '.join(cycle)} -> {cycle[0]}; a span cannot be its own ancestor"
        )

    @property
    def root(self) -> Span:
        """The first top-level span (the root span when the trace has one)."""
        return self.roots[0]

    def children(self, span: Span) -> list[Span]:
        return self._children.get(span.span_id, [])

    def walk(self, start: Span | None = None) -> Iterator[Span]:
        """Spans depth first, each before its children, children oldest first (iterative)."""
        stack = [start] if start is not None else list(reversed(self.roots))
        while stack:
            span = stack.pop()
            yield span
            kids = self._children.get(span.span_id)
            if kids:
                stack.extend(reversed(kids))

    def __len__(self) -> int:
        return len(self.spans)

    def __repr__(self) -> str:
        return f"Trace({self.trace_id}, {len(self.spans)} spans)"


_START = attrgetter("start", "end")
