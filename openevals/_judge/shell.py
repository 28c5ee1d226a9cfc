"""Judge evaluators on the evaluator contract: one place builds every judge's sync/async shell.

:func:`build_core` turns a factory's arguments into a checked :class:`JudgeCore` (options from
:mod:`openevals._judge.options`, sync/async rules included); :func:`judge_evaluator` wraps it with
:func:`openevals._contract.make_evaluator` / ``make_async_evaluator`` and its
:class:`~openevals._contract.EvaluatorInfo`. :func:`judge_core` finds the core of an evaluator
again (for tests and for tuning a judge's retry policy); nothing else reads it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from openevals._contract import (
    EvaluatorInfo,
    Prepare,
    info_of,
    make_async_evaluator,
    make_evaluator,
)
from openevals._judge.core import JudgeCore
from openevals._judge.options import FactorySpec, check_async_use, judge_options
from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator

__all__ = [
    "async_judge_evaluator",
    "build_core",
    "judge_core",
    "judge_evaluator",
    "judge_info",
    "register_core",
    "scorer_for",
    "sync_judge_evaluator",
]

_CORES: weakref.WeakKeyDictionary[Any, JudgeCore] = weakref.WeakKeyDictionary()


def build_core(
    spec: FactorySpec,
    values: Mapping[str, Any],
    *,
    run_name: str | None = None,
    **fixed: Any,
) -> JudgeCore:
    """A checked :class:`JudgeCore` for one call of the factory ``spec`` describes.

    ``values`` are the factory's parameters (its ``locals()``); ``fixed`` the options the factory
    sets itself. Every check, the sync/async ones included, runs here, at creation.
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


def scorer_for(core: JudgeCore, *, is_async: bool) -> Callable[..., Any]:
    """The scorer ``(*, inputs, outputs, reference_outputs, **kw)`` that asks ``core``."""
    if is_async:

        async def ascorer(
            *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
        ) -> Any:
            return await core.run_async(inputs, outputs, reference_outputs, kw)

        return ascorer

    def scorer(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Any:
        return core.run_sync(inputs, outputs, reference_outputs, kw)

    return scorer


def register_core(evaluator: Any, core: JudgeCore) -> None:
    """Remember ``core`` as the judge of ``evaluator`` (see :func:`judge_core`)."""
    _CORES[evaluator] = core


def sync_judge_evaluator(
    core: JudgeCore, spec: FactorySpec, prepare: Prepare | None = None
) -> SimpleEvaluator:
    """:func:`judge_evaluator` of a sync factory."""
    return cast(SimpleEvaluator, judge_evaluator(core, spec, prepare))


def async_judge_evaluator(
    core: JudgeCore, spec: FactorySpec, prepare: Prepare | None = None
) -> SimpleAsyncEvaluator:
    """:func:`judge_evaluator` of an async factory."""
    return cast(SimpleAsyncEvaluator, judge_evaluator(core, spec, prepare))


def judge_evaluator(core: JudgeCore, spec: FactorySpec, prepare: Prepare | None = None) -> Any:
    """The evaluator of a factory ``spec``: ``core`` behind the contract's sync or async shell."""
    info = judge_info(core, is_async=spec.is_async)
    if not spec.is_async and core.owns_its_client:
        # A batch run awaits this twin on its event loop instead of holding a worker thread per
        # call (same core, same results; see EvaluatorInfo.twin).
        twin = make_async_evaluator(
            scorer_for(core, is_async=True), info.as_async(), prepare=prepare, raw=core.raw_output
        )
        register_core(twin, core)
        info = replace(info, twin=twin)
    scorer = scorer_for(core, is_async=spec.is_async)
    build = make_async_evaluator if spec.is_async else make_evaluator
    evaluator = build(scorer, info, prepare=prepare, raw=core.raw_output)
    register_core(evaluator, core)
    return evaluator


def judge_core(evaluator: Any) -> JudgeCore:
    """The :class:`JudgeCore` behind a judge evaluator of this package (tests, tuning)."""
    core = _CORES.get(evaluator)
    if core is None:
        info = info_of(evaluator)
        raise TypeError(
            f"{evaluator!r} is not an LLM-as-judge evaluator of this package"
            + (f" ({info.run_name})" if info is not None else "")
        )
    return core
