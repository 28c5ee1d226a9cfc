"""``TOXICITY_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.safety import TOXICITY_PROMPT

__all__ = ["TOXICITY_PROMPT"]
