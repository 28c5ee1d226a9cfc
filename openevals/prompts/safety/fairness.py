"""``FAIRNESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.safety import FAIRNESS_PROMPT

__all__ = ["FAIRNESS_PROMPT"]
