"""``WINS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import WINS_PROMPT

__all__ = ["WINS_PROMPT"]
