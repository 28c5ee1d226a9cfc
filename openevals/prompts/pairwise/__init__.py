"""Which of two outputs is better (for :func:`openevals.llm.create_pairwise_llm_as_judge`).

Texts are read from ``prompts/pairwise/`` when this package is imported. Each template takes
``{inputs}``, ``{output_a}``, ``{output_b}``, and the optional ``{reference_outputs}`` and
``{criteria}`` (rendered as an empty string when not given)."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

PAIRWISE_PREFERENCE_PROMPT: str = load_prompt("pairwise/preference.txt")
PAIRWISE_HELPFULNESS_PROMPT: str = load_prompt("pairwise/helpfulness.txt")
PAIRWISE_CORRECTNESS_PROMPT: str = load_prompt("pairwise/correctness.txt")

__all__ = prompt_names(globals())
