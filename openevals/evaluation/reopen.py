"""Reopening a finished run: :func:`load_run` builds an :class:`EvaluationResult` from a run's
``output=`` file, or from a run store by id or tag, without the data or the evaluators.

A file is read by :mod:`.runfile` (which recording in a store uses too); a stored run's rows are
read from the store a page at a time (:class:`StoredRows`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from openevals.evaluation.records import ResultRow
from openevals.evaluation.result import EvaluationResult
from openevals.evaluation.runfile import load_run_file
from openevals.evaluation.store import IndexedRows

__all__ = ["StoredRows", "load_run"]


def load_run(source: str | os.PathLike[str] | int, *, store: Any = None) -> EvaluationResult:
    """A finished run as an :class:`EvaluationResult`: ``to_pandas``, ``report_html`` and
    ``compare`` work on it as on the result ``evaluate()`` returned.

    Args:
        source: the path of a run's ``output=`` JSONL file; or, with ``store=``, a stored run's
            id or tag (``"latest"``, or a tag given when it was recorded).
        store: a run store (see :mod:`openevals.store`): ``True`` for the default one, a path or
            URL, or a :class:`~openevals.store.RunStore`.

    Raises:
        FileNotFoundError: no such file. ValueError: the file is not a run's output file, or the
            store has no such run. TypeError: ``source`` is neither a path nor an id.
    """
    if store is not None and store is not False:
        return _stored_result(source, store)
    if isinstance(source, bool) or not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            "`source` must be the path of a run's output JSONL file (or, with `store=`, a run id "
            f"or tag); got {type(source).__name__}"
        )
    return load_run_file(source)


class StoredRows(IndexedRows):
    """The rows of a stored run, read from the store a page at a time (``EvaluationResult.rows``
    of a run reopened from a store; ``list()`` it for a list)."""

    PAGE = 1024
    _OWNER = "run"

    def __init__(self, store: Any, run_id: int, count: int) -> None:
        self._store, self._run_id, self._count = store, run_id, count
        self._page: tuple[int, list[ResultRow]] = (-1, [])

    def __len__(self) -> int:
        return self._count

    def _row_at(self, index: int) -> ResultRow:
        number = index // self.PAGE
        if self._page[0] != number:
            page = self._store.rows(self._run_id, offset=number * self.PAGE, limit=self.PAGE)
            self._page = (number, [_unstored(row) for row in page])
        return self._page[1][index % self.PAGE]

    def __iter__(self) -> Iterator[ResultRow]:
        yield from self._store.iter_rows(self._run_id)

    def __repr__(self) -> str:
        return f"<StoredRows: run {self._run_id}, {self._count} rows>"


def _unstored(row: dict[str, Any]) -> ResultRow:
    row.pop("pos", None)
    return row  # type: ignore[return-value]


def _stored_result(source: Any, store: Any) -> EvaluationResult:
    from openevals.evaluation.recordrun import rows_ready
    from openevals.store.runs import RunStore, open_store

    opened = store if isinstance(store, RunStore) else open_store(store)
    run = opened.run(source)
    if not run.complete:
        raise ValueError(
            f"run {run.id} in {opened.location} is incomplete (its recording was interrupted); "
            "run it again to record it"
        )
    run = rows_ready(opened, run)
    details = run.details
    summary = dict(details.get("summary") or {})
    summary["run_id"] = run.id
    summary["reopened"] = f"{opened.location}#{run.id}"
    return EvaluationResult(
        rows=StoredRows(opened, run.id, run.rows),  # type: ignore[arg-type]
        aggregates=run.aggregates,
        summary=summary,
        by_group=details.get("by_group"),
        batch_metrics=details.get("batch_metrics") or {},
        evaluators=run.evaluator_names,
        histograms={},
    )
