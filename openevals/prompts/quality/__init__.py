"""General output quality: correctness, conciseness, hallucination, relevance, code, plans, laziness.

Texts are read from ``prompts/quality/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.quality.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "ANSWER_RELEVANCE_PROMPT",
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "CONCISENESS_PROMPT",
    "CORRECTNESS_PROMPT",
    "HALLUCINATION_PROMPT",
    "LAZINESS_PROMPT",
    "PLAN_ADHERENCE_PROMPT",
]

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
