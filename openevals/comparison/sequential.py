"""``sequential_compare``: an A/B run that stops as soon as the answer is settled.

The same rows go through a ``baseline`` and a ``candidate`` target, a batch at a time, and each
row's paired score difference feeds an anytime-valid confidence sequence
(:class:`openevals.trust.sequential.SequentialTest`). The run stops when the interval excludes 0
(the candidate is better or worse), when it is narrower than ``width``, or when the data (or
``max_rows``) runs out. Looking after every batch does not inflate the error rate: the chance of
ever declaring a difference where there is none stays at most ``alpha``.

Like ``calibrate``, the comparison is a plan (:mod:`openevals.evaluation.plans`: a generator
yielding batch runs) run by ``run_plan`` with :func:`~openevals.evaluation.evaluate`, or
``arun_plan`` with ``aevaluate``, so the runner's concurrency, judge cache and progress apply to
every batch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openevals._repr import show
from openevals.evaluation.plans import BatchRun, Plan, async_plan_entry, run_plan
from openevals.trust.sequential import SequentialTest

__all__ = ["SequentialComparison", "asequential_compare", "sequential_compare"]


@dataclass(frozen=True)
class SequentialComparison:
    """What :func:`sequential_compare` returns: the decision, the mean difference (candidate
    minus baseline) with its anytime-valid interval, and how many rows it took."""

    key: str
    decision: str
    estimate: float | None
    low: float
    high: float
    rows: int
    alpha: float
    width: float | None
    stopped_early: bool

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def __str__(self) -> str:
        est = "n/a" if self.estimate is None else f"{self.estimate:+.4f}"
        stop = "stopped early" if self.stopped_early else "ran every row"
        return (
            f"{self.key}: {self.decision} after {self.rows} rows ({stop}); difference {est}, "
            f"{round((1 - self.alpha) * 100)}% anytime-valid interval "
            f"[{self.low:+.4f}, {self.high:+.4f}]"
        )


def _score(row: dict[str, Any], key: str) -> float | None:
    from openevals.trust.labels import score_number

    for entry in (row.get("evaluations") or {}).values():
        if entry.get("status") != "success":
            continue
        for result in entry.get("results") or ():
            if result.get("key") == key:
                return score_number(result.get("score"))
    return None


def _plan(
    data: Any,
    evaluators: Any,
    *,
    key: Any,
    baseline: Any,
    candidate: Any,
    alpha: Any,
    width: Any,
    bounds: Any,
    batch_size: Any,
    max_rows: Any,
    run_options: dict[str, Any] | None,
) -> Plan[SequentialComparison]:
    """The plan of one call, its options checked first (each batch run gets ``run_options``,
    progress off)."""
    from openevals.data.rows import iter_rows

    test = SequentialTest(alpha=alpha, width=width, bounds=bounds)
    options = {"progress": False, **(run_options or {})}
    if not isinstance(key, str) or not key:
        raise TypeError(f"`key` must be the feedback key to compare (a str); got {show(key)}")
    for name, value in (("baseline", baseline), ("candidate", candidate)):
        if not callable(value):
            raise TypeError(
                f"`{name}` must be a target function (inputs -> outputs); got {show(value)}"
            )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be an int >= 1; got {show(batch_size)}")
    if max_rows is not None and (
        isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1
    ):
        raise ValueError(f"`max_rows` must be an int >= 1 or None; got {show(max_rows)}")
    unknown = sorted(set(options) - {"concurrency", "cache", "progress", "model"})
    if unknown:
        raise ValueError(f"`run_options` takes concurrency, cache, progress, model; got {unknown}")
    rows = iter_rows(data)
    seen = 0
    exhausted = False
    while test.decision == "undecided":
        take = batch_size if max_rows is None else min(batch_size, max_rows - seen)
        batch = [{**r.fields, "id": r.id} for r in itertools.islice(rows, max(take, 0))]
        if not batch:
            exhausted = True
            break
        seen += len(batch)
        base = yield BatchRun(batch, evaluators, {**options, "target": baseline})
        cand = yield BatchRun(batch, evaluators, {**options, "target": candidate})
        by_id = {str(r["id"]): _score(r, key) for r in base.rows}
        scored = [(by_id.get(str(row["id"])), _score(row, key)) for row in cand.rows]
        test.update([c - b for b, c in scored if b is not None and c is not None])
    return SequentialComparison(
        key=key,
        decision=test.decision,
        estimate=test.estimate,
        low=test.low,
        high=test.high,
        rows=test.n,
        alpha=test.alpha,
        width=test.width,
        stopped_early=not exhausted and (max_rows is None or seen < max_rows),
    )


def sequential_compare(
    data: Any,
    evaluators: Any,
    *,
    key: str,
    baseline: Callable[..., Any],
    candidate: Callable[..., Any],
    alpha: float = 0.05,
    width: float | None = None,
    bounds: tuple[float, float] = (0.0, 1.0),
    batch_size: int = 50,
    max_rows: int | None = None,
    run_options: dict[str, Any] | None = None,
) -> SequentialComparison:
    """Run ``baseline`` and ``candidate`` over ``data`` batch by batch until the difference in
    ``key`` is settled (see the module docstring).

    Args:
        data, evaluators: as for :func:`openevals.evaluate`; ``key`` is the feedback key compared.
        baseline, candidate: the two targets (``inputs -> outputs``).
        alpha: the error rate that holds under stopping at any batch.
        width: also stop once the interval is narrower than this (a difference of scores).
        bounds: the range of the key's scores (booleans: the default, 0 to 1).
        batch_size: rows per batch (the test looks after each).
        max_rows: stop after this many rows at most.
        run_options: ``concurrency``, ``cache``, ``progress`` (default off), ``model`` for each
            batch run.
    """
    plan = _plan(
        data,
        evaluators,
        key=key,
        baseline=baseline,
        candidate=candidate,
        alpha=alpha,
        width=width,
        bounds=bounds,
        batch_size=batch_size,
        max_rows=max_rows,
        run_options=run_options,
    )
    return run_plan(plan)


asequential_compare = async_plan_entry(
    sequential_compare,
    _plan,
    doc="Async twin of :func:`sequential_compare` (each batch runs through ``aevaluate``).",
)
