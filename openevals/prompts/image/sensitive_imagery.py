"""``SENSITIVE_IMAGERY_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.image import SENSITIVE_IMAGERY_PROMPT

__all__ = ["SENSITIVE_IMAGERY_PROMPT"]
