"""``TASK_COMPLETION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import TASK_COMPLETION_PROMPT

__all__ = ["TASK_COMPLETION_PROMPT"]
