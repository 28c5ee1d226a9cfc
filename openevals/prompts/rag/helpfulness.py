"""``RAG_HELPFULNESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.rag import RAG_HELPFULNESS_PROMPT

__all__ = ["RAG_HELPFULNESS_PROMPT"]
