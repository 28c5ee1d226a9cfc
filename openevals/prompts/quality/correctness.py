"""``CORRECTNESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import CORRECTNESS_PROMPT

__all__ = ["CORRECTNESS_PROMPT"]
