"""``AGENT_TONE_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/conversation/agent_tone.txt``.
"""

from __future__ import annotations

from openevals.prompts.conversation import AGENT_TONE_PROMPT

__all__ = ["AGENT_TONE_PROMPT"]
