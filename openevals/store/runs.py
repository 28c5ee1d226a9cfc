"""The run store: :class:`RunStore`, every recorded run with its metadata, aggregates, rows and
the labels people give its rows.

A run is written in three steps: :meth:`RunStore.begin` inserts its record (marked incomplete),
:meth:`RunStore.add_chunks` appends its rows, a chunk of consecutive rows at a time (many chunks
per transaction), and :meth:`RunStore.finish` stores the aggregates and marks it complete, in
one transaction. A run killed on the way stays an incomplete record that listings leave out
(``complete=False`` shows it); two processes writing at once queue on the database's write lock
(SQLite in WAL mode with ``BEGIN IMMEDIATE``; PostgreSQL's own transactions), so neither sees
the other half-written.

The store holds plain data: rows arrive as chunks of encoded JSON text (:class:`RowChunk`: the
run's records, secrets already removed) and come back as dicts (:mod:`._rows` reads them);
:func:`openevals.load_run` turns a stored run back into an ``EvaluationResult``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from openevals._repr import show
from openevals.store._chunks import RowChunk
from openevals.store._db import Database, connect, location_of
from openevals.store._rows import StoredRows

__all__ = [
    "Label",
    "RowChunk",
    "RunStore",
    "StoredRun",
    "check_tags",
    "open_store",
    "store_option",
]

_RUN_COLUMNS = (
    "id, kind, created_at, name, dataset, fingerprint, git_commit, evaluators, models, row_count,"
    " error_rows, cost_usd, elapsed_sec, aggregates, details, output, complete"
)
# StoredRun's fields read from those columns that are not taken as they are stored.
_READ: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(("id", "rows", "error_rows"), int),
    **dict.fromkeys(("evaluators", "models", "aggregates", "details"), json.loads),
    "complete": bool,
}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class StoredRun:
    """One recorded run (``kind``: ``"run"``, ``"calibrate"`` or ``"compare"``)."""

    id: int
    kind: str
    created_at: str
    name: str | None
    dataset: str | None
    fingerprint: str | None
    git_commit: str | None
    evaluators: list[dict[str, Any]]
    models: list[str]
    rows: int
    error_rows: int
    cost_usd: float | None
    elapsed_sec: float | None
    aggregates: dict[str, dict[str, Any]]
    details: dict[str, Any]
    """``summary``, ``by_group``, ``histograms``, ``batch_metrics`` and, for calibration and
    comparison records, their report (``calibration`` / ``comparison``)."""
    output: str | None
    complete: bool
    tags: list[str] = field(default_factory=list)

    @property
    def evaluator_names(self) -> list[str]:
        return [str(e.get("name")) for e in self.evaluators]


@dataclass(frozen=True)
class Label:
    """A person's label of one row: ``value`` (a bool, number or category), why, who, when."""

    id: int
    run_id: int
    row_id: str
    labeller: str
    value: Any
    reason: str | None
    created_at: str


class RunStore(StoredRows):
    """A store of runs in a SQLite file or a PostgreSQL database.

    Args:
        location: a SQLite file path or a ``postgresql://`` URL; default ``$OPENEVALS_STORE``,
            else ``.openevals/runs.db`` in the working directory.

    Raises:
        TypeError: ``location`` is not a str or path. ValueError: not a usable database.
        ImportError: a PostgreSQL URL without ``psycopg`` installed.
    """

    def __init__(self, location: str | os.PathLike[str] | None = None) -> None:
        self.location = location_of(location)
        self.db: Database = connect(self.location)
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self.location!r})"

    # ------------------------------------------------------------------ writing a run
    def begin(
        self,
        *,
        kind: str,
        name: str | None = None,
        dataset: str | None = None,
        fingerprint: str | None = None,
        git_commit: str | None = None,
        evaluators: Sequence[Mapping[str, Any]] = (),
        models: Sequence[str] = (),
        output: str | None = None,
        tags: Sequence[str] = (),
    ) -> int:
        """Insert an incomplete run record; returns its id."""
        tags = check_tags(tags)
        with self._lock, self.db.transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (kind, created_at, name, dataset, fingerprint, git_commit, "
                "evaluators, models, aggregates, details, output, complete) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', '{}', ?, 0) RETURNING id",
                (
                    kind,
                    _now(),
                    name,
                    dataset,
                    fingerprint,
                    git_commit,
                    json.dumps(list(evaluators), default=str),
                    json.dumps(sorted(set(models))),
                    output,
                ),
            )
            run_id = int(cursor.fetchone()[0])
            self.db.executemany(
                "INSERT INTO tags (run_id, tag) VALUES (?, ?)", [(run_id, t) for t in tags]
            )
        return run_id

    def finish(
        self,
        run_id: int,
        *,
        aggregates: Mapping[str, Any],
        details: Mapping[str, Any],
        rows: int,
        error_rows: int,
        cost_usd: float | None,
        elapsed_sec: float | None,
    ) -> None:
        """Store the run's aggregates and details and mark it complete."""
        with self._lock, self.db.transaction():
            self.db.execute(
                "UPDATE runs SET aggregates = ?, details = ?, row_count = ?, error_rows = ?, "
                "cost_usd = ?, elapsed_sec = ?, complete = 1 WHERE id = ?",
                (
                    json.dumps(aggregates, default=str, allow_nan=True),
                    json.dumps(details, default=str, allow_nan=True),
                    rows,
                    error_rows,
                    cost_usd,
                    elapsed_sec,
                    run_id,
                ),
            )

    def update(
        self, run_id: int, *, details: Mapping[str, Any] | None, fingerprint: str | None
    ) -> None:
        """Replace a run's details (unless ``None``) and set its dataset fingerprint."""
        with self._lock, self.db.transaction():
            if details is not None:
                self.db.execute(
                    "UPDATE runs SET details = ? WHERE id = ?",
                    (json.dumps(details, default=str), run_id),
                )
            self.db.execute("UPDATE runs SET fingerprint = ? WHERE id = ?", (fingerprint, run_id))

    def tag(self, run: int | str, *tags: str) -> None:
        """Add ``tags`` to a run (by id or tag)."""
        run_id = self.run(run).id
        with self._lock, self.db.transaction():
            for tag in check_tags(tags):
                self.db.execute("DELETE FROM tags WHERE run_id = ? AND tag = ?", (run_id, tag))
                self.db.execute("INSERT INTO tags (run_id, tag) VALUES (?, ?)", (run_id, tag))

    # ------------------------------------------------------------------ reading runs
    def runs(
        self,
        *,
        dataset: str | None = None,
        evaluator: str | None = None,
        tag: str | None = None,
        commit: str | None = None,
        kind: str | None = None,
        complete: bool = True,
        limit: int = 200,
    ) -> list[StoredRun]:
        """Recorded runs, newest first, filtered by the arguments given (``commit``: a prefix;
        ``evaluator``: a name among the run's evaluators)."""
        where, params = (["complete = 1"] if complete else []), []
        for column, value in (("dataset", dataset), ("kind", kind)):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if commit:
            where.append("git_commit LIKE ?")
            params.append(commit + "%")
        if tag:
            where.append("id IN (SELECT run_id FROM tags WHERE tag = ?)")
            params.append(tag)
        if evaluator:
            where.append("evaluators LIKE ?")
            params.append("%" + json.dumps(evaluator)[1:-1].replace("%", "") + "%")
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC LIMIT ?"
        with self._lock:
            found = [self._run_of(r) for r in self.db.execute(sql, [*params, int(limit)])]
        if evaluator:
            found = [run for run in found if evaluator in run.evaluator_names]
        return found

    def run(self, ref: int | str) -> StoredRun:
        """One run by id (an int or its digits), by tag (the newest run with it), or
        ``"latest"`` (the newest complete run of ``evaluate`` or ``openevals run``; calibration and comparison records are left out).

        Raises:
            ValueError: no such run. TypeError: ``ref`` is neither an int nor a str.
        """
        if isinstance(ref, bool) or not isinstance(ref, (int, str)):
            raise TypeError(f"a run is named by its id (int) or a tag (str); got {show(ref)}")
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE "
        params: tuple[Any, ...]
        if isinstance(ref, int) or ref.isdigit():
            sql, params = sql + "id = ?", (int(ref),)
        elif ref == "latest":
            sql += "complete = 1 AND kind = 'run' ORDER BY id DESC LIMIT 1"
            params = ()
        else:
            sql += "id IN (SELECT run_id FROM tags WHERE tag = ?) ORDER BY id DESC LIMIT 1"
            params = (ref,)
        with self._lock:
            found = self.db.execute(sql, params).fetchone()
            if found is None:
                raise ValueError(
                    f"the run store {self.location} has no run {show(ref)} (name a run by its id, "
                    "a tag, or 'latest'; `openevals runs list` shows them)"
                )
            return self._run_of(found)

    def _run_of(self, record: Sequence[Any]) -> StoredRun:
        tags = [
            str(t[0])
            for t in self.db.execute(
                "SELECT tag FROM tags WHERE run_id = ? ORDER BY tag", (record[0],)
            )
        ]
        named = zip(fields(StoredRun)[:-1], record, strict=True)  # _RUN_COLUMNS, in order
        return StoredRun(
            **{f.name: _READ[f.name](v) if f.name in _READ else v for f, v in named}, tags=tags
        )

    # ------------------------------------------------------------------ labels
    def add_label(
        self, run_id: int, row_id: str, *, labeller: str, value: Any, reason: str | None = None
    ) -> Label:
        """Store one person's label of one row (a newer label by the same person wins when
        read). Raises ``ValueError`` for an empty name or a row the run does not have."""
        if not isinstance(labeller, str) or not labeller.strip():
            raise ValueError(f"a label needs the labeller's name; got {show(labeller)}")
        if isinstance(value, str) and not value.strip():
            raise ValueError("a label needs a value (pass/fail, a score or a category)")
        created = _now()
        with self._lock, self.db.transaction():
            if self.position(run_id, row_id) is None:
                raise ValueError(f"run {run_id} has no row {show(row_id)}")
            cursor = self.db.execute(
                "INSERT INTO labels (run_id, row_id, labeller, value, reason, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (run_id, row_id, labeller.strip(), json.dumps(value), reason or None, created),
            )
            label_id = int(cursor.fetchone()[0])
        return Label(label_id, run_id, row_id, labeller.strip(), value, reason or None, created)

    def labels(self, run_id: int, *, labeller: str | None = None) -> list[Label]:
        """The current labels of a run's rows: the newest per row and labeller."""
        sql = (
            "SELECT id, run_id, row_id, labeller, value, reason, created_at FROM labels "
            "WHERE run_id = ?"
        )
        params: list[Any] = [run_id]
        if labeller is not None:
            sql += " AND labeller = ?"
            params.append(labeller)
        with self._lock:
            found = self.db.execute(sql + " ORDER BY id", params).fetchall()
        labels = [
            Label(int(rec[0]), int(rec[1]), rec[2], rec[3], json.loads(rec[4]), rec[5], rec[6])
            for rec in found
        ]
        newest = {(label.row_id, label.labeller): label for label in labels}  # the newest wins
        return list(newest.values())


def check_tags(tags: Iterable[str]) -> list[str]:
    """``tags`` stripped; ``ValueError`` for one that could be mistaken for an id or 'latest'."""
    out = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip() or tag.isdigit() or tag == "latest":
            raise ValueError(
                f"a tag must be a non-empty name that is not all digits nor 'latest'; got {show(tag)}"
            )
        out.append(tag.strip())
    return out


def store_option(args: Any) -> Any:
    """What ``store=`` gets from a command's ``--store`` / ``--no-store`` options: ``None`` with
    ``--no-store``, else the ``--store`` location or ``True`` (the default store)."""
    if getattr(args, "no_store", True):
        return None
    return getattr(args, "store", None) or True


def open_store(store: Any) -> RunStore:
    """The :class:`RunStore` that ``store=`` names: ``True`` (the default location), a path or
    URL, or a ``RunStore`` (returned as it is, so closing it is the caller's business).

    Raises:
        TypeError: anything else.
    """
    if isinstance(store, RunStore):
        return _Borrowed(store)
    if store is True:
        return RunStore()
    if isinstance(store, (str, os.PathLike)):
        return RunStore(store)
    raise TypeError(
        "`store` must be True (the default store, .openevals/runs.db or $OPENEVALS_STORE), a "
        f"SQLite path, a postgresql:// URL or a RunStore; got {type(store).__name__}"
    )


class _Borrowed(RunStore):
    """A caller's store used in a ``with`` block without closing it."""

    def __init__(self, store: RunStore) -> None:
        self.location, self.db, self._lock = store.location, store.db, store._lock

    def close(self) -> None:
        return None
