"""Plans that ask for batch runs, and the one pair of drivers that runs them.

A calibration, a cross-validation, a judge audit, a comparison with a head-to-head judge and a
sequential A/B comparison are *plans*: generators that yield :class:`BatchRun` steps (these rows,
these evaluators, these runner options) and receive each run's
:class:`~openevals.evaluation.result.EvaluationResult`. The plan is
written once; :func:`run_plan` runs its steps with :func:`~openevals.evaluation.evaluate`,
:func:`arun_plan` with :func:`~openevals.evaluation.aevaluate`, both on the drivers of
:mod:`openevals._drivers` (a failed run is thrown into the plan at its ``yield``; the plan is
always closed). Every plan therefore gets the runner's concurrency, judge cache, ``output=``
resume and progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from openevals._declare import async_entry

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = ["BatchRun", "Plan", "arun_plan", "async_plan_entry", "run_plan"]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class BatchRun:
    """One batch run a plan asks for: ``evaluate(rows, evaluators, **options)`` (see
    :func:`~openevals.evaluation.evaluate`)."""

    rows: Iterable[dict[str, Any]]
    evaluators: Any
    options: Mapping[str, Any] = field(default_factory=dict)


Plan = Generator[BatchRun, "EvaluationResult", T]


def run_plan(plan: Plan[T]) -> T:
    """Run every batch ``plan`` asks for with :func:`evaluate`; return the plan's value."""
    from openevals._drivers import drive
    from openevals.evaluation.runner import evaluate

    return drive(plan, lambda run: evaluate(run.rows, run.evaluators, **run.options))


async def arun_plan(plan: Plan[T]) -> T:
    """Async twin of :func:`run_plan` (the runs go through :func:`aevaluate`)."""
    from openevals._drivers import adrive
    from openevals.evaluation.runner import aevaluate

    return await adrive(plan, lambda run: aevaluate(run.rows, run.evaluators, **run.options))


def async_plan_entry(
    sync: Callable[P, T], plan: Callable[..., Plan[T]], *, doc: str
) -> Callable[P, Coroutine[Any, Any, T]]:
    """``a<name>``, the async twin of the run function ``sync``, whose body is
    ``run_plan(plan(...))`` with its arguments by name: it runs ``plan(**arguments)`` with
    :func:`arun_plan` (see :func:`openevals._declare.async_entry`)."""

    async def body(**arguments: Any) -> T:
        return await arun_plan(plan(**arguments))

    return async_entry(sync, body, name=f"a{sync.__name__}", doc=doc)
