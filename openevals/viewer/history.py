"""Stored runs compared: :func:`diff` (``compare`` on two stored runs) and :func:`trend` (one key
across runs, each run tested against the one before it with ``compare``'s paired test).

Shared by ``openevals runs`` and ``openevals view``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from openevals._repr import show
from openevals.store.runs import RunStore, StoredRun

__all__ = ["TrendPoint", "diff", "trend", "trend_keys"]


def diff(store: RunStore, baseline: int | str, candidate: int | str, **options: Any) -> Any:
    """:func:`~openevals.comparison.paired.compare` on two stored runs (by id, tag or
    ``"latest"``); ``options`` are ``compare``'s keyword options (``keys``, ``alpha``, ...)."""
    from openevals.comparison.paired import compare
    from openevals.evaluation.reopen import load_run

    base, cand = store.run(baseline), store.run(candidate)
    for run in (base, cand):
        if run.kind == "compare":
            raise ValueError(f"run {run.id} is a comparison record; name two evaluation runs")
    compared = compare(load_run(base.id, store=store), load_run(cand.id, store=store), **options)
    return dataclasses.replace(compared, baseline=f"run {base.id}", candidate=f"run {cand.id}")


@dataclass(frozen=True)
class TrendPoint:
    """One run in a key's trend: its mean and interval, and the paired test against the run
    before it (``verdict`` is ``compare``'s: ``"regressed"``, ``"improved"``, ...)."""

    run: StoredRun
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    count: int
    verdict: str | None = None
    p_value: float | None = None
    difference: float | None = None

    @property
    def regressed(self) -> bool:
        return self.verdict == "regressed"


def _interval(agg: dict[str, Any]) -> tuple[float | None, float | None]:
    ci = agg.get("ci95")
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return ci[0], ci[1]
    return None, None


def trend_keys(store: RunStore, *, dataset: str | None = None) -> list[str]:
    """The feedback keys of the stored runs (newest runs first)."""
    keys: dict[str, None] = {}
    for run in store.runs(dataset=dataset):
        if run.kind != "compare":
            keys.update(dict.fromkeys(run.aggregates))
    return list(keys)


def trend(
    store: RunStore,
    key: str,
    *,
    dataset: str | None = None,
    last: int = 20,
    alpha: float = 0.05,
    paired: bool = True,
) -> list[TrendPoint]:
    """``key`` across the last ``last`` runs that scored it (oldest first). With ``paired``,
    each run is compared with the previous one on their shared rows and a significant fall is
    a regression (``verdict == "regressed"``)."""
    if not isinstance(key, str) or not key:
        raise TypeError(f"`key` must be a feedback key (str); got {show(key)}")
    runs = [
        run
        for run in store.runs(dataset=dataset, limit=max(last * 5, 50))
        if run.kind != "compare" and key in run.aggregates
    ][:last]
    runs.reverse()
    points: list[TrendPoint] = []
    for number, run in enumerate(runs):
        agg = run.aggregates[key]
        low, high = _interval(agg)
        verdict = p_value = difference = None
        if paired and number:
            try:
                compared = diff(store, runs[number - 1].id, run.id, keys=[key], alpha=alpha)
            except ValueError:  # no rows in common: nothing to test
                compared = None
            if compared is not None and compared.keys:
                item = compared.keys[0]
                verdict, p_value, difference = item.verdict, item.p_value, item.difference
        points.append(
            TrendPoint(
                run=run,
                mean=agg.get("mean"),
                ci_low=low,
                ci_high=high,
                count=int(agg.get("count") or 0),
                verdict=verdict,
                p_value=p_value,
                difference=difference,
            )
        )
    return points
