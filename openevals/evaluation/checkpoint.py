"""The ``output=`` file of a batch run: an append-only JSONL checkpoint.

Each record is serialised, stripped of known secret values and written with one ``os.write`` on a
file opened with ``O_APPEND`` - nothing is buffered in the process, so a record that was written
survives a ``kill -9``. On start, :meth:`Checkpoint.load` reads the earlier records back (the last
eval record per row x evaluator wins) and cuts off a torn last line left by a process that died
mid-write, so new records always start on a clean line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openevals.evaluation.redact import Redactor

__all__ = ["Checkpoint"]


class Checkpoint:
    """Append-only JSONL checkpoint: one ``write`` syscall per record, nothing buffered."""

    def __init__(self, path: Path, redactor: Redactor) -> None:
        self.path = path
        self.redactor = redactor
        self._fd: int | None = None

    def load(self) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
        """Read earlier records: ``({row_id: {evaluator: eval record}}, {row_id: row record})``.

        A torn last line (the process died mid-write) is cut off so appends start on a clean line.
        """
        evals: dict[str, dict[str, dict[str, Any]]] = {}
        rows: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return evals, rows
        good_end = 0
        with self.path.open("rb") as fh:
            offset = 0
            for raw in fh:
                offset += len(raw)
                if not raw.endswith(b"\n"):
                    break
                good_end = offset
                text = raw.strip()
                if not text:
                    continue
                try:
                    record = json.loads(text)
                except ValueError:
                    continue
                if not isinstance(record, dict):
                    continue
                kind = record.get("kind")
                row_id = record.get("row_id")
                if not isinstance(row_id, str):
                    continue
                if kind == "eval" and isinstance(record.get("evaluator"), str):
                    evals.setdefault(row_id, {})[record["evaluator"]] = record
                elif kind == "row":
                    rows[row_id] = record
        if good_end < self.path.stat().st_size:
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)
        return evals, rows

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, record: Mapping[str, Any]) -> None:
        if self._fd is None:
            return
        text = json.dumps(record, ensure_ascii=False, default=str)
        data = (self.redactor.values(text) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
