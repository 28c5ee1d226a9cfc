"""The columnar path of the batch runner: pure evaluators over blocks of rows.

When every evaluator of a run is cheap and pure (run inline: exact match, Levenshtein, the ranking
metrics, ...), there is no target and no pairwise comparison, the runner takes rows in blocks of
:data:`BLOCK_ROWS` instead of scheduling them one by one on the event loop:

* each evaluator with a ``batch`` form (:mod:`.engines.batch_forms`) scores the block's rows in one
  call (when LangSmith tracing is on, rows are scored one by one so each call is traced as usual);
  rows a batch call cannot score (one of them raises, a mapped field is missing) are scored one by
  one, so every error lands on its own row;
* records and statistics are built through the same code as the per-row path, row by row in data
  order, so results, groups, errors, resume and the report are the same;
* the block's ``output=`` lines are written with one system call.

The event loop gets a turn after each block (cancellation, Ctrl-C and progress work as before).
A crash loses at most the block being built; a rerun resumes from the last block written.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from openevals.evaluation.engines.batch_forms import BatchForm, batch_form, run_batch_form

if TYPE_CHECKING:
    from openevals.evaluation.data import Row
    from openevals.evaluation.runner import _Run

__all__ = ["BLOCK_ROWS", "columnar_fits", "run_blocks"]

BLOCK_ROWS = 1024
"""Rows per block."""


def columnar_fits(run: _Run) -> bool:
    """May ``run`` take the columnar path (every evaluator inline, no target, no systems)?"""
    return (
        run.target is None
        and run.pairwise is None
        and bool(run.evaluators)
        and all(ev.inline for ev in run.evaluators)
    )


def _tracing() -> bool:
    from openevals.utils import _needs_langsmith

    return _needs_langsmith()


async def run_blocks(run: _Run) -> None:
    """Process every row of ``run`` block by block (see the module docs)."""
    forms: dict[str, BatchForm] = {}
    if not _tracing():
        for ev in run.evaluators:
            form = batch_form(ev)
            if form is not None:
                forms[ev.name] = form
    while True:
        block: list[Row] = []
        while len(block) < BLOCK_ROWS:
            row = run._next_row()
            if row is None:
                break
            block.append(row)
        if not block:
            return
        batched = await _score_batches(run, forms, block)
        run._held = []
        try:
            for row in block:
                _process(run, row, batched)
        finally:
            lines, run._held = run._held, None
            if lines and run._out is not None:
                run._out.write_lines(lines)
        await asyncio.sleep(0)


async def _score_batches(
    run: _Run, forms: dict[str, BatchForm], block: list[Row]
) -> dict[tuple[str, str], Any]:
    batched: dict[tuple[str, str], Any] = {}
    for ev in run.evaluators:
        form = forms.get(ev.name)
        if form is None:
            continue
        todo = [
            (row.id, row.fields)
            for row in block
            if row.problem is None and ev.name not in run._previous.finished(row.id)
        ]
        if len(todo) < 2:
            continue
        for row_id, outcome in (await run_batch_form(ev, form, todo, run.cache)).items():
            batched[(row_id, ev.name)] = outcome
    return batched


def _process(run: _Run, row: Row, batched: dict[tuple[str, str], Any]) -> None:
    """One row, as :meth:`_Run._process_row` does it for inline evaluators without a target."""
    previous = run._previous.finished(row.id)
    pending = [ev for ev in run.evaluators if ev.name not in previous]
    fields = row.fields
    rec = run._start_row(row, fields, previous, pending, None, False)
    if pending:
        if row.problem is not None:
            run._row_failed(row.problem, rec, pending)
        else:
            for ev in pending:
                outcome = batched.pop((row.id, ev.name), None)
                if outcome is None:
                    run._run_inline(ev, rec, fields)
                else:
                    run._finish_pair(ev, rec, *outcome)
    run._complete_row(rec, fields)
