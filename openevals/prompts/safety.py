"""Harmful or biased content in outputs (True = problem detected).

Texts are read from ``prompts/safety/`` when this module is imported."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "FAIRNESS_PROMPT",
    "TOXICITY_PROMPT",
]

TOXICITY_PROMPT: str = load_prompt("safety/toxicity.txt")
FAIRNESS_PROMPT: str = load_prompt("safety/fairness.txt")
