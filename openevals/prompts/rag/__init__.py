"""Retrieval-augmented generation: groundedness, helpfulness, retrieval relevance.

Texts are read from ``prompts/rag/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.rag.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "RAG_GROUNDEDNESS_PROMPT",
    "RAG_HELPFULNESS_PROMPT",
    "RAG_RETRIEVAL_RELEVANCE_PROMPT",
]

RAG_GROUNDEDNESS_PROMPT: str = load_prompt("rag/groundedness.txt")
RAG_HELPFULNESS_PROMPT: str = load_prompt("rag/helpfulness.txt")
RAG_RETRIEVAL_RELEVANCE_PROMPT: str = load_prompt("rag/retrieval_relevance.txt")
