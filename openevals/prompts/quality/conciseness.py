"""``CONCISENESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import CONCISENESS_PROMPT

__all__ = ["CONCISENESS_PROMPT"]
