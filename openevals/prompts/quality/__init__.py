"""General output quality: correctness, conciseness, hallucination, relevance, code, plans, laziness,
and a multi-criteria rubric.

Read from ``prompts/quality/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

CORRECTNESS_PROMPT: str = load_prompt("quality/correctness.txt")
CONCISENESS_PROMPT: str = load_prompt("quality/conciseness.txt")
HALLUCINATION_PROMPT: str = load_prompt("quality/hallucination.txt")
ANSWER_RELEVANCE_PROMPT: str = load_prompt("quality/answer_relevance.txt")
CODE_CORRECTNESS_PROMPT: str = load_prompt("quality/code_correctness.txt")
CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS: str = load_prompt(
    "quality/code_correctness_with_reference.txt"
)
PLAN_ADHERENCE_PROMPT: str = load_prompt("quality/plan_adherence.txt")
LAZINESS_PROMPT: str = load_prompt("quality/laziness.txt")
RUBRIC_PROMPT: str = load_prompt("quality/rubric.txt")

__all__ = prompt_names(globals())
