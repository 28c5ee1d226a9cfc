"""The one JSON encoding of records (the ``output=`` file, ``to_jsonl``, the report, the run
store), and a stretch of work without cyclic-GC passes for building many records at once."""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Iterator
from typing import Any

from openevals.data.rows import placeholder

__all__ = ["encode", "escape_surrogates", "no_gc_pauses", "storable_text"]

# Built once (json.dumps builds an encoder on every call with these options).
_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


def encode(record: Any) -> str:
    """The one JSON encoding of records (no trailing newline), ``str()`` fallback.

    A value that cannot be stored as JSON (a cycle, nesting too deep for the encoder) is
    replaced by a bounded text naming it (:func:`~openevals.data.rows.placeholder`), so one bad value never
    costs a record. Lone surrogates are escaped by :func:`storable_text`.
    """
    try:
        return _JSON.encode(record)
    except (ValueError, RecursionError, TypeError):
        return _JSON.encode(_storable(record, 4))


def _storable(value: Any, depth: int) -> Any:
    try:
        _JSON.encode(value)
    except (ValueError, RecursionError, TypeError):
        pass
    else:
        return value
    if depth > 0 and isinstance(value, dict):
        return {str(k): _storable(v, depth - 1) for k, v in value.items()}
    if depth > 0 and isinstance(value, (list, tuple)):
        return [_storable(v, depth - 1) for v in value]
    return placeholder(value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate written as its ``\\uXXXX`` escape: valid UTF-8 that
    decodes back to the same strings (surrogates only occur inside JSON strings)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def storable_text(record: Any) -> str:
    """:func:`encode`, made safe to write as UTF-8 (see :func:`escape_surrogates`)."""
    text = encode(record)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text)
    return text


@contextlib.contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Build many records without cyclic-GC passes: each pass would walk every record still
    alive (the caller's dataset, the rows built so far), for no garbage. Used around one block
    of rows or one table at a time, so the collector runs between them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
