"""A SQLite judge cache for batch runs.

:class:`SQLiteJudgeCache` implements the :class:`~openevals._judge.cache.JudgeCache` protocol: the
judge core asks it for an answer before every model call (keyed by model, structured-output rung,
messages, schema and model parameters) and stores each usable answer after the call. A rerun over
the same data therefore makes no model calls.

The database uses WAL journaling and a busy timeout, so several processes may share one file; one
connection guarded by a lock serves all threads of a process. Values are JSON text. Hits and misses
are counted per instance; :class:`CountingCache` adds per-evaluator counts on top.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["CountingCache", "SQLiteJudgeCache", "default_cache_path", "open_cache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """Where ``cache=True`` keeps its database.

    ``$OPENEVALS_CACHE_DIR/judge-cache.sqlite`` when that variable is set, else
    ``$XDG_CACHE_HOME/openevals/judge-cache.sqlite`` (``~/.cache/openevals/...`` by default).
    """
    explicit = os.environ.get("OPENEVALS_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser() / "judge-cache.sqlite"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "openevals" / "judge-cache.sqlite"


class SQLiteJudgeCache:
    """Judge answers in a SQLite file (thread-safe; WAL; values are JSON objects).

    ``hits`` and ``misses`` count lookups made through this instance. Use it as a context manager
    or call :meth:`close` when done.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"cache path must be a str or os.PathLike; got {type(path).__name__}")
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ValueError(f"cache path {str(self.path)!r} is a directory; give a file path")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"the judge cache {str(self.path)!r} is closed")
        return self._conn

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT value FROM judge_cache WHERE key = ?", (key,))
                .fetchone()
            )
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        text = json.dumps(value, ensure_ascii=False, default=str)
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO judge_cache (key, value, created_at) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )
            self.writes += 1

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT COUNT(*) FROM judge_cache").fetchone()
        return int(row[0])

    def clear(self) -> None:
        """Delete every stored answer."""
        with self._lock:
            self._connection().execute("DELETE FROM judge_cache")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SQLiteJudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteJudgeCache({str(self.path)!r}, hits={self.hits}, misses={self.misses})"


class CountingCache:
    """Wraps a judge cache and counts the hits and misses seen through this wrapper."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self.inner.get(key)
        with self._lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def set(self, key: str, value: dict[str, Any]) -> None:
        self.inner.set(key, value)


def open_cache(cache: Any) -> tuple[Any, bool]:
    """Resolve the ``cache=`` argument: ``(cache object or None, owned)``.

    ``None``/``False`` -> no cache; ``True`` -> :func:`default_cache_path`; a path -> a
    :class:`SQLiteJudgeCache` there (owned: closed by the runner); an object with ``get`` and
    ``set`` -> used as is.
    """
    if cache is None or cache is False:
        return None, False
    if cache is True:
        return SQLiteJudgeCache(default_cache_path()), True
    if isinstance(cache, (str, os.PathLike)):
        return SQLiteJudgeCache(cache), True
    if callable(getattr(cache, "get", None)) and callable(getattr(cache, "set", None)):
        return cache, False
    raise TypeError(
        "cache must be None, True (default file), a path to a SQLite file, or an object with "
        f"get(key) and set(key, value); got {type(cache).__name__}"
    )
