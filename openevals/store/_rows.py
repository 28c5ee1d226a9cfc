"""A run's rows in the store: written a chunk at a time, read a page at a time (part of
:class:`~openevals.store.runs.RunStore`).

Rows live in chunks of consecutive rows (:mod:`._chunks`). A page of a run without filters
reads the one or two chunks that hold it. Filters run chunk by chunk in data order, a few
chunks per query, and stop once the page is full: a search first asks the database which
chunks' text holds the words (``LIKE`` / ``ILIKE``), then checks the rows of those chunks one by
one; status and score filters read each chunk's small columns (its failed rows, its scores)
without decoding its rows.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from openevals._repr import show
from openevals.store._chunks import RowChunk, decode_rows, matches_text, search_needle
from openevals.store._db import INSERT_CHUNK, Database

CHUNKS_PER_COMMIT = 16
"""Chunks written per transaction (a run killed mid-way keeps whole transactions only)."""

_SCAN = 32  # chunks read per query while filtering


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class RowFilters:
    """What :meth:`StoredRows.rows` filters on (see there)."""

    def __init__(
        self,
        search: str | None = None,
        status: str | None = None,
        key: str | None = None,
        below: float | None = None,
        above: float | None = None,
    ) -> None:
        self.needle = search_needle(search) if search else None
        self.status = status or None
        bounded = key is not None and (below is not None or above is not None)
        self.key = key if bounded else None
        self.below = None if below is None else float(below)
        self.above = None if above is None else float(above)

    def __bool__(self) -> bool:
        return self.needle is not None or self.status is not None or self.key is not None

    def score_fits(self, value: Any) -> bool:
        if isinstance(value, bool):
            value = 1.0 if value else 0.0
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if self.below is not None and value > self.below:
            return False
        return self.above is None or value >= self.above


class StoredRows:
    """The row methods of a run store (mixed into ``RunStore``: needs ``db`` and ``_lock``)."""

    db: Database
    _lock: threading.RLock

    # ------------------------------------------------------------------ writing
    def add_chunks(self, run_id: int, chunks: Iterable[RowChunk]) -> int:
        """Append chunks of rows, :data:`CHUNKS_PER_COMMIT` per transaction; returns how many
        rows were written."""
        total = 0
        batch: list[tuple[Any, ...]] = []
        for chunk in chunks:
            if not len(chunk):
                continue
            failed = [pos for pos, bad in enumerate(chunk.errors) if bad]
            batch.append(
                (
                    run_id,
                    chunk.first,
                    len(chunk),
                    len(failed),
                    json.dumps(failed),
                    json.dumps(chunk.ids),
                    json.dumps(chunk.scores, allow_nan=True, default=str),
                    chunk.body,
                )
            )
            total += len(chunk)
            if len(batch) >= CHUNKS_PER_COMMIT:
                self._write_chunks(batch)
                batch = []
        if batch:
            self._write_chunks(batch)
        return total

    def _write_chunks(self, batch: list[tuple[Any, ...]]) -> None:
        with self._lock, self.db.transaction():
            self.db.executemany(INSERT_CHUNK, batch)

    # ------------------------------------------------------------------ reading
    def rows(
        self,
        run_id: int,
        *,
        offset: int = 0,
        limit: int = 50,
        search: str | None = None,
        status: str | None = None,
        key: str | None = None,
        below: float | None = None,
        above: float | None = None,
    ) -> list[dict[str, Any]]:
        """A page of a run's rows in data order, filtered (``search``: text anywhere in the
        row, ignoring the case of ASCII letters; ``status``: ``"success"`` / ``"error"``;
        ``key`` with ``below`` / ``above``: that key's score ``<=`` / ``>=`` the bound). Each
        row is the stored result row with ``pos`` added."""
        offset, limit = max(int(offset), 0), int(limit)
        if limit <= 0:
            return []
        filters = RowFilters(search, status, key, below, above)
        if not filters:
            return self._range(run_id, offset, offset + limit)
        out: list[dict[str, Any]] = []
        skip = offset
        for first, found, rows in self._matching(run_id, filters):
            if skip >= len(found):
                skip -= len(found)
                continue
            wanted = found[skip : skip + limit - len(out)]
            skip = 0
            if rows is None:
                span = range(wanted[0], wanted[-1] + 1)
                decoded = dict(zip(span, self._decoded(run_id, first, span), strict=True))
            else:
                decoded = rows
            out.extend({"pos": first + at, **decoded[at]} for at in wanted)
            if len(out) >= limit:
                break
        return out

    def count(self, run_id: int, **filters: Any) -> int:
        """How many rows :meth:`rows` would page through with these filters."""
        chosen = RowFilters(**filters)
        if not chosen:
            with self._lock:
                found = self.db.execute(
                    "SELECT COALESCE(SUM(n), 0) FROM row_chunks WHERE run_id = ?", (run_id,)
                ).fetchone()
            return int(found[0])
        return sum(len(found) for _, found, _ in self._matching(run_id, chosen))

    def _range(self, run_id: int, start: int, stop: int) -> list[dict[str, Any]]:
        with self._lock:
            head = self.db.execute(
                "SELECT first_pos FROM row_chunks WHERE run_id = ? AND first_pos <= ? "
                "ORDER BY first_pos DESC LIMIT 1",
                (run_id, start),
            ).fetchone()
            if head is None:
                return []
            found = self.db.execute(
                "SELECT first_pos, n, body, ids, scores FROM row_chunks WHERE run_id = ? "
                "AND first_pos >= ? AND first_pos < ? ORDER BY first_pos",
                (run_id, int(head[0]), stop),
            ).fetchall()
        out: list[dict[str, Any]] = []
        for first, n, body, ids, scores in found:
            first = int(first)
            span = range(max(start - first, 0), min(stop - first, int(n)))
            if len(span):
                rows = decode_rows(body, span, ids=ids, scores=scores)
                out.extend({"pos": first + at, **row} for at, row in zip(span, rows, strict=True))
        return out

    def _decoded(self, run_id: int, first: int, span: range) -> list[dict[str, Any]]:
        with self._lock:
            body, ids, scores = self.db.execute(
                "SELECT body, ids, scores FROM row_chunks WHERE run_id = ? AND first_pos = ?",
                (run_id, first),
            ).fetchone()
        return decode_rows(body, span, ids=ids, scores=scores)

    def _matching(
        self, run_id: int, filters: RowFilters
    ) -> Iterator[tuple[int, list[int], dict[int, dict[str, Any]] | None]]:
        """Per chunk that has matching rows, in data order: its first position, the offsets
        of its matching rows, and (after a search) those rows decoded."""
        columns = "first_pos, n, errors, scores" + (", body, ids" if filters.needle else "")
        where, params = [], []
        if filters.needle is not None:
            where.append(f"body {self.db.like()} ? ESCAPE '\\'")
            params.append(_like_pattern(filters.needle))
        if filters.status == "error":
            where.append("error_rows > 0")
        elif filters.status == "success":
            where.append("error_rows < n")
        elif filters.status is not None:  # no row has any other status
            return
        for record in self._scan(run_id, columns, where, params, _SCAN):
            found = self._offsets(record, filters)
            if found and filters.needle is not None:
                span = range(found[0], found[-1] + 1)
                decoded = decode_rows(record[4], span, ids=record[5], scores=record[3])
                rows = dict(zip(span, decoded, strict=True))
                found = [at for at in found if matches_text(rows[at], filters.needle)]
                if found:
                    yield int(record[0]), found, rows
            elif found:
                yield int(record[0]), found, None

    def _scan(
        self, run_id: int, columns: str, where: list[str], params: list[Any], size: int
    ) -> Iterator[Any]:
        """The run's chunk records (``columns``, first the position) that meet the conditions
        ``where`` (with ``params``) in data order, read ``size`` chunks per query."""
        conditions = "".join(f" AND {condition}" for condition in where)
        sql = (
            f"SELECT {columns} FROM row_chunks WHERE run_id = ? AND first_pos > ?{conditions} "
            "ORDER BY first_pos LIMIT ?"
        )
        last = -1
        while True:
            with self._lock:
                batch = self.db.execute(sql, [run_id, last, *params, size]).fetchall()
            yield from batch
            if len(batch) < size:
                return
            last = int(batch[-1][0])

    @staticmethod
    def _offsets(record: tuple[Any, ...], filters: RowFilters) -> list[int]:
        n, errors = int(record[1]), [int(at) for at in json.loads(record[2])]
        if filters.status == "error":
            found = errors
        elif filters.status is not None:
            failed = set(errors)
            found = [at for at in range(n) if at not in failed]
        else:
            found = list(range(n))
        if filters.key is not None:
            scores = json.loads(record[3]).get(filters.key) or []
            fits = filters.score_fits
            found = [at for at in found if at < len(scores) and fits(scores[at])]
        return found

    def row(self, run_id: int, pos: int) -> dict[str, Any]:
        """One row by position. Raises ``ValueError`` when the run has no such row."""
        found = self._range(run_id, int(pos), int(pos) + 1) if int(pos) >= 0 else []
        if not found:
            raise ValueError(f"run {run_id} has no row at position {show(pos)}")
        return found[0]

    def position(self, run_id: int, row_id: str) -> int | None:
        """The position of the row with id ``row_id`` in a run (``None``: no such row)."""
        with self._lock:
            found = self.db.execute(
                "SELECT first_pos, ids FROM row_chunks WHERE run_id = ? AND ids LIKE ? "
                "ESCAPE '\\' ORDER BY first_pos",
                (run_id, _like_pattern(json.dumps(str(row_id)))),
            ).fetchall()
        for first, ids in found:
            decoded = [str(one) for one in json.loads(ids)]
            if row_id in decoded:
                return int(first) + decoded.index(row_id)
        return None

    def iter_rows(self, run_id: int, *, chunk: int = _SCAN) -> Iterator[dict[str, Any]]:
        """Every row of a run in data order, ``chunk`` stored chunks read at a time."""
        found = self._scan(run_id, "first_pos, body, ids, scores", [], [], max(int(chunk), 1))
        for _, body, ids, scores in found:
            yield from decode_rows(body, ids=ids, scores=scores)
