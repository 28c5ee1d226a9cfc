"""LLM-as-judge over agent trajectories.

Trajectories (OpenAI dicts, LangChain messages or ``{"messages": [...]}``) are rendered as readable
transcripts (roles, tool calls with their arguments, tool results) and graded with the same judge
core as :func:`openevals.llm.create_llm_as_judge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.options import TRAJECTORY_ORDER, FactorySpec, JudgeOptions
from openevals._judge.shell import build_core, judge_evaluator
from openevals._messages import chat_messages_to_string, normalize_to_openai_messages_list
from openevals.prompts.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from openevals.types import FewShotExample as FewShotExample  # bound here by 0.2.2
from openevals.types import SimpleAsyncEvaluator as SimpleAsyncEvaluator
from openevals.types import SimpleEvaluator as SimpleEvaluator

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


def _trajectory_judge(spec: FactorySpec, options: JudgeOptions) -> object:
    """The evaluator both public factories return."""
    core = build_core(spec, options)
    return judge_evaluator(core, is_async=spec.is_async, prepare=_render_trajectories)


create_trajectory_llm_as_judge, create_async_trajectory_llm_as_judge = judge_factories(
    "create_trajectory_llm_as_judge",
    JudgeOptions,
    _trajectory_judge,
    EVALUATORS,
    order=TRAJECTORY_ORDER,
    prompt=TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    feedback_key="trajectory_accuracy",
    doc="""Grade an agent trajectory (``outputs``), optionally against ``reference_outputs``.

Takes the same options as :func:`openevals.llm.create_llm_as_judge` (``samples`` and
``score_weighting`` included); the default prompt is
``TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE`` (an absent reference renders as empty).
""",
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
