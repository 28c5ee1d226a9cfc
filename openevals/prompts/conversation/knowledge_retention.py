"""``KNOWLEDGE_RETENTION_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/conversation/knowledge_retention.txt``.
"""

from __future__ import annotations

from openevals.prompts.conversation import KNOWLEDGE_RETENTION_PROMPT

__all__ = ["KNOWLEDGE_RETENTION_PROMPT"]
