"""``EXPLICIT_CONTENT_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.image import EXPLICIT_CONTENT_PROMPT

__all__ = ["EXPLICIT_CONTENT_PROMPT"]
