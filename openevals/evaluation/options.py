"""The options of ``evaluate`` / ``aevaluate`` and their validation.

:class:`RunOptions` validates everything but the data and the evaluators (see
:mod:`openevals.evaluation.evaluators`) before anything runs, so a bad argument fails at once with
a message naming it. Options that belong to one part are that part's object, checked when it is
made: the engine (:class:`~.engines.engine.LocalEngine`, :class:`~.engines.engine.RayEngine`),
the dataset-level metrics (:class:`~.batches.BatchMetrics`) and the budget
(:class:`~.pricing.Budget`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show
from openevals.evaluation.batches import BatchMetrics, batch_metrics_of
from openevals.evaluation.engines.engine import Engine, LocalEngine, as_engine, is_count
from openevals.evaluation.pricing import Budget, budget_of
from openevals.evaluation.trials import Trials, as_trials

__all__ = ["DEFAULT_CONCURRENCY", "RunOptions"]

DEFAULT_CONCURRENCY = 16


@dataclass(frozen=True)
class RunOptions:
    """Validated run options (the keyword arguments of :func:`~openevals.evaluation.evaluate`).

    Creating one validates everything; a bad value raises ``TypeError`` / ``ValueError`` naming
    the argument. ``engine``, ``batch_metrics`` and ``budget`` arrive as their objects (what
    :func:`~.engines.engine.as_engine`, :func:`~.batches.batch_metrics_of` and
    :func:`~.pricing.budget_of` make of the caller's values, checking them).
    """

    target: Callable[..., Any] | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    cache: Any = None
    group_by: str | None = None
    progress: Any = True
    output: str | os.PathLike[str] | None = None
    batch_metrics: BatchMetrics | None = None
    budget: Budget = field(default_factory=Budget)
    retry_errors: bool = False
    model: str | None = None
    systems: Any = None  # checked by openevals.evaluation.pairwise.Systems.parse
    engine: Engine = field(default_factory=LocalEngine)
    store: Any = None
    trials: Trials | None = None

    @classmethod
    def from_call(
        cls,
        *,
        trials: Any = None,
        batch_metrics: Any = None,
        budget: Any = None,
        engine: Any = "local",
        **options: Any,
    ) -> RunOptions:
        """The options of one ``evaluate`` / ``aevaluate`` call, from its keyword arguments (the
        one place both build them): ``trials``, ``batch_metrics``, ``budget`` and ``engine``
        made into their objects (checked in that order), then the rest checked as for
        :class:`RunOptions`."""
        repeat = as_trials(trials)
        return cls(
            batch_metrics=batch_metrics_of(batch_metrics),
            budget=budget_of(budget),
            engine=as_engine(engine),
            trials=repeat,
            **options,
        )

    def __post_init__(self) -> None:
        _check_store(self.store)
        if not is_count(self.concurrency):
            raise ValueError(f"concurrency must be an integer >= 1; got {show(self.concurrency)}")
        group_by = self.group_by
        if group_by is not None and (not isinstance(group_by, str) or not group_by):
            raise TypeError(f"group_by must be a field name (str) or None; got {show(group_by)}")
        if self.target is not None and not callable(self.target):
            raise TypeError(f"target must be a function or None; got {type(self.target).__name__}")
        if self.output is not None and not isinstance(self.output, (str, os.PathLike)):
            raise TypeError(f"output must be a file path or None; got {type(self.output).__name__}")

    def on_worker(self) -> RunOptions:
        """These options as a Ray worker runs them: locally, with the engine's timeout, no
        file, cache, progress or batch metrics (those stay on the driver) and no cost cap."""
        return RunOptions(
            target=self.target,
            concurrency=self.concurrency,
            group_by=self.group_by,
            progress=False,
            retry_errors=self.retry_errors,
            model=self.model,
            systems=self.systems,
            budget=Budget(prices=self.budget.prices),
            engine=LocalEngine(eval_timeout=self.engine.eval_timeout),
        )


def _check_store(store: Any) -> None:
    """``store=``: None/False (not recorded), True, a path or URL, or a run store object."""
    if store is None or isinstance(store, (bool, str, os.PathLike)):
        return
    from openevals.store.runs import RunStore

    if not isinstance(store, RunStore):
        raise TypeError(
            "store must be True (the default run store), a SQLite path, a postgresql:// URL, a "
            f"RunStore, or None; got {type(store).__name__}"
        )
