"""LLM-as-judge for code: extract the code from ``outputs``, then grade it with a judge prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from openevals._judge.core import JudgeCore
from openevals.code.base import (
    AsyncCodeEvaluator,
    CodeEvaluator,
    _create_async_base_code_evaluator,
    _create_base_code_evaluator,
)
from openevals.code.extraction import CodeExtractionStrategy
from openevals.llm import _async_scorer, _sync_scorer
from openevals.prompts.quality import (
    CODE_CORRECTNESS_PROMPT,
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
)
from openevals.types import FewShotExample

__all__ = [
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "create_async_code_llm_as_judge",
    "create_code_llm_as_judge",
]


def _judge_core(
    *,
    prompt: Any,
    feedback_key: str | None,
    judge: Any,
    model: str | None,
    system: str | None,
    continuous: bool,
    choices: Sequence[float] | None,
    use_reasoning: bool,
    few_shot_examples: Sequence[FewShotExample] | None,
    max_retries: int,
) -> JudgeCore:
    key = feedback_key or "code_correctness"
    return JudgeCore(
        prompt=prompt,
        feedback_key=key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        max_retries=max_retries,
        run_name="code_llm_as_judge",
    )


def create_code_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "code_correctness",
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    judge: Any = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    max_retries: int = 3,
) -> CodeEvaluator:
    """Grade code in ``outputs`` with an LLM judge (e.g. ``CODE_CORRECTNESS_PROMPT``).

    The code is first extracted (``code_extraction_strategy`` ``"none"``, ``"markdown_code_blocks"``
    or ``"llm"``, or a ``code_extractor`` callable); the extracted code is what ``{outputs}``
    renders. Failed extraction scores False with ``metadata={"code_extraction_failed": True}``
    without calling the judge.
    """
    core = _judge_core(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        max_retries=max_retries,
    )

    scorer = _sync_scorer(core)

    evaluator = _create_base_code_evaluator(
        scorer=scorer,
        code_extraction_strategy=code_extraction_strategy,
        code_extractor=code_extractor,
        # The judge doubles as the model of the ``llm`` extraction strategy.
        model=model,
        client=judge,
        run_name=core.run_name,
        feedback_key=core.feedback_key,
    )
    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator


def create_async_code_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "code_correctness",
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    judge: Any = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    max_retries: int = 3,
) -> AsyncCodeEvaluator:
    """Async twin of :func:`create_code_llm_as_judge`."""
    core = _judge_core(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        max_retries=max_retries,
    )

    scorer = _async_scorer(core)

    evaluator = _create_async_base_code_evaluator(
        scorer=scorer,
        code_extraction_strategy=code_extraction_strategy,
        code_extractor=code_extractor,
        # The judge doubles as the model of the ``llm`` extraction strategy.
        model=model,
        client=judge,
        run_name=core.run_name,
        feedback_key=core.feedback_key,
    )
    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator
