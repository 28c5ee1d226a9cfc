"""String evaluators: Levenshtein similarity and embedding similarity.

Names resolve lazily (see :func:`openevals._lazy_exports`): Levenshtein loads no embedding code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.string.embedding_similarity import (
        create_async_embedding_similarity_evaluator as create_async_embedding_similarity_evaluator,
        create_embedding_similarity_evaluator as create_embedding_similarity_evaluator,
    )
    from openevals.string.levenshtein import (
        levenshtein_distance as levenshtein_distance,
        levenshtein_distance_async as levenshtein_distance_async,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
