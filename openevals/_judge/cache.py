"""A hook for caching judge answers, used by the batch runner (``openevals.evaluate(cache=...)``).

The judge core looks up :data:`active_cache` (a context variable) before every model call. A cache
maps a key derived from the model, the structured-output rung, the messages and the schema to the
answer the model gave; a hit skips the call entirely. Outside a cached run the variable is unset and
the lookup costs one ``ContextVar.get``.
"""

from __future__ import annotations

import hashlib
import json
from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["JudgeCache", "active_cache", "cache_key"]


class JudgeCache(Protocol):
    """Storage for judge answers: ``get`` returns ``None`` on a miss."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...


active_cache: ContextVar[JudgeCache | None] = ContextVar("openevals_judge_cache", default=None)


def cache_key(material: dict[str, Any]) -> str:
    """A stable SHA-256 key of the request material (model, rung, messages, schema, params)."""
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
