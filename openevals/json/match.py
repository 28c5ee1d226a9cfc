"""Compare structured outputs (a dict, or a list of dicts) with reference outputs key by key.

Scoring
-------
* **dict vs dict** — every key of either side (minus ``exclude_keys``) gets a score: ``0`` when
  the key is present on one side only, otherwise ``1`` if the values are equal under Python
  equality (``1 == 1.0`` counts as equal, nested values are compared whole) and ``0`` if not.
  Keys listed in ``rubric`` are graded by an LLM judge instead (``0`` without a call when the
  key is missing from ``outputs``).
* **list vs list** — the elements are first paired, then each pair is scored as above:

  ============== ===================================================================
  mode           pairing / what counts
  ============== ===================================================================
  same_elements  optimal pairing; unpaired elements on both sides score 0
  subset         optimal pairing; unpaired outputs score 0, unpaired references are
                 ignored (the outputs must be a subset of the references)
  superset       optimal pairing; unpaired references score 0, unpaired outputs are
                 ignored (the outputs must be a superset of the references)
  ordered        element ``i`` pairs with element ``i``; extras on either side score 0
  ============== ===================================================================

  The optimal pairing is a maximum-weight assignment: it maximises the number of equal
  values over all pairs (excluded and rubric keys do not count) and, among pairings that tie,
  minimises the number of keys that differ. Identical elements (every compared key present on
  both and equal) are paired with each other first, which some optimal pairing always does;
  without a ``rubric`` this keeps long lists that mostly agree fast. Ties that remain are
  broken on a canonical ordering of the elements, so the scores never depend on the order of
  either list. Every key of an unpaired element that counts scores 0; an unpaired element
  without keys (``{}``, or only excluded keys) is reported under the key
  ``__openevals_empty_record`` with score 0.

  Size limit: after identical elements are paired, at most ``MAX_PAIRS`` = 25,000,000
  candidate pairs remain to be solved (e.g. 5,000 differing outputs x 5,000 references; two
  10,000-record lists that differ in half their records fit). Beyond that the evaluator raises
  ``ValueError``; ``list_match_mode="ordered"`` has no limit.

Aggregation and result keys
---------------------------
The evaluator always returns a **list** of results (run name ``json_match_evaluator``).

* ``aggregator=None`` — one result per key, ``json_match:{key}``, sorted by key. For lists, a
  key's scores over the element pairs are combined with ``list_aggregator``: ``"all"`` gives 1
  when every pair scores 1 for that key, else 0; ``"average"`` gives their mean. A pair in
  which the key appears on neither side does not count for that key.
* ``aggregator="average"`` / ``"all"`` — one result, ``json_match:average`` /
  ``json_match:all``: the aggregator combines the keys of each element pair, then (for lists)
  ``list_aggregator`` combines the element scores.

Score types: an exact per-key score is the int ``0`` or ``1``; an ``"all"`` aggregate is the int
``0`` or ``1``; an ``"average"`` aggregate is a float. Rubric scores from the judge are kept as
returned (booleans count as 0/1 in aggregates).

Empty inputs
------------
``{}`` vs ``{}`` and ``[]`` vs ``[]`` are identical values: with an aggregator they score 1
(``json_match:average`` = 1.0, ``json_match:all`` = 1), and without one there are no keys, so
the result list is empty. The same holds for a pair of elements with no (non-excluded) keys and
for a list mode in which no element counts (``[]`` outputs in ``subset`` mode: an empty list is a
subset of anything).

Errors
------
``None`` for ``outputs`` or ``reference_outputs`` and a list compared with a dict raise
``ValueError``; anything that is neither a dict nor a list of dicts raises ``TypeError`` naming
the parameter. Values of any nesting depth are compared; a value that contains itself (a cycle)
raises ``ValueError`` naming the parameter and the path wherever it must be read. Invalid
factory options raise ``ValueError`` at creation time. The inputs are never modified.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from openevals._contract import EvaluatorInfo, make_async_evaluator, make_evaluator
from openevals._judge.shell import attach_core
from openevals.json._pairing import MAX_PAIRS
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


def _info(core: _JsonMatchCore, *, is_async: bool) -> EvaluatorInfo:
    """Deterministic, but pairing long lists is not cheap (never pure); a judge with a rubric."""
    keys = (f"{_KEY_PREFIX}:{core.aggregator}",) if core.aggregator is not None else ()
    return EvaluatorInfo(
        run_name=_RUN_NAME,
        feedback_keys=keys,
        model=_model_label(core) if core.rubric else None,
        judge=bool(core.rubric),
        is_async=is_async,
    )


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
        return core.finish(plan, [grade(request) for request in plan.requests])

    evaluator = make_evaluator(
        scorer, _info(core, is_async=False), passes=_PASSES, returns=_RETURNS, module=__name__
    )
    return cast(JsonMatchEvaluator, evaluator)


def _async_evaluator(core: _JsonMatchCore, agrade: AsyncRubricScorer) -> AsyncJsonMatchEvaluator:
    async def scorer(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
        plan = core.plan(outputs, reference_outputs)
        return core.finish(plan, await asyncio.gather(*map(agrade, plan.requests)))

    evaluator = make_async_evaluator(
        scorer, _info(core, is_async=True), passes=_PASSES, returns=_RETURNS, module=__name__
    )
    return cast(AsyncJsonMatchEvaluator, evaluator)


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
            see the module documentation.
        timeout: seconds each request to the rubric judge may take (as for
            ``create_llm_as_judge``).

    Returns:
        ``evaluator(*, outputs, reference_outputs, **kwargs) -> list[EvaluatorResult]``.

    Raises:
        ValueError: unknown option values, a rubric without judge/model, or judge/model
            without a rubric.
        TypeError: ``rubric`` or ``exclude_keys`` of the wrong shape.
    """
    options = {k: v for k, v in locals().items() if k != "timeout"}
    core = _build_core(**options)  # the eight options, by name
    grade, _, judge_core = _rubric_scorers(core, is_async=False, timeout=timeout)
    evaluator = _sync_evaluator(core, grade)
    if judge_core is not None:
        attach_core(evaluator, judge_core)
    return evaluator


def create_async_json_match_evaluator(
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
) -> AsyncJsonMatchEvaluator:
    """Async twin of :func:`create_json_match_evaluator` (rubric batches are graded
    concurrently)."""
    options = {k: v for k, v in locals().items() if k != "timeout"}
    core = _build_core(**options)  # the eight options, by name
    _, agrade, judge_core = _rubric_scorers(core, is_async=True, timeout=timeout)
    evaluator = _async_evaluator(core, agrade)
    if judge_core is not None:
        attach_core(evaluator, judge_core)
    return evaluator
