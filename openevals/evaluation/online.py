"""Online scoring: :class:`OnlineEvaluator`, a span processor that scores finished traces.

Add it to the application's ``TracerProvider``; it never blocks, slows or breaks the app:

* ``on_end`` (on the app's thread) only samples by trace id (``sample_rate``, the same decision
  for every span of a trace) and appends the span to a bounded buffer; when the buffer is full
  the span is dropped and counted (``stats["dropped_spans"]``). The traces being collected hold
  at most ``max_spans`` spans too: past that, the oldest open trace is dropped
  (``dropped_traces``).
* A collector thread groups the buffered spans by trace. A trace is complete when its root span
  (no parent, or a remote parent) has ended and ``settle`` seconds have passed (spans that end
  after their parent, e.g. fire-and-forget tasks, get that long); a trace without a root after
  ``trace_timeout`` seconds is dropped (``expired_traces``). Complete traces become rows
  (:mod:`openevals.traces`), pass ``filter`` (a callable taking the row), and go to a bounded
  queue (``max_queue``; full: dropped, ``dropped_traces``).
* A scoring thread takes up to ``batch_size`` rows at a time and runs
  :func:`~openevals.evaluation.evaluate` on them with ``concurrency`` workers. An evaluator that
  fails is an error entry in the results (``evaluator_errors``), never a score. Once the judges'
  cost (``cost_usd`` of the results) reaches ``max_cost_usd``, or their tokens ``max_tokens``,
  scoring stops and further traces are counted in ``over_budget``.

Results go to the run file ``output`` (the JSONL format of ``evaluate(output=...)``: a ``run``
line, then a ``row`` and ``eval`` lines per trace, so ``openevals compare``, reports and
calibration read it) and, unless ``write_back=False``, back into the trace: per scored row an
``openevals.evaluation`` span, child of (and linked to) the scored span, with one
``gen_ai.evaluation.result`` event per result, after the GenAI semantic conventions:
``gen_ai.evaluation.name`` (the feedback key), ``gen_ai.evaluation.score.value`` (a number;
booleans as 1.0 / 0.0), ``gen_ai.evaluation.score.label`` (``"pass"`` / ``"fail"`` for
booleans, the text of a text score), ``gen_ai.evaluation.explanation`` (the comment); an
evaluator error is an event with ``gen_ai.evaluation.name`` (the evaluator) and ``error.type``.
The span also carries ``openevals.row_id`` and ``openevals.evaluators``.

``force_flush(timeout_millis)`` scores everything complete so far; ``shutdown()`` does the same
within ``shutdown_timeout`` seconds and stops the threads.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from opentelemetry import trace as otel_trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from openevals._repr import show
from openevals.data.row_ids import row_fingerprint
from openevals.evaluation.records import Recorder
from openevals.traces.model import Trace, TraceError
from openevals.traces.rows import agent_spans, trace_row
from openevals.traces.sdk import spans_from_sdk

__all__ = ["OnlineEvaluator"]

_MASK = (1 << 64) - 1
_REMEMBERED = 65_536
_STATS = (
    "received",
    "dropped_spans",
    "traces",
    "sampled",
    "filtered",
    "dropped_traces",
    "expired_traces",
    "bad_traces",
    "over_budget",
    "scored",
    "evaluator_errors",
    "failures",
)


def _check_number(value: Any, name: str, *, low: float, integer: bool = False) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < low:
        kind = "an int" if integer else "a number"
        raise ValueError(f"`{name}` must be {kind} >= {low}; got {show(value)}")


@dataclass(eq=False, repr=False)
class OnlineEvaluator(SpanProcessor):
    """Score the traces an application emits, in the background (see the module docstring).

    Args:
        evaluators: what ``evaluate(..., evaluators)`` accepts.
        output: the run file to append results to (``None``: keep them only in :attr:`results`).
        sample_rate: the share of traces scored, decided by trace id (0 to 1).
        filter: ``filter(row) -> bool``; only rows it accepts are scored.
        per: ``"trace"`` or ``"agent"`` (one row per agent span), as in ``read_traces``.
        max_queue: complete traces waiting to be scored; more are dropped.
        max_spans: spans buffered from the app's thread (more are dropped), and spans held in
            traces being collected (more: the oldest trace is dropped).
        concurrency: evaluator calls at once.
        batch_size: rows per ``evaluate`` call.
        max_cost_usd, max_tokens: the judges' budget; then scoring stops.
        settle, trace_timeout: seconds (see the module docstring).
        shutdown_timeout: seconds ``shutdown()`` waits for scoring to finish.
        write_back: write results into the trace as evaluation spans.
        tracer_provider: the provider for those spans (default: the global one).
        keep: the last ``keep`` scored result rows stay in :attr:`results`.

    Raises:
        ValueError, TypeError: a bad option (at construction).
    """

    evaluators: Any
    _: KW_ONLY
    output: str | os.PathLike[str] | None = None
    sample_rate: float = 1.0
    filter: Callable[[dict[str, Any]], bool] | None = None
    per: str = "trace"
    max_queue: int = 1000
    max_spans: int = 100_000
    concurrency: int = 4
    batch_size: int = 16
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    settle: float = 0.05
    trace_timeout: float = 300.0
    shutdown_timeout: float = 30.0
    write_back: bool = True
    tracer_provider: Any = None
    keep: int = 1000

    def __post_init__(self) -> None:
        _check_number(self.sample_rate, "sample_rate", low=0)
        if self.sample_rate > 1:
            raise ValueError(f"`sample_rate` must be between 0 and 1; got {show(self.sample_rate)}")
        for name in ("max_spans", "keep"):
            _check_number(getattr(self, name), name, low=0, integer=True)
        for name in ("max_queue", "concurrency", "batch_size"):
            _check_number(getattr(self, name), name, low=1, integer=True)
        for name in ("settle", "trace_timeout", "shutdown_timeout"):
            _check_number(getattr(self, name), name, low=0)
        if self.max_cost_usd is not None:
            _check_number(self.max_cost_usd, "max_cost_usd", low=0)
        if self.max_tokens is not None:
            _check_number(self.max_tokens, "max_tokens", low=0, integer=True)
        if self.filter is not None and not callable(self.filter):
            raise TypeError(f"`filter` must be a callable taking the row; got {show(self.filter)}")
        if self.per not in ("trace", "agent"):
            raise ValueError(f"`per` must be 'trace' or 'agent'; got {show(self.per)}")
        from openevals.evaluation.evaluators import prepare_evaluators

        self._names = [ev.name for ev in prepare_evaluators(self.evaluators)]  # checks them now
        self.output = Path(self.output) if self.output is not None else None
        self._threshold = int(self.sample_rate * (_MASK + 1))
        self._sample_all = self.sample_rate >= 1
        self._spans: deque[ReadableSpan] = deque()
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=self.max_queue)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._gathering = threading.Lock()
        self._busy = 0
        self._closed = False
        self.stats: dict[str, int] = dict.fromkeys(_STATS, 0)
        """Counters (see the module docstring); read them any time."""
        self.cost_usd = 0.0
        self.tokens = 0
        self.results: deque[dict[str, Any]] = deque(maxlen=self.keep)
        """The last scored result rows (as ``EvaluationResult.rows`` holds them)."""
        self.last_failure: str | None = None
        self._index = 0
        self._wrote_run = False
        self._open: dict[str, tuple[list[ReadableSpan], float, float | None]] = {}
        self._held = 0  # spans in self._open
        self._done: OrderedDict[str, None] = OrderedDict()
        self._collector = threading.Thread(
            target=self._collect, name="openevals-collect", daemon=True
        )
        self._scorer = threading.Thread(target=self._score, name="openevals-score", daemon=True)
        self._collector.start()
        self._scorer.start()

    # ------------------------------------------------------------------ the app's thread
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if self._closed:
            return
        context = span.context
        if not self._sample_all and (context.trace_id & _MASK) >= self._threshold:
            return
        spans = self._spans
        if len(spans) >= self.max_spans:
            self.stats["dropped_spans"] += 1
            return
        spans.append(span)
        parent = span.parent
        if (parent is None or parent.is_remote) and not self._wake.is_set():
            self._wake.set()

    # ------------------------------------------------------------------ collecting
    def _collect(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(min(self.settle, 0.05) or 0.01)
            self._wake.clear()
            try:
                self._gather(time.monotonic(), flush=False)
            except Exception as exc:  # never let the thread die
                self._failed(exc)

    def _gather(self, now: float, *, flush: bool) -> None:
        with self._gathering:
            spans = self._spans
            open_traces = self._open
            stats = self.stats
            while spans:
                span = spans.popleft()
                stats["received"] += 1
                trace_id = f"{span.context.trace_id:032x}"
                if trace_id in self._done:
                    continue  # a late span of a trace already scored (or our evaluation span)
                entry = open_traces.setdefault(trace_id, ([], now, None))
                entry[0].append(span)
                self._held += 1
                while self._held > self.max_spans and open_traces:  # the oldest open trace goes
                    oldest = next(iter(open_traces))
                    self._held -= len(open_traces.pop(oldest)[0])
                    self._remember(oldest)
                    stats["dropped_traces"] += 1
                if trace_id not in open_traces:
                    continue
                parent = span.parent
                if parent is None or parent.is_remote:
                    open_traces[trace_id] = (entry[0], entry[1], now)
            for trace_id in list(open_traces):
                members, first, rooted = open_traces[trace_id]
                if rooted is not None and (flush or now - rooted >= self.settle):
                    del open_traces[trace_id]
                    self._held -= len(members)
                    self._finish(trace_id, members)
                elif rooted is None and now - first >= self.trace_timeout:
                    del open_traces[trace_id]
                    self._held -= len(members)
                    self._remember(trace_id)
                    stats["expired_traces"] += 1

    def _remember(self, trace_id: str) -> None:
        """Spans of this trace that still arrive are dropped (the last 65,536 ids are kept)."""
        self._done[trace_id] = None
        if len(self._done) > _REMEMBERED:
            self._done.popitem(last=False)

    def _finish(self, trace_id: str, members: list[ReadableSpan]) -> None:
        self._remember(trace_id)
        stats = self.stats
        stats["traces"] += 1
        try:
            trace = Trace.build(trace_id, spans_from_sdk(members), source="online spans")
        except TraceError as exc:
            stats["bad_traces"] += 1
            self.last_failure = str(exc)
            return
        tops = agent_spans(trace) if self.per == "agent" else [None]
        for top in tops:
            row = trace_row(trace, top)
            try:
                wanted = self.filter is None or self.filter(row)
            except Exception as exc:  # a failing filter skips the row, never the app
                self._failed(exc)
                continue
            if not wanted:
                stats["filtered"] += 1
                continue
            if self._over_budget():
                stats["over_budget"] += 1
                continue
            try:
                self._queue.put_nowait(row)
            except queue.Full:
                stats["dropped_traces"] += 1
                continue
            stats["sampled"] += 1

    # ------------------------------------------------------------------ scoring
    def _over_budget(self) -> bool:
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            return True
        return self.max_tokens is not None and self.tokens >= self.max_tokens

    def _score(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=0.05)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            batch = [first]
            while len(batch) < self.batch_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            with self._lock:
                self._busy += 1
            try:
                self._score_batch(batch)
            except Exception as exc:
                self._failed(exc)
            finally:
                with self._lock:
                    self._busy -= 1

    def _score_batch(self, rows: list[dict[str, Any]]) -> None:
        if self._over_budget():
            self.stats["over_budget"] += len(rows)
            return
        from openevals.evaluation.runner import evaluate

        result = evaluate(rows, self.evaluators, concurrency=self.concurrency, progress=False)
        scored = list(result.rows)
        for rec in scored:
            rec["index"] = self._index
            self._index += 1
            for entry in rec["evaluations"].values():
                if entry["status"] != "success":
                    self.stats["evaluator_errors"] += 1
                self.cost_usd += entry.get("cost_usd") or 0.0
                usage = entry.get("usage") or {}
                self.tokens += int(usage.get("total_tokens") or 0)
        self.stats["scored"] += len(scored)
        if self.output is not None:
            self._write(scored, result.evaluators)
        if self.write_back:
            for rec in scored:
                with contextlib.suppress(Exception):
                    self._write_back(rec)
        self.results.extend(scored)

    def _write(self, scored: Sequence[dict[str, Any]], names: list[str]) -> None:
        assert self.output is not None
        recorder = Recorder()
        lines = []
        if not self._wrote_run:
            lines.append(recorder.line(Recorder.run_line(names, None)))
            self._wrote_run = True
        for rec in scored:
            # The row's content fingerprint, as evaluate(output=) writes it (checked on resume;
            # the evaluator's own is unknown here, so a resumed run scores these pairs again).
            row_fp = row_fingerprint(rec)
            lines.append(recorder.line(Recorder.row_line(rec, row_fp)))  # type: ignore[arg-type]
            for name, entry in rec["evaluations"].items():
                line = Recorder.eval_line(
                    rec["id"], rec["index"], name, entry, evaluator_fp="", row_fp=row_fp
                )
                lines.append(recorder.line(line))
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        fd = os.open(self.output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def _write_back(self, rec: Mapping[str, Any]) -> None:
        metadata = (rec.get("extra") or {}).get("metadata") or {}
        trace_id, span_id = metadata.get("trace_id"), metadata.get("span_id")
        if not trace_id or not span_id:
            return
        scored = otel_trace.SpanContext(
            trace_id=int(trace_id, 16),
            span_id=int(span_id, 16),
            is_remote=True,
            trace_flags=otel_trace.TraceFlags(otel_trace.TraceFlags.SAMPLED),
        )
        provider = self.tracer_provider or otel_trace.get_tracer_provider()
        tracer = provider.get_tracer("openevals.online")
        parent = otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(scored))
        attributes = {"openevals.row_id": str(rec["id"]), "openevals.evaluators": list(self._names)}
        with tracer.start_as_current_span(
            "openevals.evaluation",
            context=parent,
            links=[otel_trace.Link(scored)],
            attributes=attributes,
        ) as span:
            for name, entry in rec["evaluations"].items():
                if entry["status"] != "success":
                    error = entry.get("error") or {}
                    span.add_event(
                        "gen_ai.evaluation.result",
                        {
                            "gen_ai.evaluation.name": name,
                            "error.type": str(error.get("type") or "error"),
                        },
                    )
                    continue
                for result in entry["results"]:
                    span.add_event("gen_ai.evaluation.result", _result_attributes(result))

    def _failed(self, exc: BaseException) -> None:
        self.stats["failures"] += 1
        self.last_failure = f"{type(exc).__name__}: {exc}"

    # ------------------------------------------------------------------ flushing
    def _idle(self) -> bool:
        return not self._spans and self._queue.empty() and self._busy == 0

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Score every trace complete so far; ``False`` if that took longer than the timeout."""
        deadline = time.monotonic() + timeout_millis / 1000
        if self._stop.is_set():
            return self._idle()
        while time.monotonic() < deadline:
            try:
                self._gather(time.monotonic(), flush=True)
            except Exception as exc:
                self._failed(exc)
            if self._idle():
                time.sleep(0.01)  # a batch taken from the queue counts as busy from here on
                if self._idle():
                    return True
            time.sleep(0.005)
        return False

    def shutdown(self) -> None:
        """Flush within ``shutdown_timeout`` seconds, then stop the threads (spans that end
        afterwards are ignored; a second call does nothing)."""
        if self._closed:
            return
        self.force_flush(int(self.shutdown_timeout * 1000))
        self._closed = True
        self._stop.set()
        self._wake.set()
        self._collector.join(timeout=1)


def _result_attributes(result: Mapping[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": str(result.get("key"))}
    score = result.get("score")
    if isinstance(score, bool):
        attributes["gen_ai.evaluation.score.value"] = 1.0 if score else 0.0
        attributes["gen_ai.evaluation.score.label"] = "pass" if score else "fail"
    elif isinstance(score, (int, float)):
        attributes["gen_ai.evaluation.score.value"] = float(score)
    elif isinstance(score, str):
        attributes["gen_ai.evaluation.score.label"] = score
    comment = result.get("comment")
    if comment:
        attributes["gen_ai.evaluation.explanation"] = str(comment)
    return attributes
