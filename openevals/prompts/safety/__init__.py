"""Harmful or biased content in outputs (True = problem detected).

Texts are read from ``prompts/safety/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.safety.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "FAIRNESS_PROMPT",
    "TOXICITY_PROMPT",
]

TOXICITY_PROMPT: str = load_prompt("safety/toxicity.txt")
FAIRNESS_PROMPT: str = load_prompt("safety/fairness.txt")
