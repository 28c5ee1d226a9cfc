"""LLM-as-judge for code: extract the code from ``outputs``, then grade it with a judge prompt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from openevals._contract import attach_info
from openevals._judge.declare import judge_factories
from openevals._judge.options import FactorySpec, JudgeOptions
from openevals._judge.shell import attach_core, build_core, judge_info, scorer_for
from openevals.code.base import AsyncCodeEvaluator, CodeEvaluator
from openevals.code.extraction import CodeExtraction, CodeExtractionStrategy
from openevals.prompts.quality import (
    CODE_CORRECTNESS_PROMPT,
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
)
from openevals.types import FewShotExample as FewShotExample  # bound here by 0.2.2

__all__ = [
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "create_async_code_llm_as_judge",
    "create_code_llm_as_judge",
]


@dataclass(frozen=True, kw_only=True)
class CodeJudgeOptions(JudgeOptions):
    """The code judge's options: the judge's, and how the code is extracted from ``outputs``."""

    feedback_key: str = "code_correctness"
    code_extraction_strategy: CodeExtractionStrategy = "none"
    code_extractor: Callable[[Any], str | None] | None = None

    def __post_init__(self) -> None:
        if not self.feedback_key:  # an empty key (or None) keeps the default, as before
            object.__setattr__(self, "feedback_key", "code_correctness")
        super().__post_init__()


def _code_judge(spec: FactorySpec, options: CodeJudgeOptions) -> CodeEvaluator | AsyncCodeEvaluator:
    """The evaluator both public factories return."""
    core = build_core(spec, options, run_name="code_llm_as_judge")
    extraction = CodeExtraction(
        strategy=options.code_extraction_strategy,
        code_extractor=options.code_extractor,
        # The judge doubles as the model of the ``llm`` extraction strategy.
        model=options.model,
        client=options.judge,
        timeout=options.timeout,
    )
    evaluator = (AsyncCodeEvaluator if spec.is_async else CodeEvaluator)(
        scorer=scorer_for(core, is_async=spec.is_async),
        extraction=extraction,
        run_name=core.run_name,
        feedback_key=core.feedback_key,
    )
    attach_info(evaluator, judge_info(core, is_async=spec.is_async))
    attach_core(evaluator, core)
    return evaluator


def _sync(evaluator: Any) -> CodeEvaluator:
    return cast(CodeEvaluator, evaluator)


def _async(evaluator: Any) -> AsyncCodeEvaluator:
    return cast(AsyncCodeEvaluator, evaluator)


create_code_llm_as_judge, create_async_code_llm_as_judge = judge_factories(
    "create_code_llm_as_judge",
    CodeJudgeOptions,
    _code_judge,
    (_sync, _async),
    order=(
        "prompt feedback_key code_extraction_strategy code_extractor judge model system "
        "continuous choices use_reasoning few_shot_examples max_retries samples score_weighting"
    ),
    leaves_out=("output_schema", "structured_output_kwargs"),
    async_annotations={"code_extractor": "Callable[[Any], Any] | None"},
    doc="""Grade code in ``outputs`` with an LLM judge (e.g. ``CODE_CORRECTNESS_PROMPT``).

The code is first extracted (``code_extraction_strategy`` ``"none"``, ``"markdown_code_blocks"``
or ``"llm"``, or a ``code_extractor`` callable); the extracted code is what ``{outputs}``
renders. Failed extraction scores False with ``metadata={"code_extraction_failed": True}``
without calling the judge.
""",
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
