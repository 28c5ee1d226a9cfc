"""``USER_INTERRUPTS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.voice import USER_INTERRUPTS_PROMPT

__all__ = ["USER_INTERRUPTS_PROMPT"]
