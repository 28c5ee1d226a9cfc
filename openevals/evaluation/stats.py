"""What a batch run counts, and the summary made from it.

:class:`RunStats` is fed through one path per kind of event - :meth:`~RunStats.record_pair` for
every row x evaluator pair (finished now or read back on resume), :meth:`~RunStats.record_target`
for every target call and :meth:`~RunStats.record_row` for every finished row - and produces the
live progress snapshot and ``EvaluationResult.summary``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals.evaluation.aggregates import ScoreAggregator
from openevals.evaluation.batches import MetricBatches
from openevals.evaluation.concurrency import Limiter
from openevals.evaluation.failfast import ErrorTally
from openevals.evaluation.pricing import add_usage
from openevals.evaluation.records import Evaluation, ResultRow, TargetInfo, error_type
from openevals.evaluation.result import EvaluationResult

if TYPE_CHECKING:
    from openevals.evaluation.blocks import ColumnBlock

__all__ = ["EvaluatorStats", "RunStats"]


@dataclass
class EvaluatorStats:
    """Counters of one evaluator over a run."""

    done: int = 0
    errors: int = 0
    resumed: int = 0
    elapsed: float = 0.0
    usage: dict[str, int] | None = None
    cost: float | None = None
    cache_hits: int = 0
    cache_misses: int = 0
    model: str | None = None

    def summary(self, cached: bool) -> dict[str, Any]:
        ran = self.done - self.resumed
        return {
            "done": self.done,
            "errors": self.errors,
            "resumed": self.resumed,
            "mean_elapsed_sec": self.elapsed / ran if ran else None,
            "usage": self.usage,
            "cost_usd": self.cost,
            "model": self.model,
            "cache": {"hits": self.cache_hits, "misses": self.cache_misses} if cached else None,
        }


@dataclass
class RunStats:
    """Counters, score aggregates and timing of one run."""

    evaluators: Sequence[str]
    group_by: str | None = None
    rows_total: int | None = None
    rows_done: int = 0
    rows_failed: int = 0
    pairs_done: int = 0
    pairs_failed: int = 0
    pairs_resumed: int = 0
    tally: ErrorTally = field(default_factory=ErrorTally)
    """Failures by evaluator, type and message (``summary["common_errors"]``)."""
    reevaluated: dict[str, int] = field(default_factory=lambda: {"row": 0, "evaluator": 0})
    """Recorded pairs evaluated again because their row or evaluator changed (resume)."""
    error_types: dict[str, int] = field(default_factory=dict)
    target: dict[str, Any] = field(
        default_factory=lambda: {
            "calls": 0,
            "errors": 0,
            "elapsed_sec": 0.0,
            "usage": None,
            "reused": 0,
        }
    )
    live: bool = True
    """Keep running statistics for progress snapshots (off when nothing displays progress)."""
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None

    def __post_init__(self) -> None:
        self.per_evaluator = {name: EvaluatorStats() for name in self.evaluators}
        self.agg = ScoreAggregator(grouped=self.group_by is not None, live=self.live)
        self.batches: MetricBatches | None = None
        self.limiter: Limiter | None = None  # set by the runner: the adaptive concurrency

    @property
    def concurrency(self) -> int | None:
        """Calls allowed in flight now (None before the run starts)."""
        return self.limiter.controller.current if self.limiter is not None else None

    @property
    def backoffs(self) -> int:
        """How many times the run lowered its concurrency (429/503/timeouts)."""
        return self.limiter.controller.backoffs if self.limiter is not None else 0

    # ------------------------------------------------------------------ recording
    def record_pair(self, name: str, entry: Evaluation) -> None:
        """Count one row x evaluator pair, finished now or read back from the output file."""
        ev = self.per_evaluator[name]
        ev.done += 1
        self.pairs_done += 1
        if entry["resumed"]:
            ev.resumed += 1
            self.pairs_resumed += 1
        else:
            ev.elapsed += entry["elapsed_sec"] or 0.0
            cache = entry["cache"]
            if cache is not None:
                ev.cache_hits += cache["hits"]
                ev.cache_misses += cache["misses"]
        if entry["status"] != "success":
            ev.errors += 1
            self.pairs_failed += 1
            self._count_error(error_type(entry))
            self.tally.add(name, entry["error"])
        if entry["usage"]:
            ev.usage = add_usage(ev.usage, entry["usage"])
        cost = entry["cost_usd"]
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            ev.cost = (ev.cost or 0.0) + float(cost)
        if entry["model"] is not None and not entry["resumed"]:
            ev.model = entry["model"]

    def record_target(self, info: TargetInfo) -> None:
        """Count one target call."""
        stats = self.target
        stats["calls"] += 1
        stats["elapsed_sec"] += info["elapsed_sec"]
        stats["usage"] = add_usage(stats["usage"], info["usage"])
        if info["error"] is not None:
            stats["errors"] += 1
            self._count_error(info["error"]["type"])
            self.tally.add("target", info["error"])

    def record_reused_target(self) -> None:
        self.target["reused"] += 1

    def record_row(self, rec: ResultRow) -> bool:
        """Count one finished row and add its scores; returns whether any evaluator failed."""
        evaluations = rec["evaluations"]
        failed = [name for name, e in evaluations.items() if e["status"] != "success"]
        scores = [
            (r["key"], r["score"])
            for e in evaluations.values()
            for r in e["results"]
            if isinstance(r, Mapping) and "key" in r
        ]
        self.agg.add_row(scores, failed, rec.get("group"))
        self.rows_done += 1
        if failed:
            self.rows_failed += 1
        return bool(failed)

    def record_block(self, block: ColumnBlock) -> None:
        """Count the rows of a scored :class:`~.blocks.ColumnBlock` and add their scores: what
        :meth:`record_pair` and :meth:`record_row` count for each of its rows and pairs."""
        size = len(block)
        failed_rows: dict[int, list[str]] = {}
        for name, model, column in zip(block.names, block.models, block.columns, strict=True):
            ev = self.per_evaluator[name]
            ev.done += size
            ev.elapsed += math.fsum(column.elapsed)
            for hits, misses in column.counts.values():
                ev.cache_hits += hits
                ev.cache_misses += misses
            for pos, error in column.errors.items():
                failed_rows.setdefault(pos, []).append(name)
                self._count_error(error["type"])
                self.tally.add(name, error)
            ev.errors += len(column.errors)
            self.pairs_failed += len(column.errors)
            for usage in column.usage.values():
                ev.usage = add_usage(ev.usage, usage)
            if column.cost:
                ev.cost = (ev.cost or 0.0) + math.fsum(column.cost.values())
            if model is not None:
                ev.model = model
        self.pairs_done += size * len(block.names)
        self.rows_done += size
        self.rows_failed += len(failed_rows)
        groups = block.groups
        if groups is None:
            scores = _scores_by_key([column.results for column in block.columns])
            self.agg.add_block(scores, size - len(failed_rows), failed_rows.values())
            return
        for pos, found in enumerate(zip(*(c.results for c in block.columns), strict=True)):
            pairs = [(r["key"], r["score"]) for results in found for r in results]
            self.agg.add_row(pairs, failed_rows.get(pos, ()), groups[pos])

    def _count_error(self, kind: str) -> None:
        self.error_types[kind] = self.error_types.get(kind, 0) + 1

    # ------------------------------------------------------------------ reading
    def elapsed(self) -> float:
        end = self.finished if self.finished is not None else time.perf_counter()
        return end - self.started

    def common_errors(self) -> list[dict[str, Any]]:
        """The most common failures so far (:meth:`~.failfast.ErrorTally.common`)."""
        return self.tally.common()

    def snapshot(self, *, final: bool = False) -> dict[str, Any]:
        """What a progress callback receives after each row (``final``: the last one, with
        every running interval made from all the scores)."""
        elapsed = self.elapsed()
        snap: dict[str, Any] = {
            "rows_done": self.rows_done,
            "rows_total": self.rows_total,
            "rows_failed": self.rows_failed,
            "pairs_done": self.pairs_done,
            "pairs_failed": self.pairs_failed,
            "elapsed_sec": elapsed,
            "rate": self.rows_done / elapsed if elapsed > 0 else 0.0,
            "running": self.agg.online_snapshot(fresh=final),
            "concurrency": self.concurrency,
            "backoffs": self.backoffs,
        }
        if self.batches is not None:
            snap["batch_metrics"] = {
                name: info.get("value") for name, info in self.batches.current.items()
            }
        return snap

    def result(
        self,
        rows: Sequence[ResultRow],
        *,
        cache: Any,
        with_target: bool,
        output: Path | None,
        interrupted: bool,
        stopped: str | None = None,
    ) -> EvaluationResult:
        """The :class:`EvaluationResult` of the rows finished so far."""
        if self.finished is None:
            self.finished = time.perf_counter()
        batch_metrics: dict[str, dict[str, Any]] = {}
        batch_errors: list[dict[str, Any]] = []
        if self.batches is not None:
            batch_metrics, batch_errors = self.batches.final()
        aggregates = self.agg.aggregates()
        evaluators: dict[str, dict[str, Any]] = {}
        total_usage: dict[str, int] | None = None
        total_cost: float | None = None
        hits = misses = 0
        for name, ev in self.per_evaluator.items():
            evaluators[name] = ev.summary(cache is not None)
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
                "reevaluated": sum(self.reevaluated.values()),
            },
            "errors": {
                "by_evaluator": {n: ev.errors for n, ev in self.per_evaluator.items() if ev.errors},
                "by_type": dict(sorted(self.error_types.items())),
            },
            "evaluators": evaluators,
            "usage": total_usage,
            "cost_usd": total_cost,
            "cache": None,
            "elapsed_sec": self.elapsed(),
            "interrupted": interrupted,
        }
        if cache is not None:
            path = getattr(cache, "path", None)
            summary["cache"] = {
                "hits": hits,
                "misses": misses,
                "path": str(path) if path is not None else None,
            }
        if self.limiter is not None:
            control = self.limiter.controller
            summary["concurrency"] = {
                "cap": control.cap,
                "final": control.current,
                "lowest": control.lowest,
                "backoffs": control.backoffs,
            }
        if with_target:
            summary["target"] = dict(self.target)
        if output is not None:
            summary["output"] = str(output)
        if batch_errors:
            summary["batch_metric_errors"] = batch_errors
        common = self.tally.common()
        if common:
            summary["common_errors"] = common
        if any(self.reevaluated.values()):
            summary["reevaluated"] = {
                "row_changed": self.reevaluated["row"],
                "evaluator_changed": self.reevaluated["evaluator"],
            }
        if stopped is not None:
            summary["stopped"] = stopped
        return EvaluationResult(
            rows=rows,  # type: ignore[arg-type]
            aggregates=aggregates,
            summary=summary,
            by_group=self.agg.by_group(),
            batch_metrics=batch_metrics,
            evaluators=list(self.evaluators),
            interrupted=interrupted,
            stopped=stopped,
            histograms={key: self.agg.histogram_values(key) for key in aggregates},
        )


def _scores_by_key(
    columns: Sequence[Sequence[Sequence[Mapping[str, Any]]]],
) -> dict[str, list[Any]]:
    """The scores of a block per feedback key, in the order the per-row path adds them (row by
    row, evaluator by evaluator): one column after another when no key comes from two
    evaluators, which gives the same order."""
    flats = [[r for results in column for r in results] for column in columns]
    key_sets = [{r["key"] for r in flat} for flat in flats]
    scores: dict[str, list[Any]] = {}
    if sum(map(len, key_sets)) == len(set().union(*key_sets)):
        for flat, keys in zip(flats, key_sets, strict=True):
            if len(keys) == 1:
                scores[next(iter(keys))] = [r["score"] for r in flat]
            else:
                for r in flat:
                    scores.setdefault(r["key"], []).append(r["score"])
        return scores
    for found in zip(*columns, strict=True):
        for results in found:
            for r in results:
                scores.setdefault(r["key"], []).append(r["score"])
    return scores
