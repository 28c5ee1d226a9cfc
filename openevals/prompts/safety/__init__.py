"""Harmful or biased content in outputs (True = problem detected).

Read from ``prompts/safety/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

TOXICITY_PROMPT: str = load_prompt("safety/toxicity.txt")
FAIRNESS_PROMPT: str = load_prompt("safety/fairness.txt")

__all__ = prompt_names(globals())
