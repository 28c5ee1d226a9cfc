"""``PROMPT_INJECTION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.security import PROMPT_INJECTION_PROMPT

__all__ = ["PROMPT_INJECTION_PROMPT"]
