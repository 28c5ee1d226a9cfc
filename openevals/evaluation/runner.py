"""The batch runner behind ``openevals.evaluate`` / ``openevals.aevaluate``.

One asyncio event loop drives the whole run. Rows are pulled lazily from the data source by
``concurrency`` workers; for each row the target (if any) runs first, then every evaluator that has
not finished for this row yet. Async evaluators run on the loop, sync ones in a thread pool (with
the caller's context variables, so the judge cache reaches them), cheap pure ones (exact match,
Levenshtein, ranking metrics) directly on the loop. One semaphore bounds the calls in flight.

Every finished row x evaluator pair is appended to the ``output=`` JSONL file and flushed at once;
on start the runner reads that file and skips the pairs it already holds, so a rerun after a crash,
a ``kill -9`` or Ctrl-C resumes where the last one stopped and never repeats finished work.

File records (one JSON object per line, ``kind`` tells them apart):

* ``{"kind": "run", ...}`` - one per run: start time, evaluator names.
* ``{"kind": "row", "row_id", "index", "inputs", "outputs", "reference_outputs", "extra", "group",
  "target"}`` - written once per row before its first evaluation (after the target ran, so a
  resumed run reuses the target's outputs instead of calling it again).
* ``{"kind": "eval", "row_id", "index", "evaluator", "status", "results", "error", "elapsed_sec",
  "usage", "cost_usd", "model", "cache"}`` - one per finished row x evaluator pair.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from openevals._judge.cache import active_cache
from openevals.evaluation.aggregates import ScoreAggregator
from openevals.evaluation.cache import CountingCache, open_cache
from openevals.evaluation.checkpoint import Checkpoint
from openevals.evaluation.data import FIELDS, Row, count_rows, iter_rows
from openevals.evaluation.pricing import add_usage, estimate_cost, merge_prices, normalize_usage
from openevals.evaluation.progress import ProgressSink, make_progress
from openevals.evaluation.redact import Redactor
from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult
from openevals.evaluation.spec import EvaluatorSpec

__all__ = ["aevaluate", "evaluate"]

_PURE_MODULES = frozenset(
    {
        "openevals.exact",
        "openevals.string.levenshtein",
        "openevals.rag.ranking",
        "openevals.trajectory.match",
    }
)
_GENERIC_NAMES = frozenset(
    {"evaluator", "_evaluator", "<lambda>", "wrapper", "inner", "scorer", "_scorer", "fn"}
)
_MAX_MESSAGE = 4000
_YIELD_EVERY = 64
_DEFAULT_BATCH_SIZE = 64


# --------------------------------------------------------------------------- evaluators


@dataclass
class _Evaluator:
    name: str
    fn: Callable[..., Any]
    is_async: bool
    accepts: frozenset[str] | None
    fields: dict[str, str]
    inline: bool
    done: int = 0
    errors: int = 0
    resumed: int = 0
    elapsed: float = 0.0
    usage: dict[str, int] | None = None
    cost: float | None = None
    cache_hits: int = 0
    cache_misses: int = 0
    model: str | None = None

    def model_name(self) -> str | None:
        """The judge model behind an LLM evaluator (read without resolving anything)."""
        if self.model is not None:
            return self.model
        core = getattr(self.fn, "core", None)
        backend = getattr(core, "_backend", None)
        name = getattr(backend, "model_name", None)
        if not isinstance(name, str):
            raw = getattr(core, "_model", None)
            name = raw.split(":", 1)[1] if isinstance(raw, str) and ":" in raw else raw
        if isinstance(name, str) and name:
            self.model = name
        return self.model


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _accepted(fn: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword names ``fn`` accepts, or ``None`` when it takes ``**kwargs`` (or is opaque)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names = set()
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.add(param.name)
    return frozenset(names)


def _derive_name(fn: Any) -> str:
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    name = getattr(target, "__name__", None)
    if isinstance(name, str) and name not in _GENERIC_NAMES:
        return name.lstrip("_") or name
    core = getattr(target, "core", None)
    run_name = getattr(core, "run_name", None)
    if isinstance(run_name, str) and run_name:
        return run_name
    if isinstance(name, str):
        return name
    return type(target).__name__


def _known_pure(fn: Any) -> bool:
    return (
        getattr(fn, "__module__", None) in _PURE_MODULES
        and not hasattr(fn, "core")
        and not _is_async_callable(fn)
    )


def prepare_evaluators(evaluators: Any, *, model: str | None = None) -> list[_Evaluator]:
    """Resolve the ``evaluators=`` argument into named, inspected evaluators."""
    from openevals.evaluation.registry import build_evaluator

    items: list[tuple[str | None, Any]]
    if isinstance(evaluators, Mapping):
        items = list(evaluators.items())
    elif callable(evaluators) or isinstance(evaluators, (str, EvaluatorSpec)):
        items = [(None, evaluators)]
    elif isinstance(evaluators, Iterable):
        items = [(None, e) for e in evaluators]
    else:
        raise TypeError(
            "evaluators must be a list of evaluator callables (or names such as 'exact_match'), "
            f"or a dict of name -> evaluator; got {type(evaluators).__name__}"
        )
    if not items:
        raise ValueError("evaluators is empty; pass at least one evaluator")
    out: list[_Evaluator] = []
    used: set[str] = set()
    for explicit, item in items:
        if explicit is not None and (not isinstance(explicit, str) or not explicit):
            raise TypeError(f"evaluator names must be non-empty strings; got {explicit!r}")
        if isinstance(item, str):
            spec = build_evaluator(item, model=model)
        elif isinstance(item, EvaluatorSpec):
            spec = item
        elif callable(item):
            spec = EvaluatorSpec(evaluator=item)
        else:
            raise TypeError(
                "each evaluator must be a callable, an EvaluatorSpec or a name such as "
                f"'exact_match'; got {type(item).__name__}"
            )
        given = explicit or spec.name
        name = given or _derive_name(spec.evaluator)
        if name in used:
            if given is not None:
                raise ValueError(
                    f"evaluator name {name!r} is used twice; names identify results (and "
                    "finished work on resume), so give each evaluator its own name"
                )
            n = 2
            while f"{name}_{n}" in used:
                n += 1
            name = f"{name}_{n}"
        used.add(name)
        fn = spec.evaluator
        is_async = _is_async_callable(fn)
        inline = (spec.inline if spec.inline is not None else _known_pure(fn)) and not is_async
        out.append(
            _Evaluator(
                name=name,
                fn=fn,
                is_async=is_async,
                accepts=_accepted(fn),
                fields=dict(spec.fields or {}),
                inline=inline,
            )
        )
    return out


# --------------------------------------------------------------------------- helpers


_MISSING = object()


def _lookup(fields: Mapping[str, Any], path: str) -> Any:
    """A dotted path into the row's fields (``outputs.answer``, ``metadata.topic``)."""
    node: Any = fields
    for part in path.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, Sequence) and not isinstance(node, str) and part.isdigit():
            index = int(part)
            if index >= len(node):
                return _MISSING
            node = node[index]
        else:
            return _MISSING
    return node


def _group_of(fields: Mapping[str, Any], group_by: str) -> str | None:
    value = _lookup(fields, group_by)
    if value is _MISSING:
        for holder in ("inputs", "metadata"):
            value = _lookup(fields, f"{holder}.{group_by}")
            if value is not _MISSING:
                break
    if value is _MISSING or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _kwargs_for(ev: _Evaluator, fields: Mapping[str, Any]) -> dict[str, Any]:
    view: Mapping[str, Any] = fields
    if ev.fields:
        mapped = dict(fields)
        for arg, path in ev.fields.items():
            value = _lookup(fields, path)
            if value is _MISSING:
                raise KeyError(
                    f"evaluator {ev.name!r} reads {arg!r} from row field {path!r}, which this row "
                    f"does not have (fields: {sorted(fields)})"
                )
            mapped[arg] = value
        view = mapped
    if ev.accepts is None:
        return dict(view)
    return {k: v for k, v in view.items() if k in ev.accepts}


def _clean_result(value: Mapping[str, Any]) -> dict[str, Any]:
    out = {
        "key": value["key"],
        "score": value["score"],
        "comment": value.get("comment"),
        "metadata": value.get("metadata"),
    }
    if value.get("source_run_id") is not None:
        out["source_run_id"] = value["source_run_id"]
    return out


def _normalize_results(value: Any, name: str) -> list[dict[str, Any]]:
    if isinstance(value, Mapping):
        if "key" in value and "score" in value:
            return [_clean_result(value)]
        if "score" in value:
            comment = value.get("reasoning", value.get("comment"))
            return [{"key": name, "score": value["score"], "comment": comment, "metadata": None}]
        return [{"key": name, "score": None, "comment": None, "metadata": {"value": dict(value)}}]
    if isinstance(value, list) and all(
        isinstance(v, Mapping) and "key" in v and "score" in v for v in value
    ):
        return [_clean_result(v) for v in value]
    if isinstance(value, (bool, int, float)):
        return [{"key": name, "score": value, "comment": None, "metadata": None}]
    raise TypeError(
        f"evaluator {name!r} returned {type(value).__name__}; expected an EvaluatorResult dict "
        "({'key', 'score', ...}), a list of them, or a number/bool"
    )


def _usage_of(results: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    total: dict[str, int] | None = None
    seen: set[int] = set()
    for result in results:
        metadata = result.get("metadata")
        if not isinstance(metadata, Mapping):
            continue
        raw = metadata.get("usage")
        if raw is None or id(raw) in seen:
            continue
        seen.add(id(raw))
        total = add_usage(total, normalize_usage(raw))
    return total


def _target_usage(value: Any) -> dict[str, int] | None:
    if isinstance(value, Mapping):
        for key in ("usage", "usage_metadata", "token_usage"):
            usage = normalize_usage(value.get(key))
            if usage is not None:
                return usage
        return None
    return normalize_usage(getattr(value, "usage_metadata", None))


def _message(exc: BaseException) -> str:
    text = str(exc) or repr(exc)
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + " ...[truncated]"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- the run


@dataclass
class _Batches:
    fns: list[Callable[[dict[str, list[Any]]], Any]]
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None
    size: int
    buffer: list[dict[str, Any]] = field(default_factory=list)
    per_batch: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    current: dict[str, Any] = field(default_factory=dict)


class _Run:
    """State and logic of one evaluation run (shared by the sync and async entry points)."""

    def __init__(
        self,
        data: Any,
        evaluators: Any,
        *,
        target: Callable[..., Any] | None,
        concurrency: int,
        cache: Any,
        group_by: str | None,
        progress: Any,
        output: str | os.PathLike[str] | None,
        batch_metrics: Sequence[Callable[..., Any]] | None,
        accumulate: Callable[..., Any] | None,
        batch_size: int,
        prices: Mapping[str, Any] | None,
        retry_errors: bool,
        model: str | None,
    ) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an integer >= 1; got {concurrency!r}")
        if group_by is not None and (not isinstance(group_by, str) or not group_by):
            raise TypeError(f"group_by must be a field name (str) or None; got {group_by!r}")
        if target is not None and not callable(target):
            raise TypeError(f"target must be a function or None; got {type(target).__name__}")
        if output is not None and not isinstance(output, (str, os.PathLike)):
            raise TypeError(f"output must be a file path or None; got {type(output).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1; got {batch_size!r}")
        if accumulate is not None and not callable(accumulate):
            raise TypeError(f"accumulate must be a function or None; got {accumulate!r}")
        fns: list[Callable[..., Any]] = []
        if batch_metrics is not None:
            if callable(batch_metrics) or not isinstance(batch_metrics, Iterable):
                raise TypeError("batch_metrics must be a list of functions batch -> dict")
            fns = list(batch_metrics)
            for fn in fns:
                if not callable(fn):
                    raise TypeError(
                        f"batch_metrics must hold functions batch -> dict; got {type(fn).__name__}"
                    )
        elif accumulate is not None:
            raise ValueError("accumulate is only used with batch_metrics; pass batch_metrics too")
        self.evaluators = prepare_evaluators(evaluators, model=model)
        self.names = [ev.name for ev in self.evaluators]
        self.prices = merge_prices(prices)
        self.sink: ProgressSink | None = make_progress(progress)
        self.rows_iter: Iterator[Row] = iter_rows(data)
        self.rows_total: int | None = count_rows(data) if self.sink is not None else None
        if self.rows_total is None and not isinstance(data, (str, os.PathLike)):
            self.rows_total = count_rows(data)
        self.target = target
        self.target_is_async = target is not None and _is_async_callable(target)
        self.concurrency = concurrency
        self.group_by = group_by
        self.retry_errors = retry_errors
        self.cache_arg = cache
        self.cache: Any = None
        self._owns_cache = False
        self.output_path = Path(output) if output is not None else None
        self.batches = _Batches(fns=fns, accumulate=accumulate, size=batch_size) if fns else None
        self.redactor = Redactor()
        self.agg = ScoreAggregator(grouped=group_by is not None)
        self.rows: list[dict[str, Any]] = []
        self.rows_done = 0
        self.rows_failed = 0
        self.pairs_done = 0
        self.pairs_failed = 0
        self.pairs_resumed = 0
        self.error_types: dict[str, int] = {}
        self.target_stats: dict[str, Any] = {
            "calls": 0,
            "errors": 0,
            "elapsed_sec": 0.0,
            "usage": None,
            "reused": 0,
        }
        self.interrupted = False
        self.started = time.perf_counter()
        self.finished: float | None = None
        self._previous: dict[str, dict[str, dict[str, Any]]] = {}
        self._previous_rows: dict[str, dict[str, Any]] = {}
        self._out: Checkpoint | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._sem: asyncio.Semaphore | None = None
        self._exhausted = False
        self.began = threading.Event()
        self.closed = threading.Event()

    # ------------------------------------------------------------------ progress state
    def elapsed(self) -> float:
        end = self.finished if self.finished is not None else time.perf_counter()
        return end - self.started

    def snapshot(self) -> dict[str, Any]:
        elapsed = self.elapsed()
        snap: dict[str, Any] = {
            "rows_done": self.rows_done,
            "rows_total": self.rows_total,
            "rows_failed": self.rows_failed,
            "pairs_done": self.pairs_done,
            "pairs_failed": self.pairs_failed,
            "elapsed_sec": elapsed,
            "rate": self.rows_done / elapsed if elapsed > 0 else 0.0,
            "running": self.agg.online_snapshot(),
        }
        if self.batches is not None:
            snap["batch_metrics"] = {
                name: info.get("value") for name, info in self.batches.current.items()
            }
        return snap

    # ------------------------------------------------------------------ lifecycle
    def _open(self) -> None:
        self.started = time.perf_counter()
        self.cache, self._owns_cache = open_cache(self.cache_arg)
        if self.output_path is not None:
            self._out = Checkpoint(self.output_path, self.redactor)
            self._previous, self._previous_rows = self._out.load()
            if self.retry_errors:
                for per_row in self._previous.values():
                    for name in [n for n, r in per_row.items() if r.get("status") != "success"]:
                        del per_row[name]
            self._out.open()
            self._out.write(
                {
                    "kind": "run",
                    "row_id": "",
                    "started_at": _now(),
                    "evaluators": self.names,
                    "group_by": self.group_by,
                }
            )
        self._sem = asyncio.Semaphore(self.concurrency)
        if self.sink is not None:
            self.sink.start(self)

    def _close(self) -> None:
        self.finished = time.perf_counter()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if self._out is not None:
            self._out.close()
        if self.cache is not None and self._owns_cache:
            with contextlib.suppress(Exception):
                self.cache.close()
        if self.sink is not None:
            with contextlib.suppress(Exception):
                self.sink.stop(self)
        self.closed.set()

    async def execute(self) -> None:
        self.began.set()
        try:
            self._open()
            workers = [asyncio.ensure_future(self._worker()) for _ in range(self._worker_count())]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
            self._flush_batch()
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.interrupted = True
            raise
        finally:
            self._close()

    def _worker_count(self) -> int:
        if self.rows_total is not None:
            return max(1, min(self.concurrency, self.rows_total))
        return self.concurrency

    def _next_row(self) -> Row | None:
        if self._exhausted:
            return None
        try:
            row = next(self.rows_iter)
        except StopIteration:
            self._exhausted = True
            return None
        except BaseException:
            self._exhausted = True
            raise
        return row

    async def _worker(self) -> None:
        since_yield = 0
        while True:
            row = self._next_row()
            if row is None:
                return
            suspended = await self._process_row(row)
            since_yield += 1
            if not suspended and since_yield >= _YIELD_EVERY:
                since_yield = 0
                await asyncio.sleep(0)

    # ------------------------------------------------------------------ one row
    def _row_dict(self, row: Row, fields: Mapping[str, Any]) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "id": row.id,
            "index": row.index,
            "inputs": fields.get("inputs"),
            "outputs": fields.get("outputs"),
            "reference_outputs": fields.get("reference_outputs"),
        }
        extra = {k: v for k, v in fields.items() if k not in FIELDS}
        if extra:
            rec["extra"] = extra
        if self.group_by is not None:
            rec["group"] = _group_of(fields, self.group_by)
        rec["evaluations"] = {}
        return rec

    async def _process_row(self, row: Row) -> bool:
        """Run what is left for ``row``; returns whether it awaited anything."""
        previous = self._previous.get(row.id, {})
        pending = [ev for ev in self.evaluators if ev.name not in previous]
        fields = row.fields
        suspended = False
        prior_row = self._previous_rows.get(row.id)
        target_info: dict[str, Any] | None = None
        target_ran = False
        if self.target is not None:
            prior_target = prior_row.get("target") if prior_row is not None else None
            if isinstance(prior_target, Mapping) and (
                prior_target.get("status") == "success" or not pending
            ):
                assert prior_row is not None
                fields = {**fields, "outputs": prior_row.get("outputs")}
                target_info = dict(prior_target)
                self.target_stats["reused"] += 1
            elif pending:
                fields, target_info = await self._run_target(row)
                target_ran = suspended = True
        rec = self._row_dict(row, fields)
        if target_info is not None:
            rec["target"] = target_info
        for ev in self.evaluators:
            prior = previous.get(ev.name)
            if prior is not None:
                rec["evaluations"][ev.name] = self._resumed(ev, prior)
        if pending:
            if prior_row is None or target_ran:
                self._write_row(rec)
            if target_info is not None and target_info.get("status") == "error":
                failure = target_info.get("error") or {}
                error = {
                    "type": "TargetError",
                    "message": "the target failed, so the evaluator did not run: "
                    f"{failure.get('type')}: {failure.get('message')}",
                }
                for ev in pending:
                    self._finish_pair(ev, row, rec, [], error, 0.0, None)
            else:
                for ev in pending:
                    if ev.inline:
                        self._run_inline(ev, row, rec, fields)
                others = [ev for ev in pending if not ev.inline]
                if len(others) == 1:
                    await self._run_pair(others[0], row, rec, fields)
                    suspended = True
                elif others:
                    await asyncio.gather(*(self._run_pair(ev, row, rec, fields) for ev in others))
                    suspended = True
        self._complete_row(rec)
        return suspended

    def _resumed(self, ev: _Evaluator, record: Mapping[str, Any]) -> dict[str, Any]:
        entry = {
            "status": record.get("status", "error"),
            "results": list(record.get("results") or []),
            "error": record.get("error"),
            "elapsed_sec": record.get("elapsed_sec"),
            "usage": record.get("usage"),
            "cost_usd": record.get("cost_usd"),
            "model": record.get("model"),
            "cache": record.get("cache"),
            "resumed": True,
        }
        ev.resumed += 1
        ev.done += 1
        if entry["status"] != "success":
            ev.errors += 1
            self.pairs_failed += 1
            err = entry["error"] if isinstance(entry["error"], Mapping) else {}
            kind = str(err.get("type", "Error"))
            self.error_types[kind] = self.error_types.get(kind, 0) + 1
        self.pairs_done += 1
        self.pairs_resumed += 1
        ev.usage = add_usage(ev.usage, entry["usage"]) if entry["usage"] else ev.usage
        if isinstance(entry["cost_usd"], (int, float)):
            ev.cost = (ev.cost or 0.0) + float(entry["cost_usd"])
        return entry

    def _write_row(self, rec: Mapping[str, Any]) -> None:
        if self._out is None:
            return
        self._out.write(
            {
                "kind": "row",
                "row_id": rec["id"],
                "index": rec["index"],
                "inputs": rec["inputs"],
                "outputs": rec["outputs"],
                "reference_outputs": rec["reference_outputs"],
                "extra": rec.get("extra"),
                "group": rec.get("group"),
                "target": rec.get("target"),
            }
        )

    # ------------------------------------------------------------------ target
    async def _run_target(self, row: Row) -> tuple[dict[str, Any], dict[str, Any]]:
        assert self.target is not None and self._sem is not None
        target = self.target
        inputs = row.fields.get("inputs")
        async with self._sem:
            start = time.perf_counter()
            try:
                if self.target_is_async:
                    value, usage = await _capture_async(target, inputs)
                else:
                    call = functools.partial(_capture_sync, target, inputs)
                    value, usage = await self._in_thread(call)
                    if inspect.isawaitable(value):  # a sync function returning a coroutine
                        value = await value
                error = None
            except Exception as exc:
                value, usage = None, None
                error = {"type": type(exc).__name__, "message": self.redactor.text(_message(exc))}
            elapsed = time.perf_counter() - start
        usage = usage or (_target_usage(value) if error is None else None)
        self.target_stats["calls"] += 1
        self.target_stats["elapsed_sec"] += elapsed
        self.target_stats["usage"] = add_usage(self.target_stats["usage"], usage)
        info: dict[str, Any] = {
            "status": "success" if error is None else "error",
            "elapsed_sec": elapsed,
            "usage": usage,
            "error": error,
        }
        if error is not None:
            self.target_stats["errors"] += 1
            self.error_types[error["type"]] = self.error_types.get(error["type"], 0) + 1
            return dict(row.fields), info
        return {**row.fields, "outputs": value}, info

    async def _in_thread(self, call: Callable[[], Any]) -> Any:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self.concurrency, thread_name_prefix="openevals-eval"
            )
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(ctx.run, call))

    # ------------------------------------------------------------------ evaluators
    def _counting(self) -> CountingCache | None:
        return CountingCache(self.cache) if self.cache is not None else None

    def _run_inline(
        self, ev: _Evaluator, row: Row, rec: dict[str, Any], fields: Mapping[str, Any]
    ) -> None:
        counting = self._counting()
        token = active_cache.set(counting) if counting is not None else None
        start = time.perf_counter()
        try:
            value = ev.fn(**_kwargs_for(ev, fields))
            if inspect.isawaitable(value):
                close = getattr(value, "close", None)
                if callable(close):
                    close()
                raise TypeError(
                    f"evaluator {ev.name!r} was marked inline but returned an awaitable"
                )
            results = _normalize_results(value, ev.name)
            error = None
        except Exception as exc:
            results = []
            error = {"type": type(exc).__name__, "message": self.redactor.text(_message(exc))}
        finally:
            if token is not None:
                active_cache.reset(token)
        self._finish_pair(ev, row, rec, results, error, time.perf_counter() - start, counting)

    async def _run_pair(
        self, ev: _Evaluator, row: Row, rec: dict[str, Any], fields: Mapping[str, Any]
    ) -> None:
        assert self._sem is not None
        counting = self._counting()
        async with self._sem:
            token = active_cache.set(counting) if counting is not None else None
            start = time.perf_counter()
            try:
                kwargs = _kwargs_for(ev, fields)
                if ev.is_async:
                    value = await ev.fn(**kwargs)
                else:
                    value = await self._in_thread(functools.partial(ev.fn, **kwargs))
                if inspect.isawaitable(value):
                    value = await value
                results = _normalize_results(value, ev.name)
                error = None
            except Exception as exc:
                results = []
                error = {"type": type(exc).__name__, "message": self.redactor.text(_message(exc))}
            finally:
                if token is not None:
                    active_cache.reset(token)
            elapsed = time.perf_counter() - start
        self._finish_pair(ev, row, rec, results, error, elapsed, counting)

    def _finish_pair(
        self,
        ev: _Evaluator,
        row: Row,
        rec: dict[str, Any],
        results: list[dict[str, Any]],
        error: dict[str, Any] | None,
        elapsed: float,
        counting: CountingCache | None,
    ) -> None:
        usage = _usage_of(results)
        model = ev.model_name() if usage is not None or hasattr(ev.fn, "core") else None
        cost = estimate_cost(model, usage, self.prices)
        cache = {"hits": counting.hits, "misses": counting.misses} if counting is not None else None
        entry: dict[str, Any] = {
            "status": "success" if error is None else "error",
            "results": results,
            "error": error,
            "elapsed_sec": elapsed,
            "usage": usage,
            "cost_usd": cost,
            "model": model,
            "cache": cache,
            "resumed": False,
        }
        rec["evaluations"][ev.name] = entry
        ev.done += 1
        ev.elapsed += elapsed
        if usage is not None:
            ev.usage = add_usage(ev.usage, usage)
        if cost is not None:
            ev.cost = (ev.cost or 0.0) + cost
        if counting is not None:
            ev.cache_hits += counting.hits
            ev.cache_misses += counting.misses
        self.pairs_done += 1
        if error is not None:
            ev.errors += 1
            self.pairs_failed += 1
            self.error_types[error["type"]] = self.error_types.get(error["type"], 0) + 1
        if self._out is not None:
            self._out.write(
                {
                    "kind": "eval",
                    "row_id": row.id,
                    "index": row.index,
                    "evaluator": ev.name,
                    "status": entry["status"],
                    "results": results,
                    "error": error,
                    "elapsed_sec": elapsed,
                    "usage": usage,
                    "cost_usd": cost,
                    "model": model,
                    "cache": cache,
                }
            )

    def _complete_row(self, rec: dict[str, Any]) -> None:
        evaluations: dict[str, dict[str, Any]] = rec["evaluations"]
        # Keep evaluator order stable regardless of completion order.
        rec["evaluations"] = {name: evaluations[name] for name in self.names if name in evaluations}
        failed = [name for name, e in rec["evaluations"].items() if e["status"] != "success"]
        rec["status"] = "error" if failed else "success"
        scores = [
            (r["key"], r["score"])
            for e in rec["evaluations"].values()
            for r in e["results"]
            if isinstance(r, Mapping) and "key" in r
        ]
        self.agg.add_row(scores, failed, rec.get("group"))
        self.rows.append(rec)
        self.rows_done += 1
        if failed:
            self.rows_failed += 1
        if self.batches is not None:
            self.batches.buffer.append(rec)
            if len(self.batches.buffer) >= self.batches.size:
                self._flush_batch()
        if self.sink is not None:
            self.sink.advance(self)

    # ------------------------------------------------------------------ dataset metrics
    def _flush_batch(self) -> None:
        batches = self.batches
        if batches is None or not batches.buffer:
            return
        rows, batches.buffer = batches.buffer, []
        columns: dict[str, list[Any]] = {
            "id": [r["id"] for r in rows],
            "inputs": [r["inputs"] for r in rows],
            "outputs": [r["outputs"] for r in rows],
            "reference_outputs": [r["reference_outputs"] for r in rows],
        }
        extra_names: list[str] = []
        for r in rows:
            for name in r.get("extra", {}):
                if name not in columns and name not in extra_names:
                    extra_names.append(name)
        for name in extra_names:
            columns[name] = [r.get("extra", {}).get(name) for r in rows]
        columns["scores"] = [
            {res["key"]: res["score"] for e in r["evaluations"].values() for res in e["results"]}
            for r in rows
        ]
        for fn in batches.fns:
            label = _derive_name(fn)
            try:
                out = fn({k: list(v) for k, v in columns.items()})
                if not isinstance(out, Mapping):
                    raise TypeError(
                        f"batch metric {label!r} returned {type(out).__name__}; expected a dict "
                        "of metric name -> {'value': ...}"
                    )
                for metric, value in out.items():
                    if not isinstance(value, Mapping) or "value" not in value:
                        raise TypeError(
                            f"batch metric {label!r} returned {value!r} for {metric!r}; each "
                            "metric must be a dict with a 'value' entry"
                        )
                for metric, value in out.items():
                    batches.per_batch.setdefault(str(metric), []).append(dict(value))
            except Exception as exc:
                batches.errors.append(
                    {
                        "metric_fn": label,
                        "rows": len(rows),
                        "type": type(exc).__name__,
                        "message": self.redactor.text(_message(exc)),
                    }
                )
        with contextlib.suppress(Exception):
            batches.current = self._accumulate()

    def _accumulate(self) -> dict[str, dict[str, Any]]:
        batches = self.batches
        assert batches is not None
        per_batch = {k: [dict(v) for v in vs] for k, vs in batches.per_batch.items()}
        if batches.accumulate is not None:
            out = batches.accumulate(per_batch)
            if not isinstance(out, Mapping):
                raise TypeError(
                    f"accumulate returned {type(out).__name__}; expected a dict of metric name "
                    "-> {'value': ...}"
                )
            return {
                str(k): dict(v) if isinstance(v, Mapping) else {"value": v} for k, v in out.items()
            }
        total: dict[str, dict[str, Any]] = {}
        for name, values in per_batch.items():
            raw = [v.get("value") for v in values]
            numbers = [x for x in raw if isinstance(x, (int, float))]
            kinds = {isinstance(x, bool) for x in numbers}
            if len(numbers) == len(raw) and len(kinds) <= 1:
                total[name] = {"value": sum(numbers), "batches": len(values)}
            else:
                raise TypeError(
                    f"batch metric {name!r} has non-numeric values; the default accumulation sums "
                    "them, so pass accumulate= for other kinds of metrics"
                )
        return total

    # ------------------------------------------------------------------ result
    def result(self) -> EvaluationResult:
        if self.finished is None:
            self.finished = time.perf_counter()
        rows = sorted(self.rows, key=lambda r: r["index"])
        batch_metrics: dict[str, dict[str, Any]] = {}
        batch_errors: list[dict[str, Any]] = []
        if self.batches is not None:
            batch_errors = list(self.batches.errors)
            try:
                batch_metrics = self._accumulate()
            except Exception as exc:
                batch_errors.append(
                    {
                        "metric_fn": "accumulate",
                        "type": type(exc).__name__,
                        "message": self.redactor.text(_message(exc)),
                    }
                )
        aggregates = self.agg.aggregates()
        histograms = {key: list(self.agg.histogram_values(key)) for key in aggregates}
        return EvaluationResult(
            rows=rows,
            aggregates=aggregates,
            summary=self._summary(batch_errors),
            by_group=self.agg.by_group(),
            batch_metrics=batch_metrics,
            evaluators=list(self.names),
            interrupted=self.interrupted,
            histograms=histograms,
        )

    def _summary(self, batch_errors: list[dict[str, Any]]) -> dict[str, Any]:
        evaluators: dict[str, dict[str, Any]] = {}
        total_usage: dict[str, int] | None = None
        total_cost: float | None = None
        hits = misses = 0
        for ev in self.evaluators:
            ran = ev.done - ev.resumed
            info: dict[str, Any] = {
                "done": ev.done,
                "errors": ev.errors,
                "resumed": ev.resumed,
                "mean_elapsed_sec": ev.elapsed / ran if ran else None,
                "usage": ev.usage,
                "cost_usd": ev.cost,
                "model": ev.model,
                "cache": (
                    {"hits": ev.cache_hits, "misses": ev.cache_misses}
                    if self.cache is not None
                    else None
                ),
            }
            evaluators[ev.name] = info
            if ev.usage:
                total_usage = add_usage(total_usage, ev.usage)
            if ev.cost is not None:
                total_cost = (total_cost or 0.0) + ev.cost
            hits += ev.cache_hits
            misses += ev.cache_misses
        summary: dict[str, Any] = {
            "rows": self.rows_done,
            "rows_succeeded": self.rows_done - self.rows_failed,
            "rows_with_errors": self.rows_failed,
            "pairs": {
                "done": self.pairs_done,
                "succeeded": self.pairs_done - self.pairs_failed,
                "failed": self.pairs_failed,
                "resumed": self.pairs_resumed,
            },
            "errors": {
                "by_evaluator": {ev.name: ev.errors for ev in self.evaluators if ev.errors},
                "by_type": dict(sorted(self.error_types.items())),
            },
            "evaluators": evaluators,
            "usage": total_usage,
            "cost_usd": total_cost,
            "cache": None,
            "elapsed_sec": self.elapsed(),
            "interrupted": self.interrupted,
        }
        if self.cache is not None:
            path = getattr(self.cache, "path", None)
            summary["cache"] = {
                "hits": hits,
                "misses": misses,
                "path": str(path) if path is not None else None,
            }
        if self.target is not None:
            summary["target"] = dict(self.target_stats)
        if self.output_path is not None:
            summary["output"] = str(self.output_path)
        if batch_errors:
            summary["batch_metric_errors"] = batch_errors
        return summary


# --------------------------------------------------------------------------- target capture


def _capture_sync(target: Callable[..., Any], inputs: Any) -> tuple[Any, dict[str, int] | None]:
    """Call a sync target, capturing LangChain token usage when LangChain is in use."""
    with _usage_callback() as cb:
        value = target(inputs)
    return value, _callback_usage(cb)


async def _capture_async(
    target: Callable[..., Awaitable[Any]], inputs: Any
) -> tuple[Any, dict[str, int] | None]:
    with _usage_callback() as cb:
        value = await target(inputs)
    return value, _callback_usage(cb)


@contextlib.contextmanager
def _usage_callback() -> Iterator[Any]:
    if "langchain_core" not in sys.modules:
        yield None
        return
    try:
        from langchain_core.callbacks import get_usage_metadata_callback
    except ImportError:  # pragma: no cover - older langchain-core
        yield None
        return
    with get_usage_metadata_callback() as cb:
        yield cb


def _callback_usage(cb: Any) -> dict[str, int] | None:
    per_model = getattr(cb, "usage_metadata", None)
    if not per_model:
        return None
    total: dict[str, int] | None = None
    for usage in per_model.values():
        total = add_usage(total, normalize_usage(usage))
    return total


# --------------------------------------------------------------------------- entry points


def _make_run(data: Any, evaluators: Any, options: dict[str, Any]) -> _Run:
    return _Run(data, evaluators, **options)


class _LoopThread:
    """One event loop in a daemon thread, shared by every sync :func:`evaluate` call.

    Async clients (``AsyncOpenAI``, LangChain's cached httpx clients) keep connections bound to
    the loop that first used them; running every sync evaluation on the same long-lived loop lets
    a process call ``evaluate`` many times with the same async judges.
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._thread is None or not cls._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=main, name="openevals-evaluate", daemon=True)
                thread.start()
                ready.wait()
                cls._loop, cls._thread = loop, thread
            return cls._loop

    @classmethod
    def is_current(cls) -> bool:
        return cls._thread is not None and threading.current_thread() is cls._thread


def _drive(run: _Run) -> None:
    """Run ``run`` on the shared loop and wait; Ctrl-C cancels it and waits for the clean-up."""
    if _LoopThread.is_current():
        raise RuntimeError(
            "evaluate() was called from inside an evaluator or target of another evaluate() "
            "run; use `await aevaluate(...)` there"
        )
    future = asyncio.run_coroutine_threadsafe(run.execute(), _LoopThread.get())
    try:
        while True:
            try:
                future.result(timeout=0.25)
                return
            except concurrent.futures.TimeoutError:
                continue
    except KeyboardInterrupt:
        future.cancel()
        # Wait for the run's clean-up; a run cancelled before it started has none to wait for.
        deadline = time.monotonic() + 1.0
        while not run.closed.wait(0.05):
            if not run.began.is_set() and future.done() and time.monotonic() > deadline:
                break
        raise


def evaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = 16,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = _DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
) -> EvaluationResult:
    """Run ``evaluators`` over every row of ``data`` and aggregate the scores.

    Args:
        data: a list of row dicts, or a path to a JSONL, JSON, CSV or TSV file. Rows have
            ``inputs``, ``outputs``, ``reference_outputs``, an optional ``id`` and extra columns
            (see :mod:`openevals.evaluation.data`).
        evaluators: evaluator callables (sync or async), :class:`EvaluatorSpec` objects or names
            such as ``"exact_match"`` / ``"recall:k=5"``; or a dict of name -> evaluator. Each gets
            the row fields its signature accepts (all of them if it takes ``**kwargs``).
        target: optional ``target(inputs) -> outputs`` (sync or async) run once per row before
            the evaluators; its wall time and token usage are recorded.
        concurrency: the most target/evaluator calls in flight at once.
        cache: judge cache: a SQLite file path, ``True`` (a default file), or an object with
            ``get``/``set``. A rerun over the same data then makes no model calls.
        group_by: a row field (dotted path; also looked up in ``inputs`` and ``metadata``) to
            group aggregates by; adds per-group, micro and macro statistics.
        progress: ``True`` for a rich progress bar, ``False``, or a callable receiving snapshots.
        output: a JSONL file: every finished row x evaluator is appended at once, and a rerun
            with the same file resumes, skipping finished pairs.
        batch_metrics: dataset-level metrics ``fn(batch: dict[str, list]) -> {name: {"value":
            ...}}`` run on batches of ``batch_size`` finished rows (columns ``id``, ``inputs``,
            ``outputs``, ``reference_outputs``, extra columns, and ``scores``).
        accumulate: combines the per-batch metrics ``{name: [per-batch dicts]}`` into the final
            ones; by default values are summed.
        batch_size: rows per ``batch_metrics`` batch.
        prices: model -> ``(input, output)`` USD per 1M tokens, merged over the default table.
        retry_errors: on resume, run again the pairs that ended in an error (the newer record
            supersedes the old one).
        model: the judge model for evaluator names such as ``"llm:CORRECTNESS_PROMPT"``.

    Returns:
        an :class:`EvaluationResult`. Evaluator errors are recorded on their rows and counted;
        they never stop the run and never become scores.

    Raises:
        EvaluationInterrupted: on Ctrl-C (a ``KeyboardInterrupt``); ``.result`` holds what
            finished.
    """
    run = _make_run(
        data,
        evaluators,
        {
            "target": target,
            "concurrency": concurrency,
            "cache": cache,
            "group_by": group_by,
            "progress": progress,
            "output": output,
            "batch_metrics": batch_metrics,
            "accumulate": accumulate,
            "batch_size": batch_size,
            "prices": prices,
            "retry_errors": retry_errors,
            "model": model,
        },
    )
    try:
        _drive(run)
    except (KeyboardInterrupt, asyncio.CancelledError, concurrent.futures.CancelledError):
        run.interrupted = True
        raise EvaluationInterrupted(run.result()) from None
    return run.result()


async def aevaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = 16,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = _DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
) -> EvaluationResult:
    """Async twin of :func:`evaluate` (same arguments and result).

    Cancelling the task stops the run cleanly: in-flight calls are cancelled, everything finished
    stays in the ``output=`` file, and the ``CancelledError`` propagates.
    """
    run = _make_run(
        data,
        evaluators,
        {
            "target": target,
            "concurrency": concurrency,
            "cache": cache,
            "group_by": group_by,
            "progress": progress,
            "output": output,
            "batch_metrics": batch_metrics,
            "accumulate": accumulate,
            "batch_size": batch_size,
            "prices": prices,
            "retry_errors": retry_errors,
            "model": model,
        },
    )
    await run.execute()
    return run.result()
