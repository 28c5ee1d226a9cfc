"""``KNOWLEDGE_RETENTION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import KNOWLEDGE_RETENTION_PROMPT

__all__ = ["KNOWLEDGE_RETENTION_PROMPT"]
