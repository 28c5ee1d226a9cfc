"""``PERCEIVED_ERROR_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import PERCEIVED_ERROR_PROMPT

__all__ = ["PERCEIVED_ERROR_PROMPT"]
