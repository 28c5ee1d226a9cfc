"""``VOCAL_AFFECT_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.voice import VOCAL_AFFECT_PROMPT

__all__ = ["VOCAL_AFFECT_PROMPT"]
