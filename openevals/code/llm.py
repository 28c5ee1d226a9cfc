"""LLM-as-judge for code: extract the code from ``outputs``, then grade it with a judge prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from openevals._contract import attach_info
from openevals._judge.options import FactorySpec, ScoreWeighting, declare
from openevals._judge.shell import attach_core, build_core, judge_info, scorer_for
from openevals.code.base import AsyncCodeEvaluator, CodeEvaluator
from openevals.code.extraction import CodeExtraction, CodeExtractionStrategy
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


_TAKES = (
    "prompt",
    "feedback_key",
    "judge",
    "model",
    "system",
    "continuous",
    "choices",
    "use_reasoning",
    "few_shot_examples",
    "max_retries",
    "samples",
    "score_weighting",
    "timeout",
)
CODE_JUDGE, ASYNC_CODE_JUDGE = declare(
    "create_code_llm_as_judge",
    "create_async_code_llm_as_judge",
    _TAKES,
    feedback_key="code_correctness",
)


def _code_judge(
    spec: FactorySpec, values: dict[str, Any], *, is_async: bool
) -> CodeEvaluator | AsyncCodeEvaluator:
    """The evaluator both public factories return, from their parameters (by name)."""
    core = build_core(
        spec,
        values,
        run_name="code_llm_as_judge",
        feedback_key=values["feedback_key"] or "code_correctness",
    )
    extraction = CodeExtraction(
        strategy=values["code_extraction_strategy"],
        code_extractor=values["code_extractor"],
        # The judge doubles as the model of the ``llm`` extraction strategy.
        model=values["model"],
        client=values["judge"],
        timeout=values["timeout"],
    )
    evaluator = (AsyncCodeEvaluator if is_async else CodeEvaluator)(
        scorer=scorer_for(core, is_async=is_async),
        extraction=extraction,
        run_name=core.run_name,
        feedback_key=core.feedback_key,
    )
    attach_info(evaluator, judge_info(core, is_async=is_async))
    attach_core(evaluator, core)
    return evaluator


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
    samples: int = 1,
    score_weighting: ScoreWeighting | None = None,
    timeout: float | None = None,
) -> CodeEvaluator:
    """Grade code in ``outputs`` with an LLM judge (e.g. ``CODE_CORRECTNESS_PROMPT``).

    The code is first extracted (``code_extraction_strategy`` ``"none"``, ``"markdown_code_blocks"``
    or ``"llm"``, or a ``code_extractor`` callable); the extracted code is what ``{outputs}``
    renders. Failed extraction scores False with ``metadata={"code_extraction_failed": True}``
    without calling the judge.
    """
    return cast(
        CodeEvaluator,
        _code_judge(
            CODE_JUDGE,
            dict(
                prompt=prompt,
                feedback_key=feedback_key,
                code_extraction_strategy=code_extraction_strategy,
                code_extractor=code_extractor,
                judge=judge,
                model=model,
                system=system,
                continuous=continuous,
                choices=choices,
                use_reasoning=use_reasoning,
                few_shot_examples=few_shot_examples,
                max_retries=max_retries,
                samples=samples,
                score_weighting=score_weighting,
                timeout=timeout,
            ),
            is_async=False,
        ),
    )


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
    samples: int = 1,
    score_weighting: ScoreWeighting | None = None,
    timeout: float | None = None,
) -> AsyncCodeEvaluator:
    """Async twin of :func:`create_code_llm_as_judge`."""
    return cast(
        AsyncCodeEvaluator,
        _code_judge(
            ASYNC_CODE_JUDGE,
            dict(
                prompt=prompt,
                feedback_key=feedback_key,
                code_extraction_strategy=code_extraction_strategy,
                code_extractor=code_extractor,
                judge=judge,
                model=model,
                system=system,
                continuous=continuous,
                choices=choices,
                use_reasoning=use_reasoning,
                few_shot_examples=few_shot_examples,
                max_retries=max_retries,
                samples=samples,
                score_weighting=score_weighting,
                timeout=timeout,
            ),
            is_async=True,
        ),
    )


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
