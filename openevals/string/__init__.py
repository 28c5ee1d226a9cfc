"""String evaluators: Levenshtein similarity and embedding similarity."""

from __future__ import annotations

from typing import Any

from openevals.string.levenshtein import levenshtein_distance, levenshtein_distance_async

__all__ = [
    "create_async_embedding_similarity_evaluator",
    "create_embedding_similarity_evaluator",
    "levenshtein_distance",
    "levenshtein_distance_async",
]


def __getattr__(name: str) -> Any:
    if name in (
        "create_embedding_similarity_evaluator",
        "create_async_embedding_similarity_evaluator",
    ):
        from openevals.string import embedding_similarity

        return getattr(embedding_similarity, name)
    raise AttributeError(f"module 'openevals.string' has no attribute {name!r}")
