"""``LAZINESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import LAZINESS_PROMPT

__all__ = ["LAZINESS_PROMPT"]
