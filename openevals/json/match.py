"""Compare structured outputs (a dict, or a list of dicts) with reference outputs key by key.

Each key of a dict scores 1 when both sides hold equal values, else 0 (``rubric`` keys are graded
by an LLM judge instead). Lists of dicts are first paired by ``list_match_mode``
(``same_elements``, ``subset``, ``superset``: an optimal, order-independent assignment;
``ordered``: by position), then each pair is scored. ``aggregator`` and ``list_aggregator``
combine the key and element scores; the evaluator always returns a list of results (run name
``json_match_evaluator``). Optimal pairing is bounded by :data:`MAX_PAIRS` candidate pairs
(``ValueError`` beyond it). The full rules (tie-breaking, empty inputs, score types, errors) are
in ``docs/json.md``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from openevals._contract import EvaluatorInfo
from openevals._declare import async_twin, evaluator_for
from openevals._judge.shell import attach_core
from openevals.json._assign import MAX_PAIRS
from openevals.json._rubric import _rubric_scorers
from openevals.json._scoring import _KEY_PREFIX, _build_core, _JsonMatchCore
from openevals.json._types import (
    EMPTY_RECORD_KEY,
    Aggregator,
    AsyncJsonMatchEvaluator,
    AsyncRubricScorer,
    JsonMatchEvaluator,
    ListMatchMode,
    RubricRequest,
    RubricScorer,
    RubricVerdict,
)
from openevals.prompts.json import SYSTEM_PROMPT, USER_PROMPT
from openevals.utils import _traced_run_id

__all__ = [
    "EMPTY_RECORD_KEY",
    "MAX_PAIRS",
    "SYSTEM_PROMPT",
    "USER_PROMPT",
    "AsyncJsonMatchEvaluator",
    "AsyncRubricScorer",
    "JsonMatchEvaluator",
    "RubricRequest",
    "RubricScorer",
    "RubricVerdict",
    "create_async_json_match_evaluator",
    "create_json_match_evaluator",
]


_RUN_NAME = "json_match_evaluator"


# --------------------------------------------------------------------------- shells


def _shell(scorer: Any, core: _JsonMatchCore, *, is_async: bool) -> Any:
    """The evaluator of ``scorer``. Its info: deterministic, but pairing long lists is not cheap
    (never pure); a judge with a rubric."""
    keys = (f"{_KEY_PREFIX}:{core.aggregator}",) if core.aggregator is not None else ()
    model = _model_label(core) if core.rubric else None
    info = EvaluatorInfo(
        run_name=_RUN_NAME, feedback_keys=keys, model=model, judge=bool(core.rubric)
    )
    return evaluator_for(is_async, scorer, info, passes=_PASSES, returns=_RETURNS, module=__name__)


def _model_label(core: _JsonMatchCore) -> str | None:
    """The rubric judge's model name: the ``model`` string without its provider, else the
    judge object's ``model_name`` (LangChain chat models), else unknown."""
    if isinstance(core.model, str) and core.model:
        return core.model.split(":", 1)[-1]
    name = getattr(core.judge, "model_name", None)
    return name if isinstance(name, str) and name else None


_PASSES = ("inputs", "outputs", "reference_outputs")
_RETURNS = "list[EvaluatorResult]"


def _sync_evaluator(core: _JsonMatchCore, grade: RubricScorer) -> JsonMatchEvaluator:
    def scorer(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
        plan = core.plan(outputs, reference_outputs)
        verdicts = [grade(request) for request in plan.requests]
        return core.finish(plan, verdicts, _traced_run_id())

    return cast(JsonMatchEvaluator, _shell(scorer, core, is_async=False))


def _async_evaluator(core: _JsonMatchCore, agrade: AsyncRubricScorer) -> AsyncJsonMatchEvaluator:
    async def scorer(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
        plan = core.plan(outputs, reference_outputs)
        verdicts = await asyncio.gather(*map(agrade, plan.requests))
        return core.finish(plan, verdicts, _traced_run_id())

    return cast(AsyncJsonMatchEvaluator, _shell(scorer, core, is_async=True))


def create_json_match_evaluator(
    *,
    aggregator: Aggregator | None = None,
    list_aggregator: Aggregator = "all",
    rubric: dict[str, str] | None = None,
    exclude_keys: list[str] | None = None,
    judge: Any = None,
    model: str | None = None,
    use_reasoning: bool = True,
    list_match_mode: ListMatchMode = "same_elements",
    timeout: float | None = None,
) -> JsonMatchEvaluator:
    """Create an evaluator comparing a dict (or list of dicts) with the reference key by key.

    Args:
        aggregator: ``None`` for one result per key, ``"average"`` for the mean of the key
            scores, ``"all"`` for 1 only when every key scores 1.
        list_aggregator: how per-element scores of list inputs are combined: ``"all"`` (1 only
            when every element scores 1) or ``"average"``.
        rubric: key -> criteria; these keys are graded by an LLM judge instead of equality.
        exclude_keys: keys ignored everywhere (scoring and list pairing).
        judge: a chat model or OpenAI-style client grading ``rubric`` keys.
        model: a ``"provider:model"`` string used when no ``judge`` is given.
        use_reasoning: ask the judge for reasoning on rubric keys (kept as the comment).
        list_match_mode: ``"same_elements"``, ``"subset"``, ``"superset"`` or ``"ordered"``;
            see docs/json.md.
        timeout: seconds each request to the rubric judge may take (as for
            ``create_llm_as_judge``).

    Returns:
        ``evaluator(*, outputs, reference_outputs, **kwargs) -> list[EvaluatorResult]``.

    Raises:
        ValueError: unknown option values, a rubric without judge/model, or judge/model
            without a rubric.
        TypeError: ``rubric`` or ``exclude_keys`` of the wrong shape.
    """
    core = _build_core(
        aggregator=aggregator,
        list_aggregator=list_aggregator,
        rubric=rubric,
        exclude_keys=exclude_keys,
        judge=judge,
        model=model,
        use_reasoning=use_reasoning,
        list_match_mode=list_match_mode,
    )
    return cast(JsonMatchEvaluator, _evaluator(core, timeout, is_async=False))


def _evaluator(core: _JsonMatchCore, timeout: float | None, *, is_async: bool) -> Any:
    """The sync or async evaluator of ``core``; a rubric's judge core attached."""
    grade, agrade, judge_core = _rubric_scorers(core, is_async=is_async, timeout=timeout)
    evaluator = _async_evaluator(core, agrade) if is_async else _sync_evaluator(core, grade)
    if judge_core is not None:
        attach_core(evaluator, judge_core)
    return evaluator


def _twin(options: dict[str, Any]) -> AsyncJsonMatchEvaluator:
    timeout = options.pop("timeout")  # the twin's own bound options: the rest build the core
    return cast(AsyncJsonMatchEvaluator, _evaluator(_build_core(**options), timeout, is_async=True))


create_async_json_match_evaluator = async_twin(
    create_json_match_evaluator,
    _twin,
    returns="AsyncJsonMatchEvaluator",
    note="rubric batches are graded concurrently",
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
