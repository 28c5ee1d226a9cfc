"""The LLM judge that grades ``rubric`` keys of JSON match (one structured call per pair).

The judge is built like every other (:func:`openevals._judge.shell.build_core`, so its options
get the same checks, the sync/async rules included) and asked through the shell's
:func:`~openevals._judge.shell.ask` / :func:`~openevals._judge.shell.aask`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from openevals._judge.core import JudgeCore
from openevals._judge.options import FactorySpec
from openevals._judge.schema import SchemaSpec
from openevals._judge.shell import Ask, JudgeCall, aask, ask, build_core
from openevals._messages import to_json_text
from openevals._repr import show
from openevals._structure import encode_json
from openevals.json._scoring import _JsonMatchCore
from openevals.json._types import (
    AsyncRubricScorer,
    RubricRequest,
    RubricScorer,
    RubricVerdict,
    Score,
)


def _rubric_spec(keys: Sequence[str], use_reasoning: bool) -> SchemaSpec:
    """The structured answer for one element: a verdict per rubric key."""
    verdict: dict[str, Any] = (
        {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "score": {"type": "boolean"}},
            "required": ["reasoning", "score"],
            "additionalProperties": False,
        }
        if use_reasoning
        else {"type": "boolean"}
    )
    return SchemaSpec(
        name="structured_match_score",
        schema={
            "type": "object",
            "properties": {key: verdict for key in keys},
            "required": list(keys),
            "additionalProperties": False,
        },
        description="A verdict for every graded key.",
    )


def _value_text(value: Any, name: str) -> str:
    try:
        return to_json_text(value)
    except (RecursionError, ValueError):  # deep or cyclic: the iterative encoder names it
        return encode_json(value, name, sort_keys=False, ensure_ascii=False)


def _value_lines(values: Mapping[str, Any], side: str) -> str:
    return "\n".join(
        f"{key}: {_value_text(value, f'{side}[{show(key)}]')}" for key, value in values.items()
    )


def _rubric_messages(
    *, outputs: Any = None, reference_outputs: Any = None, criteria: Any = None, **_: Any
) -> list[dict[str, Any]]:
    from openevals.prompts.json import JSON_MATCH_SYSTEM_PROMPT, JSON_MATCH_USER_PROMPT

    rubric = "\n".join(f"Key: {key}, Criteria: {text}" for key, text in criteria.items())
    user = JSON_MATCH_USER_PROMPT.format(
        rubric=rubric,
        outputs=_value_lines(outputs, "outputs"),
        reference_outputs=_value_lines(reference_outputs, "reference_outputs")
        or "(no reference values)",
    )
    return [
        {"role": "system", "content": JSON_MATCH_SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


def _verdicts(answer: Mapping[str, Any], use_reasoning: bool) -> dict[str, RubricVerdict | Score]:
    out: dict[str, RubricVerdict | Score] = {}
    for key, value in answer.items():
        if use_reasoning and isinstance(value, Mapping):
            out[key] = cast(
                RubricVerdict, {"score": value.get("score"), "reasoning": value.get("reasoning")}
            )
        else:
            out[key] = value
    return out


# The options of the two JSON match factories that reach the rubric judge (the factories are
# not judge factories: not declared in the judge option table, their signatures are 0.2.2's).
_TAKES = ("judge", "model", "timeout")
RUBRIC_JUDGE = FactorySpec(
    "create_json_match_evaluator",
    _TAKES,
    async_twin="create_async_json_match_evaluator",
)
ASYNC_RUBRIC_JUDGE = FactorySpec(
    "create_async_json_match_evaluator",
    _TAKES,
    is_async=True,
    sync_twin="create_json_match_evaluator",
)


def _rubric_scorers(
    core: _JsonMatchCore, *, is_async: bool, timeout: float | None = None
) -> tuple[RubricScorer, AsyncRubricScorer, JudgeCore | None]:
    """The judge that grades rubric keys: one structured call per :class:`RubricRequest`, and
    its core (``None`` without a rubric).

    Each call covers all rubric keys of one element pair, with a schema built for those keys.
    Without a rubric the returned scorers are never called (and no judge is built).
    """
    if not core.rubric:
        if timeout is not None:
            raise ValueError(
                f"`timeout={show(timeout)}` bounds the requests of the rubric judge, but there "
                "is no `rubric`; pass a non-empty `rubric` or drop `timeout`"
            )

        def unused(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
            raise AssertionError("no rubric keys to grade")

        async def aunused(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
            raise AssertionError("no rubric keys to grade")

        return unused, aunused, None

    judge = build_core(
        ASYNC_RUBRIC_JUDGE if is_async else RUBRIC_JUDGE,
        {"judge": core.judge, "model": core.model, "timeout": timeout},
        run_name="json_match_rubric",
        prompt=_rubric_messages,
        feedback_key="json_match",
        output_schema=_rubric_spec(["__placeholder__"], core.use_reasoning).schema,
    )

    def step(request: RubricRequest) -> Ask:
        call = JudgeCall(
            outputs=dict(request.outputs),
            reference_outputs=dict(request.reference_outputs),
            extra={"criteria": dict(request.criteria)},
            spec=_rubric_spec(request.keys, core.use_reasoning),
        )
        return Ask((call,))

    def grade(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
        (outcome,) = ask(judge, step(request))
        return _verdicts(outcome.value, core.use_reasoning)

    async def agrade(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
        (outcome,) = await aask(judge, step(request))
        return _verdicts(outcome.value, core.use_reasoning)

    return grade, agrade, judge
