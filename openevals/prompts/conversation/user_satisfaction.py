"""``USER_SATISFACTION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import USER_SATISFACTION_PROMPT

__all__ = ["USER_SATISFACTION_PROMPT"]
