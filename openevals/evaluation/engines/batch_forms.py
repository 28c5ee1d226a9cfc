"""The ``batch`` forms of evaluators: score many rows with one call.

An evaluator *has a batch form* when it carries a ``batch`` method (or ``abatch`` for async ones)
whose parameters name row fields (``outputs``, ``reference_outputs``, ``inputs``): it is called with
one list per field and returns one result per row, in order, equal to what per-row calls return.
The type-checking evaluators (``create_mypy_evaluator(...).batch``: one checker process for many
samples) and embedding similarity (``.batch``: one embedding request) are such evaluators.

:func:`batch_form` finds the form; :func:`run_batch_form` calls it for the rows of one worker batch.
When the batch call fails as a whole (one bad row raises for all), the rows fall back to per-row
calls, so each error lands on its own row exactly as with the local engine; for cheap pure
evaluators the failing call is first split in halves, so only the rows that raise run alone.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals.data.columns import FIELDS
from openevals.evaluation.evaluators import Outcome, RunEvaluator, counting_cache, normalize_many

__all__ = ["BatchForm", "batch_form", "run_batch_form"]


@dataclass(frozen=True)
class BatchForm:
    """An evaluator's batch method and the row fields it takes (in its parameter order)."""

    method: Callable[..., Any]
    columns: tuple[str, ...]


def batch_form(ev: RunEvaluator) -> BatchForm | None:
    """The batch form of ``ev``, or ``None`` when it has none."""
    owner = ev.fn
    method = getattr(owner, "abatch", None) if ev.is_async else None
    if not callable(method):
        method = getattr(owner, "batch", None)
    if not callable(method):
        return None
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return None
    columns = tuple(name for name in params if name in FIELDS)
    if "outputs" not in columns:
        return None
    if ev.accepts is not None and not set(columns) <= ev.accepts:
        return None
    required = [
        p.name
        for p in params.values()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if any(name not in columns for name in required):
        return None
    return BatchForm(method=method, columns=columns)


async def run_batch_form(
    ev: RunEvaluator,
    form: BatchForm,
    rows: Sequence[Mapping[str, Any]],
    cache: Any,
    shared: dict[str, list[Any]] | None = None,
) -> list[Outcome | None]:
    """Score ``rows`` (their fields) with one call of ``form``: one outcome per row, in order.
    ``shared`` keeps the columns read from ``rows``, for the next form on the same rows.

    A row gets ``None`` when its fields do not fit the evaluator (a missing mapped field), and
    every row does when the call fails, returns the wrong number of results, or touches the
    judge cache (its hits could not be told apart per row): those rows then run one by one.
    """
    positions: list[int] = []
    columns: dict[str, list[Any]]
    if not ev.fields and (ev.accepts is None or ev.accepts.issuperset(form.columns)):
        # The row fields are the keyword arguments as they are: one list per column.
        positions = list(range(len(rows)))
        known = {} if shared is None else shared  # columns already read from these rows
        columns = {}
        for name in form.columns:
            column = known.get(name)
            if column is None:
                column = known[name] = [fields.get(name) for fields in rows]
            columns[name] = column
    else:
        columns = {name: [] for name in form.columns}
        for pos, fields in enumerate(rows):
            try:
                kwargs = ev.kwargs_for(fields)
            except Exception:
                continue
            positions.append(pos)
            for name in form.columns:
                columns[name].append(kwargs.get(name))
    out: list[Outcome | None] = [None] * len(rows)
    if not positions:
        return out
    with counting_cache(cache) as counting:
        start = time.perf_counter()
        scored = await _call(ev, form, positions, columns)
        elapsed = time.perf_counter() - start
    counts = counting.counts
    if counts is not None and any(counts):
        return out
    share = elapsed / max(1, len(scored))
    for pos, results in scored.items():
        out[pos] = (results, None, share, counts)
    return out


async def _call(
    ev: RunEvaluator, form: BatchForm, positions: list[int], columns: dict[str, list[Any]]
) -> dict[int, list[dict[str, Any]]]:
    """``{row position: results}`` of one batch call; ``{}`` when it fails. A cheap pure
    evaluator's failing call is split in halves, so one row that raises costs only its own
    per-row call."""
    try:
        value = form.method(**columns)
        if inspect.isawaitable(value):
            value = await value
    except Exception:
        if not ev.inline or len(positions) < 2:
            return {}
        half = len(positions) // 2
        left = await _call(ev, form, positions[:half], {k: v[:half] for k, v in columns.items()})
        right = await _call(ev, form, positions[half:], {k: v[half:] for k, v in columns.items()})
        return {**left, **right}
    if not isinstance(value, list) or len(value) != len(positions):
        return {}
    try:
        per_row = normalize_many(value, ev.name)
    except TypeError:
        return {}
    return dict(zip(positions, per_row, strict=True))
