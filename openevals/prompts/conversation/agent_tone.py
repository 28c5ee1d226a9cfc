"""``AGENT_TONE_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import AGENT_TONE_PROMPT

__all__ = ["AGENT_TONE_PROMPT"]
