"""A hook for caching judge answers, used by the batch runner (``openevals.evaluate(cache=...)``).

The judge core looks up :data:`active_cache` (a context variable) before every model call. A cache
maps a key derived from the model, the structured-output rung, the messages and the schema to the
answer the model gave; a hit skips the call entirely. Outside a cached run the variable is unset and
the lookup costs one ``ContextVar.get``.

Optional extensions, used by a replaying :class:`openevals.testing.Cassette` (wrappers forward
them): ``describe_request(key, material)`` is told what each key stands for before ``get``; a
cache whose ``replay_only`` is true is never bypassed: on a miss the core raises
``cache.miss(key, stale)`` instead of calling the model (``stale``: an entry exists but no longer
fits the request).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from openevals._judge.backends import Answer


class JudgeCache(Protocol):
    """Storage for judge answers: ``get`` returns ``None`` on a miss."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...


active_cache: ContextVar[JudgeCache | None] = ContextVar("openevals_judge_cache", default=None)


def cache_key(material: dict[str, Any]) -> str:
    """A stable SHA-256 key of the request material (model, rung, messages, schema, params)."""
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lookup_answers(cache: JudgeCache | None, key: str, n: int = 1) -> list[Answer] | None:
    hit = cache.get(key) if cache is not None else None
    if not isinstance(hit, Mapping):
        return None
    stored = hit.get("answers") if n > 1 else [hit]
    if not isinstance(stored, list) or len(stored) != n:
        return None
    return [
        Answer(
            data=s.get("data"), text=str(s.get("text", "")), usage=None, logprobs=s.get("logprobs")
        )
        for s in stored
        if isinstance(s, Mapping)
    ] or None


def _entry(answer: Answer) -> dict[str, Any]:
    data = answer.data.model_dump() if hasattr(answer.data, "model_dump") else answer.data
    entry = {"data": data, "text": answer.text, "usage": answer.usage}
    if answer.logprobs is not None:
        entry["logprobs"] = _plain(answer.logprobs)
    return entry


def _plain(value: Any) -> Any:
    """SDK objects (token log-probabilities) as plain JSON data for the cache."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def store_answers(cache: JudgeCache | None, key: str, answers: list[Answer]) -> None:
    """Remember answers that passed validation."""
    if cache is None or any(a.data is None for a in answers):
        return
    if len(answers) == 1:
        cache.set(key, _entry(answers[0]))
    else:
        cache.set(key, {"answers": [_entry(a) for a in answers]})
