"""Traces: reading OTLP JSON against ``json.loads``, and the online processor's ``on_end`` cost.

    PYTHONPATH=. python benchmarks/traces.py [--spans 1000000] [--on-end 200000]

1. **Reading.** One batch of agent traces (10 spans each: an agent span, model calls with GenAI
   messages, tool spans) is made by the OpenTelemetry SDK and encoded by its OTLP encoder into
   one OTLP/JSON line; the file repeats that line with fresh trace ids until it holds
   ``--spans`` spans. The floor is ``json.loads`` of every line (the least any reader of the
   file must do); the measured reader is ``read_traces(path).traces()`` (every span converted,
   grouped by trace, each trace checked and linked). The first ``--rows`` rows (messages, steps,
   facts) are timed too, for information. Times are CPU seconds of the process, best of three
   rounds (wall time on a shared machine moves with the other jobs). The peak resident memory of a fresh process reading every trace is
   printed beside that of one reading only the first line, and the file's size: reading holds
   the open traces of about two requests, not the file.
2. **on_end.** ``--on-end`` finished spans are passed to ``on_end`` of a no-op
   ``SpanProcessor`` and of :class:`~openevals.evaluation.online.OnlineEvaluator` (sampling all,
   buffer large enough to take every span); the difference per span is the processor's cost on
   the app's thread.

Both print their figures; the targets are a read ratio <= 2.0 and on_end <= 10 us per span.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TRACES_PER_BATCH = 100


def _batch_spans() -> list[object]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for n in range(TRACES_PER_BATCH):
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
        with tracer.start_as_current_span("invoke_agent helper", attributes=agent):
            history = [{"role": "user", "parts": [{"type": "text", "content": f"question {n}"}]}]
            for step in range(4):
                call = {
                    "type": "tool_call",
                    "id": f"c{step}",
                    "name": "search",
                    "arguments": {"q": f"q{n}-{step}"},
                }
                chat = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 100 + step,
                    "gen_ai.usage.output_tokens": 20,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}]),
                }
                with tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat):
                    pass
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.id": f"c{step}",
                    "gen_ai.tool.call.result": f"result {step}",
                }
                with tracer.start_as_current_span("execute_tool search", attributes=tool):
                    pass
                history.append({"role": "assistant", "parts": [call]})
                history.append(
                    {
                        "role": "tool",
                        "parts": [
                            {
                                "type": "tool_call_response",
                                "id": f"c{step}",
                                "response": f"result {step}",
                            }
                        ],
                    }
                )
            final = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
                ),
            }
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes=final):
                pass
    return list(exporter.get_finished_spans())


def write_file(path: Path, spans_wanted: int) -> int:
    from openevals.traces.sdk import encode_json

    spans = _batch_spans()
    line = encode_json(spans)  # type: ignore[arg-type]
    ids = sorted({f"{s.context.trace_id:032x}" for s in spans})  # type: ignore[attr-defined]
    pieces = re.split("(" + "|".join(ids) + ")", line)  # text, id, text, id, ... text
    slots = {old: i for i, old in enumerate(ids)}
    batches = max(spans_wanted // len(spans), 1)
    with path.open("w", encoding="utf-8") as fh:
        for b in range(batches):
            fresh = [f"{b:016x}{i:016x}" for i in range(len(ids))]
            fh.write("".join(p if n % 2 == 0 else fresh[slots[p]] for n, p in enumerate(pieces)))
            fh.write("\n")
    return batches * len(spans)


_CHILD = """
import resource, sys
from openevals.traces import read_traces
sum(1 for _ in read_traces(sys.argv[1]).traces())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def _child_peak_mb(path: Path) -> float:
    """Peak resident memory (MB) of a fresh process that reads every trace of ``path``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def bench_read(spans_wanted: int, rows_wanted: int) -> None:
    from openevals.traces import read_traces

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.otlp.jsonl"
        count = write_file(path, spans_wanted)
        size_mb = path.stat().st_size / 1e6
        best_floor = best_read = float("inf")
        for _ in range(3):  # CPU time of this process, best of 3: the machine is shared
            start = time.process_time()
            with path.open("rb") as fh:
                for raw in fh:
                    json.loads(raw)
            best_floor = min(best_floor, time.process_time() - start)
            start = time.process_time()
            traces = sum(1 for _ in read_traces(path).traces())
            best_read = min(best_read, time.process_time() - start)
        start = time.perf_counter()
        rows = sum(1 for _ in itertools.islice(read_traces(path), rows_wanted))
        rows_time = time.perf_counter() - start
        small = Path(folder) / "small.otlp.jsonl"
        with path.open("rb") as whole, small.open("wb") as part:
            part.write(whole.readline())
        floor_mb = _child_peak_mb(small)
        peak_mb = _child_peak_mb(path)
    print(f"read: {count:,} spans in {traces:,} traces, file {size_mb:,.0f} MB")
    print(f"  json.loads floor     {best_floor:7.2f} s CPU")
    print(
        f"  read_traces (traces) {best_read:7.2f} s   ratio {best_read / best_floor:.2f}x (target <= 2)"
    )
    print(f"  read_traces (rows)   {rows_time:7.2f} s   the first {rows:,} rows (information)")
    print(
        f"  peak RSS of a process reading every trace: {peak_mb:.0f} MB; reading one line of "
        f"it: {floor_mb:.0f} MB (file {size_mb:,.0f} MB)"
    )


class _NoOp(SpanProcessor):
    def on_end(self, span: object) -> None:  # type: ignore[override]
        return None


def bench_on_end(count: int) -> None:
    from openevals.evaluation.online import OnlineEvaluator

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for n in range(1000):
        with tracer.start_as_current_span("root"), tracer.start_as_current_span(f"child {n}"):
            pass
    spans = list(exporter.get_finished_spans())
    noop = _NoOp()
    online = OnlineEvaluator(
        [lambda *, outputs: True], max_spans=count + 1, write_back=False, max_queue=10
    )
    online._stop.set()  # benchmark only: the threads stop, so spans stay in the buffer
    loops = max(count // len(spans), 1)
    total = loops * len(spans)

    def run(processor: SpanProcessor) -> float:
        start = time.perf_counter()
        on_end = processor.on_end
        for _ in range(loops):
            for span in spans:
                on_end(span)  # type: ignore[arg-type]
        return (time.perf_counter() - start) / total * 1e6

    best_noop = best_ours = float("inf")
    for _ in range(3):
        best_noop = min(best_noop, run(noop))
        online._spans.clear()
        best_ours = min(best_ours, run(online))
    print(f"on_end: {total:,} spans")
    print(f"  no-op processor   {best_noop:6.3f} us/span")
    print(
        f"  OnlineEvaluator   {best_ours:6.3f} us/span   overhead {best_ours - best_noop:.3f} us (target <= 10)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--on-end", type=int, default=200_000)
    parser.add_argument("--rows", type=int, default=10_000, help="rows to time (information)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}")
    bench_read(args.spans, args.rows)
    bench_on_end(args.on_end)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
