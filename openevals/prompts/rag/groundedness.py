"""``RAG_GROUNDEDNESS_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.rag import RAG_GROUNDEDNESS_PROMPT

__all__ = ["RAG_GROUNDEDNESS_PROMPT"]
