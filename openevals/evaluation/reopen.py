"""Reopening a finished run: :func:`load_run` builds an :class:`EvaluationResult` from a run's
``output=`` file, or from a run store by id or tag, without the data or the evaluators.

A file is read with :func:`~.checkpoint.read_records` (the reader resume uses, so the last
``eval`` record of a row and evaluator wins, and a torn last line is skipped) and counted by
:class:`~.stats.RunStats`, so aggregates, intervals, groups and the summary are computed exactly as
a live run computes them. The reopened result's ``summary["reopened"]`` names its source;
``elapsed_sec`` is the evaluators' time summed from the records (the wall time is not in the file).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from openevals._repr import PATH_LIMIT, show
from openevals.evaluation.checkpoint import read_records
from openevals.evaluation.records import Evaluation, Recorder, ResultRow, row_record
from openevals.evaluation.result import EvaluationResult
from openevals.evaluation.stats import RunStats
from openevals.evaluation.store import RowStore

__all__ = ["StoredRows", "load_run", "result_of_records"]

_FIELDS = ("inputs", "outputs", "reference_outputs")


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
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"no such run file: {show(str(path), PATH_LIMIT)}")
    return result_of_records(_file_records(path), source=str(path))


def _file_records(path: Path) -> Iterable[Mapping[str, Any]]:
    first = True
    for _end, record in read_records(path):
        if record is None or "kind" not in record:
            if first:
                raise ValueError(
                    f"{show(str(path), PATH_LIMIT)} is not a run's output file: its first line is "
                    "not a run record (pass the JSONL file an `evaluate(..., output=...)` run wrote)"
                )
            continue
        first = False
        yield record


def result_of_records(records: Iterable[Mapping[str, Any]], *, source: str) -> EvaluationResult:
    """The :class:`EvaluationResult` of a run's records (``run``, ``row`` and ``eval`` lines, in
    the order they were written; the last ``eval`` of a row and evaluator wins)."""
    names: list[str] = []
    group_by: str | None = None
    rows: dict[str, Mapping[str, Any]] = {}
    evals: dict[str, dict[str, Mapping[str, Any]]] = {}
    order: dict[str, int] = {}
    for record in records:
        kind = record.get("kind")
        if kind == "run":
            for name in record.get("evaluators") or ():
                if name not in names:
                    names.append(str(name))
            group_by = record.get("group_by") if "group_by" in record else group_by
            continue
        row_id = record.get("row_id")
        if not isinstance(row_id, str):
            continue
        index = record.get("index")
        order.setdefault(row_id, index if isinstance(index, int) else len(order))
        if kind == "row":
            rows[row_id] = record
        elif kind == "eval" and isinstance(record.get("evaluator"), str):
            evals.setdefault(row_id, {})[record["evaluator"]] = record
            if record["evaluator"] not in names:
                names.append(record["evaluator"])
    stats = RunStats(names, group_by=group_by, live=False)
    store = RowStore()
    recorder = Recorder()
    with_target = False
    elapsed = 0.0
    part: list[ResultRow] = []
    for row_id in sorted(order, key=order.__getitem__):
        line = rows.get(row_id, {})
        done = evals.get(row_id, {})
        entries: dict[str, Evaluation] = {}
        for name in names:
            if name in done:
                entry = recorder.resumed(done[name])
                entry["resumed"] = False  # a finished run's own evaluation, not a resumed one
                entries[name] = entry
                stats.record_pair(name, entry)
                elapsed += entry["elapsed_sec"] or 0.0
        target = line.get("target")
        with_target = with_target or isinstance(target, Mapping)
        rec = row_record(
            row_id,
            order[row_id],
            {**{f: line.get(f) for f in _FIELDS}, **(line.get("extra") or {})},
            group=line.get("group"),
            grouped=group_by is not None,
            target=dict(target) if isinstance(target, Mapping) else None,  # type: ignore[arg-type]
            evaluations=entries,
        )
        rec["status"] = "error" if stats.record_row(rec) else "success"
        part.append(rec)
        if len(part) >= 4096:
            store.add_rows(part)
            part = []
    store.add_rows(part)
    stats.started, stats.finished = 0.0, elapsed
    result = stats.result(
        store.view(), cache=None, with_target=with_target, output=None, interrupted=False
    )
    result.summary["reopened"] = source
    return result


class StoredRows(Sequence[ResultRow]):
    """The rows of a stored run, read from the store a page at a time (``EvaluationResult.rows``
    of a run reopened from a store; ``list()`` it for a list)."""

    PAGE = 1024

    def __init__(self, store: Any, run_id: int, count: int) -> None:
        self._store, self._run_id, self._count = store, run_id, count
        self._page: tuple[int, list[ResultRow]] = (-1, [])

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> ResultRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[ResultRow]: ...

    def __getitem__(self, index: int | slice) -> ResultRow | list[ResultRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"row {index} out of range (the run has {self._count} rows)")
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
