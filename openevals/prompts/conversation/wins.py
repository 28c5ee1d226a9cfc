"""``WINS_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/conversation/wins.txt``.
"""

from __future__ import annotations

from openevals.prompts.conversation import WINS_PROMPT

__all__ = ["WINS_PROMPT"]
