"""LLM-as-judge over agent trajectories.

Trajectories (OpenAI dicts, LangChain messages or ``{"messages": [...]}``) are rendered as readable
transcripts (roles, tool calls with their arguments, tool results) and graded with the same judge
core as :func:`openevals.llm.create_llm_as_judge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openevals._judge.options import ScoreWeighting, declare
from openevals._judge.shell import async_judge_evaluator, build_core, sync_judge_evaluator
from openevals._messages import chat_messages_to_string, normalize_to_openai_messages_list
from openevals.prompts.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from openevals.types import FewShotExample, SimpleAsyncEvaluator, SimpleEvaluator

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


def _render_trajectories(call: dict[str, Any]) -> dict[str, Any]:
    """Replace ``outputs`` / ``reference_outputs`` with readable transcripts."""
    if call.get("outputs") is None:
        raise ValueError("the trajectory judge needs `outputs` (the trajectory to grade); got None")
    return {
        **call,
        "outputs": _render(call["outputs"], "outputs"),
        "reference_outputs": _render(call.get("reference_outputs"), "reference_outputs"),
    }


TRAJECTORY_JUDGE, ASYNC_TRAJECTORY_JUDGE = declare(
    "create_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    prompt=TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    feedback_key="trajectory_accuracy",
)


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
    samples: int = 1,
    score_weighting: ScoreWeighting | None = None,
    timeout: float | None = None,
) -> SimpleEvaluator:
    """Grade an agent trajectory (``outputs``), optionally against ``reference_outputs``.

    Takes the same options as :func:`openevals.llm.create_llm_as_judge` (``samples`` and
    ``score_weighting`` included); the default prompt is
    ``TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE`` (an absent reference renders as empty).
    """
    core = build_core(
        TRAJECTORY_JUDGE,
        dict(
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
            samples=samples,
            score_weighting=score_weighting,
            timeout=timeout,
        ),
    )
    return sync_judge_evaluator(core, TRAJECTORY_JUDGE, _render_trajectories)


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
    samples: int = 1,
    score_weighting: ScoreWeighting | None = None,
    timeout: float | None = None,
) -> SimpleAsyncEvaluator:
    """The async twin of :func:`create_trajectory_llm_as_judge`."""
    core = build_core(
        ASYNC_TRAJECTORY_JUDGE,
        dict(
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
            samples=samples,
            score_weighting=score_weighting,
            timeout=timeout,
        ),
    )
    return async_judge_evaluator(core, ASYNC_TRAJECTORY_JUDGE, _render_trajectories)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
