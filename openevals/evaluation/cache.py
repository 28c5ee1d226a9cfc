"""Judge caches for batch runs: the :class:`CacheBackend` interface and its SQLite default.

**The interface.** A cache backend is any object with ``get(key)`` (a dict, or ``None`` on a miss),
``set(key, value)`` and ``close()`` (:class:`CacheBackend`). Keys are SHA-256 hex strings, values
JSON-serialisable dicts; a backend must tolerate calls from several threads. Two more things decide
how a backend travels to other processes (the Ray engine's workers):

* pickling: a backend is pickled *as the way to reopen it* (:class:`SQLiteJudgeCache` pickles to
  its file path; a Redis backend would pickle to its URL, a database backend to its DSN), never as
  its open connection;
* ``shared_storage`` (class attribute, default ``False``): ``True`` when every reopened copy sees
  the same storage from any machine (Redis, Postgres, a cloud key-value store). The Ray engine then
  gives each worker its own copy. When ``False`` (SQLite: the file lives on the driver's machine;
  in-memory dicts), the Ray engine keeps the one instance in a Ray actor on the driver's node and
  workers reach it through that actor (see :mod:`openevals.evaluation.engines._ray_cache`).

So a Redis backend is a class with ``get``/``set``/``close`` over a client,
``shared_storage = True`` and a ``__reduce__`` returning ``(RedisJudgeCache, (url,))``; nothing
in the runner changes. The default stays :class:`SQLiteJudgeCache` (``cache=True`` or a path).

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
from typing import Any, ClassVar, Protocol, runtime_checkable

from openevals._repr import PATH_LIMIT, show

__all__ = [
    "CacheBackend",
    "CountingCache",
    "SQLiteJudgeCache",
    "default_cache_path",
    "open_cache",
    "shares_storage",
]

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


@runtime_checkable
class CacheBackend(Protocol):
    """Storage for judge answers, as the batch runner uses it (see the module docstring).

    ``get`` returns ``None`` on a miss; ``set`` stores (or replaces) an answer; ``close`` releases
    connections. A class may set ``shared_storage = True`` when reopened copies (from a pickle)
    share one store from any machine.
    """

    def get(self, key: str) -> dict[str, Any] | None: ...

    def set(self, key: str, value: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


def shares_storage(backend: Any) -> bool:
    """Whether copies of ``backend`` opened in other processes (on other machines) share its
    storage (its class says ``shared_storage = True``)."""
    return getattr(backend, "shared_storage", False) is True


class SQLiteJudgeCache:
    """Judge answers in a SQLite file (thread-safe; WAL; values are JSON objects).

    ``hits`` and ``misses`` count lookups made through this instance. Use it as a context manager
    or call :meth:`close` when done. Pickled, it is its path: unpickling opens the same file.
    """

    shared_storage: ClassVar[bool] = False
    """The file lives on one machine; the Ray engine shares it through an actor."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"cache path must be a str or os.PathLike; got {type(path).__name__}")
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ValueError(
                f"cache path {show(str(self.path), PATH_LIMIT)} is a directory; give a file path"
            )
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
            raise RuntimeError(f"the judge cache {show(str(self.path), PATH_LIMIT)} is closed")
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

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (SQLiteJudgeCache, (str(self.path),))

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

    def __getattr__(self, name: str) -> Any:
        """A replaying cassette's extensions (:data:`CASSETTE_EXTENSIONS`): the inner cache's own,
        where it has them. Any other name is missing (``copy`` and ``pickle`` probe for names on
        an instance whose ``inner`` is not set yet)."""
        return cassette_extension(self, "inner", name)


CASSETTE_EXTENSIONS = frozenset({"replay_only", "describe_request", "miss"})
"""What a replaying cassette adds to a judge cache (see openevals.testing.cassette); a cache that
wraps another passes these on."""


def cassette_extension(wrapper: Any, inner: str, name: str) -> Any:
    """``name`` of the cache ``wrapper`` wraps (its attribute ``inner``), if ``name`` is one of the
    :data:`CASSETTE_EXTENSIONS`; otherwise ``AttributeError``, as for any missing attribute."""
    if name not in CASSETTE_EXTENSIONS:
        raise AttributeError(name)
    return getattr(vars(wrapper)[inner], name)


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
