"""``TOOL_SELECTION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.trajectory import TOOL_SELECTION_PROMPT

__all__ = ["TOOL_SELECTION_PROMPT"]
