"""The one judge shell: how every judge family becomes a sync or async evaluator.

Every family that asks a judge (the generic judge in ``llm.py``, the trajectory, pairwise, code
and RAG judges, the JSON rubric) is built from a checked
:class:`~openevals._judge.core.JudgeCore` (:func:`build_core`, every option and sync/async rule
checked once, at creation) and the family's **flow**: a generator function called with the
evaluator's keyword arguments that yields :class:`Ask` steps (one or more :class:`JudgeCall`),
receives their :class:`~openevals._judge.steps.Outcome` list and returns what the scorer hands to
the evaluator contract. A flow that needs other I/O between judge calls (the RAG metrics'
embeddings) yields its own steps and passes :class:`Steps` that perform them.
:func:`judge_evaluator` runs the flow with :func:`openevals._drivers.drive` (judge calls one
after the other) or :func:`~openevals._drivers.adrive` (concurrently) behind the contract's
shells, with the :class:`~openevals._contract.EvaluatorInfo` of :func:`judge_info`.

In-package API (a new judge family, e.g. a multi-criteria rubric judge, uses exactly this; the
public factories are derived by :func:`openevals._judge.declare.judge_factories`)::

    def _x(spec, options):                            # preparation and result mapping
        core = build_core(spec, options, run_name="x")

        def flow(*, inputs=None, outputs=None, **kw):
            outcomes = yield Ask((JudgeCall(inputs, outputs, None, kw, spec=X_SCHEMA),))
            return to_results(outcomes[0])

        return judge_evaluator(core, is_async=spec.is_async, flow=flow, raw=True)

    create_x, create_async_x = judge_factories(
        "create_x", JudgeOptions, _x, EVALUATORS, order=JUDGE_ORDER, prompt=X_PROMPT, doc="..."
    )
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from openevals._contract import (
    EvaluatorInfo,
    Prepare,
    info_of,
    make_async_evaluator,
)
from openevals._declare import evaluator_for
from openevals._drivers import adrive, drive
from openevals._judge.core import JudgeCore, gather_all
from openevals._judge.options import FactorySpec, ModelOptions, check_async_use, judge_options
from openevals._judge.steps import JudgeCall as JudgeCall
from openevals._judge.steps import Outcome
from openevals._repr import show

#: The attribute of a judge evaluator that carries its core (see :func:`judge_core`).
CORE_ATTRIBUTE = "openevals_judge_core"


@dataclass(frozen=True)
class Ask:
    """Flow step: ask the judge these calls; the flow receives their outcomes, in order.

    A sync evaluator makes them one after the other, an async one concurrently (the first
    failure cancels the others and is raised into the flow).
    """

    calls: tuple[JudgeCall, ...]


@dataclass(frozen=True)
class Steps:
    """How a family performs its own flow steps (anything but :class:`Ask`)."""

    sync: Callable[[Any], Any]
    asynchronous: Callable[[Any], Awaitable[Any]]


Flow = Callable[..., Generator[Any, Any, Any]]


def build_core(
    spec: FactorySpec,
    values: Mapping[str, Any] | ModelOptions,
    *,
    run_name: str | None = None,
    **fixed: Any,
) -> JudgeCore:
    """A checked :class:`JudgeCore` for one call of the factory ``spec`` describes.

    ``values`` are the factory's options (its options object, or its parameters by name);
    ``fixed`` the options the factory sets itself. Every check, the sync/async ones included,
    runs here, at creation.
    """
    core = JudgeCore(judge_options(spec, values, **fixed), run_name=run_name)
    check_async_use(spec, async_prompt=core.is_async_prompt, async_client=core.has_async_client)
    return core


def judge_info(
    core: JudgeCore,
    *,
    is_async: bool,
    run_name: str | None = None,
    feedback_keys: tuple[str, ...] | None = None,
) -> EvaluatorInfo:
    """The contract description of a judge evaluator."""
    spec = core.spec
    score_type = spec.score_type if spec.kind == "score" else None
    return EvaluatorInfo(
        run_name=run_name or core.run_name,
        feedback_keys=feedback_keys if feedback_keys is not None else (core.feedback_key,),
        model=core.model_label,
        pure=False,
        judge=True,
        is_async=is_async,
        score_type=score_type,
        choices=tuple(spec.choices) if score_type == "choices" else (),
    )


def single_call(core: JudgeCore) -> Flow:
    """The flow of a judge that asks once: the call's arguments go to the prompt as they are,
    and the outcome becomes ``(score, comment, metadata)`` (or the structured answer)."""

    def flow(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Generator[Any, Any, Any]:
        (outcome,) = yield Ask((JudgeCall(inputs, outputs, reference_outputs, kw),))
        return core.to_scorer_value(outcome)

    return flow


# --------------------------------------------------------------------------- running a flow


def ask(core: JudgeCore, step: Ask) -> list[Outcome]:
    """Perform ``step`` with blocking calls, one after the other."""
    return [core.ask_sync(call) for call in step.calls]


async def aask(core: JudgeCore, step: Ask) -> list[Outcome]:
    """Perform ``step`` with concurrent calls; the first failure cancels the others."""
    return await gather_all([core.ask_async(call) for call in step.calls])


def scorer_for(
    core: JudgeCore,
    *,
    is_async: bool,
    flow: Flow | None = None,
    steps: Steps | None = None,
) -> Callable[..., Any]:
    """The scorer that runs ``flow`` (default :func:`single_call`) with ``core``'s judge."""
    make_flow = flow if flow is not None else single_call(core)

    def unknown(step: Any) -> Any:
        raise TypeError(f"a judge flow yielded {type(step).__name__}, which no step performs")

    other = unknown if steps is None else steps.asynchronous if is_async else steps.sync
    judge_step: Callable[[JudgeCore, Ask], Any] = aask if is_async else ask

    def perform(step: Any) -> Any:
        """A judge call (awaitable when async), or the family's own step."""
        return judge_step(core, step) if isinstance(step, Ask) else other(step)

    if is_async:

        async def ascorer(**kw: Any) -> Any:
            return await adrive(make_flow(**kw), perform)

        return ascorer

    def scorer(**kw: Any) -> Any:
        return drive(make_flow(**kw), perform)

    return scorer


# --------------------------------------------------------------------------- evaluators


def judge_evaluator(
    core: JudgeCore,
    *,
    is_async: bool,
    flow: Flow | None = None,
    steps: Steps | None = None,
    prepare: Prepare | None = None,
    run_name: str | None = None,
    feedback_keys: tuple[str, ...] | None = None,
    raw: bool | None = None,
    **make_options: Any,
) -> Any:
    """The evaluator of a judge family: ``flow`` (default: :func:`single_call`) run with
    ``core`` behind the contract's sync or async shell.

    ``prepare`` checks and transforms the call's arguments before the flow sees them; ``raw``
    (default: the core's, true for structured answers) returns the scorer's value as the result;
    ``make_options`` go to ``make_evaluator`` (``name``, ``signature``, ``passes``...). A sync
    evaluator whose judge owns its client (a model string and a template prompt) gets an async
    twin (:attr:`EvaluatorInfo.twin`) that a batch run awaits on its loop instead of holding a
    worker thread per call: the same flow and core, so the same results.
    """
    info = judge_info(core, is_async=is_async, run_name=run_name, feedback_keys=feedback_keys)
    raw = core.raw_output if raw is None else raw
    if not is_async and core.owns_its_client:
        twin = make_async_evaluator(
            scorer_for(core, is_async=True, flow=flow, steps=steps),
            info.as_async(),
            prepare=prepare,
            raw=raw,
            **make_options,
        )
        attach_core(twin, core)
        info = replace(info, twin=twin)
    scorer = scorer_for(core, is_async=is_async, flow=flow, steps=steps)
    evaluator = evaluator_for(is_async, scorer, info, prepare=prepare, raw=raw, **make_options)
    attach_core(evaluator, core)
    return evaluator


def attach_core(evaluator: Any, core: JudgeCore) -> None:
    """Carry ``core`` on the evaluator object (see :func:`judge_core`)."""
    setattr(evaluator, CORE_ATTRIBUTE, core)


def judge_core(evaluator: Any) -> JudgeCore:
    """The :class:`JudgeCore` behind a judge evaluator of this package (tests, tuning)."""
    core = getattr(evaluator, CORE_ATTRIBUTE, None)
    if not isinstance(core, JudgeCore):
        info = info_of(evaluator)
        raise TypeError(
            f"{show(evaluator)} is not an LLM-as-judge evaluator of this package"
            + (f" ({info.run_name})" if info is not None else "")
        )
    return core
