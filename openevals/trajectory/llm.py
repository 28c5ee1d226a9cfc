"""LLM-as-judge over agent trajectories.

Trajectories (OpenAI dicts, LangChain messages or ``{"messages": [...]}``) are rendered as readable
transcripts (roles, tool calls with their arguments, tool results) and graded with the same judge
core as :func:`openevals.llm.create_llm_as_judge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openevals._judge.core import JudgeCore
from openevals._messages import chat_messages_to_string, normalize_to_openai_messages_list
from openevals.prompts.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from openevals.types import FewShotExample, SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator_untyped, _run_evaluator_untyped

__all__ = [
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "create_async_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
]


def _render(trajectory: Any, name: str) -> str:
    if trajectory is None:
        return ""
    if isinstance(trajectory, str):
        return trajectory
    try:
        return chat_messages_to_string(normalize_to_openai_messages_list(trajectory))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"`{name}` is not a trajectory of chat messages: {exc}") from None


def _call_kwargs(outputs: Any, reference_outputs: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    if outputs is None:
        raise ValueError("the trajectory judge needs `outputs` (the trajectory to grade); got None")
    return {
        "outputs": _render(outputs, "outputs"),
        "reference_outputs": _render(reference_outputs, "reference_outputs"),
        **kwargs,
    }


def _core(**options: Any) -> JudgeCore:
    return JudgeCore(**options)


def create_trajectory_llm_as_judge(
    *,
    prompt: Any = TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    model: str | None = None,
    feedback_key: str = "trajectory_accuracy",
    judge: Any = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    system: str | None = None,
    output_schema: Any = None,
    structured_output_kwargs: Mapping[str, Any] | None = None,
    max_retries: int = 3,
) -> SimpleEvaluator:
    """Grade an agent trajectory (``outputs``), optionally against ``reference_outputs``.

    Takes the same options as :func:`openevals.llm.create_llm_as_judge`; the default prompt is
    ``TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE`` (an absent reference renders as empty).
    """
    core = _core(
        prompt=prompt,
        model=model,
        feedback_key=feedback_key,
        judge=judge,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        system=system,
        output_schema=output_schema,
        structured_output_kwargs=structured_output_kwargs,
        max_retries=max_retries,
    )

    def scorer(*, inputs: Any = None, outputs: Any, reference_outputs: Any, **kw: Any) -> Any:
        return core.run_sync(inputs, outputs, reference_outputs, kw)

    def evaluator(
        *, outputs: Any = None, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> Any:
        return _run_evaluator_untyped(
            run_name=core.run_name,
            scorer=scorer,
            feedback_key=core.feedback_key,
            return_raw_outputs=core.raw_output,
            inputs=inputs,
            **_call_kwargs(outputs, reference_outputs, kwargs),
        )

    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator


def create_async_trajectory_llm_as_judge(
    *,
    prompt: Any = TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    model: str | None = None,
    feedback_key: str = "trajectory_accuracy",
    judge: Any = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    system: str | None = None,
    output_schema: Any = None,
    structured_output_kwargs: Mapping[str, Any] | None = None,
    max_retries: int = 3,
) -> SimpleAsyncEvaluator:
    """The async twin of :func:`create_trajectory_llm_as_judge`."""
    core = _core(
        prompt=prompt,
        model=model,
        feedback_key=feedback_key,
        judge=judge,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        system=system,
        output_schema=output_schema,
        structured_output_kwargs=structured_output_kwargs,
        max_retries=max_retries,
    )

    async def scorer(*, inputs: Any = None, outputs: Any, reference_outputs: Any, **kw: Any) -> Any:
        return await core.run_async(inputs, outputs, reference_outputs, kw)

    async def evaluator(
        *, outputs: Any = None, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> Any:
        return await _arun_evaluator_untyped(
            run_name=core.run_name,
            scorer=scorer,
            feedback_key=core.feedback_key,
            return_raw_outputs=core.raw_output,
            inputs=inputs,
            **_call_kwargs(outputs, reference_outputs, kwargs),
        )

    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator
