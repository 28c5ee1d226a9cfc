"""Head-to-head judging for :func:`~openevals.comparison.compare`: when there is no reference
answer, a pairwise judge compares the two runs' outputs row by row.

Each paired row becomes one row of a batch run with ``systems=["baseline", "candidate"]``, so the
judge sees both outputs in both orders through the runner (concurrency, judge cache, ``output=``
resume, progress), and the run's pairwise summary gives the candidate's win rate with its
interval and the order-flip rate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openevals._stats import Estimate
from openevals.comparison._runs import RunScores, record_at

__all__ = ["HeadToHead", "judge_rows", "summarize"]


@dataclass(frozen=True)
class HeadToHead:
    """The candidate against the baseline, judged pair by pair (rates from the candidate's side)."""

    comparisons: int
    errors: int
    wins: int
    ties: int
    losses: int
    win_rate: Estimate | None
    tie_rate: Estimate | None
    loss_rate: Estimate | None
    order_flip_rate: Estimate | None
    """Of the pairs judged in both orders, the share whose verdict followed the position."""
    result: Any
    """The judging run's :class:`~openevals.evaluation.EvaluationResult`."""

    def as_dict(self) -> dict[str, Any]:
        values = {
            name: getattr(self, name) for name in self.__dataclass_fields__ if name != "result"
        }
        return {name: v.as_dict() if isinstance(v, Estimate) else v for name, v in values.items()}


def _records(run: RunScores, ids: list[str]) -> Iterator[dict[str, Any]]:
    """Each row record of ``ids`` (a file is read at the rows' offsets, one line at a time)."""
    source = run.source
    if isinstance(source, (str, os.PathLike)):
        with Path(source).open("rb") as handle:
            for row_id in ids:
                record = record_at(handle, run.row_offsets, run.ids[row_id], row_id)
                yield {"row_id": row_id} if record is None else record
        return
    by_id = {str(rec.get("id")): rec for rec in source.rows}
    yield from (by_id[row_id] for row_id in ids)


def judge_rows(base: RunScores, cand: RunScores, shared: list[str]) -> Iterator[dict[str, Any]]:
    """One row per paired id: its inputs and reference, and both runs' outputs."""
    for b, c in zip(_records(base, shared), _records(cand, shared), strict=True):
        yield {
            "id": str(b.get("row_id", b.get("id"))),
            "inputs": b.get("inputs"),
            "reference_outputs": b.get("reference_outputs"),
            "outputs": {"baseline": b.get("outputs"), "candidate": c.get("outputs")},
        }


def summarize(result: Any) -> HeadToHead:
    """The head-to-head figures from the judging run's pairwise summary."""
    summary = next(iter(result.pairwise.values()))
    record = next(iter(summary.pairs), None)
    counts: tuple[int, int, int] = (0, 0, 0)
    rates: tuple[Any, Any, Any] = (None, None, None)
    if record is not None:
        counts = (record.wins, record.ties, record.losses)
        rates = (record.win_rate, record.tie_rate, record.loss_rate)
        if record.a != "candidate":  # the record is from the baseline's side
            counts, rates = counts[::-1], rates[::-1]
    return HeadToHead(
        comparisons=summary.comparisons,
        errors=summary.errors,
        wins=counts[0],
        ties=counts[1],
        losses=counts[2],
        win_rate=rates[0],
        tie_rate=rates[1],
        loss_rate=rates[2],
        order_flip_rate=summary.order_flip_rate,
        result=result,
    )
