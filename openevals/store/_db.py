"""The two databases a run store lives in: a SQLite file (the default) and PostgreSQL by URL.

Both speak the same SQL (written with ``?`` placeholders; PostgreSQL's driver gets ``%s``), through
the DB-API: :mod:`sqlite3`, or ``psycopg`` (the ``store-postgres`` extra). A :class:`Database`
holds one connection and the few places where the dialects differ: the id column and
case-insensitive search.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show

ENV_VAR = "OPENEVALS_STORE"
DEFAULT_PATH = Path(".openevals") / "runs.db"
_PG_SCHEMES = ("postgresql://", "postgres://")
_PAGE_SIZE = 65536

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id {id},
    kind TEXT NOT NULL,
    created_at TEXT NOT NULL,
    name TEXT,
    dataset TEXT,
    fingerprint TEXT,
    git_commit TEXT,
    evaluators TEXT NOT NULL,
    models TEXT NOT NULL,
    row_count INTEGER NOT NULL DEFAULT 0,
    error_rows INTEGER NOT NULL DEFAULT 0,
    cost_usd {real},
    elapsed_sec {real},
    aggregates TEXT NOT NULL,
    details TEXT NOT NULL,
    output TEXT,
    complete INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS tags (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
);
CREATE INDEX IF NOT EXISTS tags_by_tag ON tags (tag);
CREATE TABLE IF NOT EXISTS row_chunks (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    first_pos INTEGER NOT NULL,
    n INTEGER NOT NULL,
    error_rows INTEGER NOT NULL,
    errors TEXT NOT NULL,
    ids TEXT NOT NULL,
    scores TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, first_pos)
);
CREATE TABLE IF NOT EXISTS labels (
    id {id},
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    row_id TEXT NOT NULL,
    labeller TEXT NOT NULL,
    value TEXT NOT NULL,
    reason TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS labels_by_row ON labels (run_id, row_id)
"""


def location_of(location: str | os.PathLike[str] | None) -> str:
    """Where a store is: ``location``, else ``$OPENEVALS_STORE``, else ``.openevals/runs.db``."""
    if location is None:
        location = os.environ.get(ENV_VAR) or str(DEFAULT_PATH)
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    if not isinstance(location, str) or not location:
        raise TypeError(
            "a run store location must be a SQLite file path or a postgresql:// URL; got "
            f"{show(location)}"
        )
    return location


class Database:
    """One connection to a store's database and its dialect."""

    def __init__(self, connection: Any, *, postgres: bool) -> None:
        self.connection = connection
        self.postgres = postgres

    def sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        cursor = self.connection.cursor()
        cursor.execute(self.sql(text), tuple(params))
        return cursor

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        cursor = self.connection.cursor()
        cursor.executemany(self.sql(text), rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything inside commits together or not at all (SQLite: ``BEGIN IMMEDIATE``, so two
        writers queue instead of failing half-way)."""
        if self.postgres:
            with self.connection.transaction():
                yield
            return
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def like(self) -> str:
        return "ILIKE" if self.postgres else "LIKE"

    def close(self) -> None:
        self.connection.close()


def connect(location: str) -> Database:
    """Open (and create, the first time) the store at ``location``."""
    if location.startswith(_PG_SCHEMES):
        return _postgres(location)
    path = Path(location)
    if path.is_dir():
        raise ValueError(
            f"run store: {show(location, PATH_LIMIT)} is a directory; pass a database file such "
            "as .openevals/runs.db"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: each statement commits alone unless inside Database.transaction.
    connection = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
    try:
        # Large pages for a new file (no effect on an existing one): a chunk of rows is tens of
        # kilobytes, written in a few pages instead of a chain of small ones (4x quicker).
        connection.execute(f"PRAGMA page_size={_PAGE_SIZE}")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA foreign_keys=ON")
        return _create(Database(connection, postgres=False))
    except sqlite3.DatabaseError as exc:
        connection.close()
        raise ValueError(
            f"run store: {show(location, PATH_LIMIT)} is not a usable SQLite database ({exc})"
        ) from None


def _postgres(url: str) -> Database:
    try:
        import psycopg
    except ImportError:
        raise ImportError(
            "a PostgreSQL run store needs psycopg: pip install 'openevals[store-postgres]'"
        ) from None
    return _create(Database(psycopg.connect(url, autocommit=True), postgres=True))


def _create(db: Database) -> Database:
    """Create the tables the store lacks and move old rows (:func:`_chunk_old_rows`), in one
    transaction; returns ``db``."""
    with db.transaction():
        if db.postgres:
            db.execute("SELECT pg_advisory_xact_lock(5180437)")  # one schema creator at a time
            schema = _SCHEMA.format(id="BIGSERIAL PRIMARY KEY", real="DOUBLE PRECISION")
        else:
            schema = _SCHEMA.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL")
        for statement in schema.split(";"):
            db.execute(statement)
        _chunk_old_rows(db)
    return db


INSERT_CHUNK = (
    "INSERT INTO row_chunks (run_id, first_pos, n, error_rows, errors, ids, scores, body) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_OLD_CHUNK = 1024


def _chunk_old_rows(db: Database) -> None:
    """Move the rows of a store written before rows were chunked (table ``rows``, one record
    per row) into ``row_chunks``, then drop that table (inside the schema's transaction)."""
    probe = (
        "SELECT to_regclass('rows') IS NOT NULL"
        if db.postgres
        else "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'rows'"
    )
    if not db.execute(probe).fetchone()[0]:
        return
    found = db.execute(
        "SELECT run_id, pos, row_id, status, scores, body FROM rows ORDER BY run_id, pos"
    ).fetchall()
    chunks = []
    for start in range(0, len(found), _OLD_CHUNK):
        part = found[start : start + _OLD_CHUNK]
        for run_id in dict.fromkeys(rec[0] for rec in part):  # a chunk holds one run's rows
            rows = [rec for rec in part if rec[0] == run_id]
            scores: dict[str, list[Any]] = {}
            for at, rec in enumerate(rows):
                for key, score in json.loads(rec[4]).items():
                    scores.setdefault(key, [None] * len(rows))[at] = score
            errors = [at for at, rec in enumerate(rows) if rec[3] == "error"]
            chunks.append(
                (
                    run_id,
                    int(rows[0][1]),
                    len(rows),
                    len(errors),
                    json.dumps(errors),
                    json.dumps([str(rec[2]) for rec in rows]),
                    json.dumps(scores, allow_nan=True),
                    '{"rows": [' + ", ".join(rec[5] for rec in rows) + "]}",
                )
            )
    db.executemany(INSERT_CHUNK, chunks)
    db.execute("DROP TABLE rows")
