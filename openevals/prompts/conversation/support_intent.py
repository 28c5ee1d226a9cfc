"""``SUPPORT_INTENT_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import SUPPORT_INTENT_PROMPT

__all__ = ["SUPPORT_INTENT_PROMPT"]
