"""``TASK_COMPLETION_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/conversation/task_completion.txt``.
"""

from __future__ import annotations

from openevals.prompts.conversation import TASK_COMPLETION_PROMPT

__all__ = ["TASK_COMPLETION_PROMPT"]
