"""The worker side of a distributed run: score the rows of one batch, return raw outcomes.

A worker runs the same per-row code as the local engine (:class:`~openevals.evaluation.runner._Run`:
target first, then each evaluator not finished yet, inline or in the thread pool, with the
``concurrency`` set by the user), but instead of recording it hands back, per row, a
:class:`RowOutcome`: the target's call and each pair's ``(results, error, elapsed, cache counts)``.
The driver replays those through the same recording code, so records, the ``output=`` file,
statistics and batch metrics are made in one place, in data order, exactly as locally.

Evaluators with a ``batch`` form (:mod:`.batch_forms`) score the batch's rows in one call first
(runs with a ``target`` score row by row); when every evaluator is pure the worker takes the
local engine's columnar path (:mod:`..blocks`).

Plain Python: nothing here imports Ray.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openevals.evaluation.blocks import columnar_fits
from openevals.evaluation.cache import CountingCache
from openevals.evaluation.checkpoint import Previous
from openevals.evaluation.data import Row
from openevals.evaluation.engines.batch_forms import BatchForm, batch_form, run_batch_form
from openevals.evaluation.evaluators import RunEvaluator
from openevals.evaluation.loop import drive
from openevals.evaluation.options import RunOptions
from openevals.evaluation.records import ErrorInfo, ResultRow, TargetInfo
from openevals.evaluation.runner import _Run

__all__ = ["PairOutcome", "RowOutcome", "WorkItem", "WorkerRun", "counts_of"]

PairOutcome = tuple[list[dict[str, Any]], ErrorInfo | None, float, tuple[int, int] | None]
"""``(results, error, elapsed_sec, (cache hits, misses) or None)`` of one row x evaluator."""


@dataclass
class WorkItem:
    """One row sent to a worker, with what earlier runs recorded for it (resume)."""

    row: Row
    evals: dict[str, dict[str, Any]] = field(default_factory=dict)
    row_record: dict[str, Any] | None = None


@dataclass
class RowOutcome:
    """What a worker did for one row."""

    target: tuple[dict[str, Any], TargetInfo] | None = None
    pairs: dict[str, PairOutcome] = field(default_factory=dict)


def counts_of(counts: tuple[int, int] | None) -> CountingCache | None:
    """A :class:`CountingCache` carrying ``counts`` (what the recording code reads)."""
    if counts is None:
        return None
    counting = CountingCache(None)
    counting.hits, counting.misses = counts
    return counting


class WorkerRun(_Run):
    """The per-row code of the local engine, capturing outcomes instead of recording them."""

    def __init__(self, evaluators: Any, options: RunOptions) -> None:
        super().__init__([], evaluators, options)
        self.forms: dict[str, BatchForm] = {}
        if options.target is None:
            for ev in self.evaluators:
                form = batch_form(ev)
                if form is not None:
                    self.forms[ev.name] = form
        self._captured: dict[str, RowOutcome] = {}
        self._batched: dict[tuple[str, str], Any] = {}

    def run_items(self, items: Sequence[WorkItem]) -> list[RowOutcome]:
        """Score the rows of ``items``; one :class:`RowOutcome` per item, in order."""
        rows = [item.row for item in items]
        self._previous = Previous(
            evals={item.row.id: dict(item.evals) for item in items if item.evals},
            rows={item.row.id: item.row_record for item in items if item.row_record},
        )
        self._captured = {row.id: RowOutcome() for row in rows}
        self._batched = {}
        self.reader = None
        self.rows_iter = iter(rows)
        self._exhausted = False
        self.stats.rows_total = len(rows)
        self.began, self.closed = threading.Event(), threading.Event()
        drive(self._run_rows(rows), began=self.began, closed=self.closed)
        return [self._captured[row.id] for row in rows]

    async def _run_rows(self, rows: Sequence[Row]) -> None:
        if self.columnar and columnar_fits(self):
            await self.execute()  # the columnar path scores the batch forms per block itself
            return
        for ev in self.evaluators:
            form = self.forms.get(ev.name)
            if form is None:
                continue
            todo = [r for r in rows if ev.name not in self._previous.finished(r.id)]
            if len(todo) < 2:
                continue
            done = await run_batch_form(ev, form, [r.fields for r in todo], self.options.cache)
            for row, outcome in zip(todo, done, strict=True):
                if outcome is not None:
                    self._batched[(row.id, ev.name)] = outcome
        await self.execute()

    # ------------------------------------------------------------------ overrides
    async def _run_target(self, row: Row) -> tuple[dict[str, Any], TargetInfo]:
        fields, info = await super()._run_target(row)
        self._captured[row.id].target = (fields, info)
        return fields, info

    def _run_inline(self, ev: RunEvaluator, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        if not self._from_batch(ev, rec):
            super()._run_inline(ev, rec, fields)

    async def _run_pair(self, ev: RunEvaluator, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        if not self._from_batch(ev, rec):
            await super()._run_pair(ev, rec, fields)

    def _from_batch(self, ev: RunEvaluator, rec: ResultRow) -> bool:
        outcome = self._batched.pop((rec["id"], ev.name), None)
        if outcome is None:
            return False
        self._finish_pair(ev, rec, *outcome)
        return True

    def _finish_pair(
        self,
        ev: RunEvaluator,
        rec: ResultRow,
        results: list[dict[str, Any]],
        error: ErrorInfo | None,
        elapsed: float,
        counting: CountingCache | None,
    ) -> None:
        counts = None if counting is None else (counting.hits, counting.misses)
        self._captured[rec["id"]].pairs[ev.name] = (results, error, elapsed, counts)

    def _complete_row(self, rec: ResultRow, fields: Mapping[str, Any]) -> None:
        """Recording happens on the driver."""
