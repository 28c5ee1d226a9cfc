"""Retrieval-augmented generation: groundedness, helpfulness, retrieval relevance.

Read from ``prompts/rag/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

RAG_GROUNDEDNESS_PROMPT: str = load_prompt("rag/groundedness.txt")
RAG_HELPFULNESS_PROMPT: str = load_prompt("rag/helpfulness.txt")
RAG_RETRIEVAL_RELEVANCE_PROMPT: str = load_prompt("rag/retrieval_relevance.txt")

__all__ = prompt_names(globals())
