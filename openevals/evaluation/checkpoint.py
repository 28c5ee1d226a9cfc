"""The ``output=`` file of a batch run: an append-only JSONL checkpoint.

Each record arrives as one line of text (encoded and cleared of secrets by
:meth:`~openevals.evaluation.records.Recorder.line`) and is written with one ``os.write`` on a
file opened with ``O_APPEND`` - nothing is buffered in the process, so a record that was written
survives a ``kill -9``. On start, :meth:`Checkpoint.load` reads the earlier records back (the last
eval record per row x evaluator wins) and cuts off a torn last line left by a process that died
mid-write, so new records always start on a clean line.

A file whose records were written under another rule for the ids of rows without an ``id`` (one
whose ``run`` lines do not name :data:`~.data.ID_RULE`: files of openevals 0.1.0 hashed each row's
position and whole content) cannot be matched to rows: :meth:`Checkpoint.load` refuses it with a
:class:`ValueError` saying how to start afresh, rather than mixing two sets of ids in one file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.data.encoding import escape_surrogates
from openevals.data.row_ids import ID_RULE
from openevals.data.rows import Row

__all__ = ["Checkpoint", "Previous", "read_records"]


@dataclass
class Previous:
    """What earlier runs recorded in the ``output=`` file (the last record of each kind wins)."""

    evals: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """``{row_id: {evaluator: eval record}}``"""
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``{row_id: row record}``"""
    fingerprints: dict[str, str] | None = None
    """The current evaluators' fingerprints by name (a recorded pair of another is not reused);
    ``None``: the records were checked already (a Ray worker gets only those that hold)."""
    changed: dict[str, int] = field(default_factory=lambda: {"row": 0, "evaluator": 0})
    """Recorded pairs evaluated again: their row's content, or their evaluator, changed."""

    def forget_errors(self) -> None:
        """Drop the failed pairs, so they run again (``retry_errors=True``)."""
        for per_row in self.evals.values():
            for name in [n for n, r in per_row.items() if r.get("status") != "success"]:
                del per_row[name]

    def finished(self, row: Row) -> Mapping[str, dict[str, Any]]:
        """The eval records of ``row`` by evaluator name that still hold: recorded for this
        content of the row and this evaluator (``row_fp`` and ``evaluator_fp``)."""
        done = self.evals.get(row.id)
        if not done:
            return {}
        fingerprints = self.fingerprints
        if fingerprints is None:
            return done
        fp = row.fingerprint()
        return {
            name: record
            for name, record in done.items()
            if record.get("row_fp") == fp and record.get("evaluator_fp") == fingerprints.get(name)
        }

    def count_changed(self, row: Row, kept: Mapping[str, Any]) -> None:
        """Count the recorded pairs of ``row`` with a current evaluator that ``kept`` left out."""
        done = self.evals.get(row.id)
        if not done or len(kept) == len(done) or self.fingerprints is None:
            return
        fp = row.fingerprint()
        for name, record in done.items():
            if name in kept or name not in self.fingerprints:
                continue
            self.changed["row" if record.get("row_fp") != fp else "evaluator"] += 1

    def reusable_target(self, row: Row, *, pending: bool) -> tuple[Any, dict[str, Any]] | None:
        """``(outputs, target record)`` of an earlier target call to reuse, if any: a successful
        one, or a failed one when no evaluator is left to run for the row; never one recorded
        for other content of the row."""
        recorded = self.rows.get(row.id)
        target = recorded.get("target") if recorded is not None else None
        if recorded is None or not isinstance(target, Mapping):
            return None
        if self.fingerprints is not None and recorded.get("row_fp") != row.fingerprint():
            return None
        if target.get("status") == "success" or not pending:
            return recorded.get("outputs"), dict(target)
        return None


def _other_rule(path: Path, rules: set[Any]) -> str:
    older = rules - {ID_RULE}
    made = (
        "an earlier version of openevals, which identified rows without an 'id' by their "
        "position and whole content (outputs included)"
        if older == {None}
        else f"rules for row ids this version does not use ({show(sorted(map(str, older)))})"
    )
    return (
        f"output={show(str(path), PATH_LIMIT)} was written by {made}; its records cannot be "
        f"matched to rows identified by the rule {show(ID_RULE)} (inputs, reference outputs and "
        "extra columns; not the outputs), so it cannot be resumed. Write to a new file (another "
        "output= path, or delete this one) to evaluate every row afresh"
    )


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each complete line of a run's output file as ``(end offset, record)``, in file order.

    ``record`` is ``None`` for a line that is blank, not JSON, or not a JSON object. Reading
    stops before a torn last line (no newline: the process died mid-write). Nothing is written.
    """
    with path.open("rb") as fh:
        offset = 0
        for raw in fh:
            offset += len(raw)
            if not raw.endswith(b"\n"):
                return
            text = raw.strip()
            record: Any = None
            if text:
                try:
                    record = json.loads(text)
                except (ValueError, RecursionError):
                    record = None
            yield offset, record if isinstance(record, dict) else None


class Checkpoint:
    """Append-only JSONL checkpoint: one ``write`` syscall per record, nothing buffered."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def load(self) -> Previous:
        """Read the earlier records.

        A torn last line (the process died mid-write) is cut off so appends start on a clean line.
        """
        previous = Previous()
        evals, rows = previous.evals, previous.rows
        if not self.path.exists():
            return previous
        good_end = 0
        rules: set[Any] = set()
        for end, record in read_records(self.path):
            good_end = end
            if record is None:
                continue
            kind = record.get("kind")
            if kind == "run":
                rules.add(record.get("row_ids"))
            row_id = record.get("row_id")
            if not isinstance(row_id, str):
                continue
            if kind == "eval" and isinstance(record.get("evaluator"), str):
                evals.setdefault(row_id, {})[record["evaluator"]] = record
            elif kind == "row":
                rows[row_id] = record
        if (evals or rows) and rules != {ID_RULE}:
            raise ValueError(_other_rule(self.path, rules))
        if good_end < self.path.stat().st_size:
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)
        return previous

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, line: str) -> None:
        """Append ``line`` (one JSON record, no newline) and its newline in one system call."""
        self.write_lines([line])

    def write_lines(self, lines: list[str], *, clean: Callable[[str], str] | None = None) -> None:
        """Append several lines with one system call (a block of the columnar path); ``clean``
        (secrets out of JSON text) runs once on the joined text."""
        if self._fd is None or not lines:
            return
        text = "\n".join(lines) + "\n"
        if clean is not None:
            text = clean(text)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: stored as its JSON escape
            data = escape_surrogates(text).encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
