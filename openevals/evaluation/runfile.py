"""A finished run's ``output=`` file as an :class:`EvaluationResult`, for
:func:`~.reopen.load_run` and :func:`~.recordrun.rows_ready`. A file is read with :func:`~.checkpoint.read_records` (the reader resume uses, so the last
``eval`` record of a row and evaluator wins, and a torn last line is skipped) and counted by
:class:`~.stats.RunStats`, so aggregates, intervals, groups and the summary are computed exactly as
a live run computes them. The reopened result's ``summary["reopened"]`` names its source;
``elapsed_sec`` is the evaluators' time summed from the records (the wall time is not in the file).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.evaluation.checkpoint import read_records
from openevals.evaluation.records import Evaluation, Recorder, ResultRow, row_record
from openevals.evaluation.result import EvaluationResult
from openevals.evaluation.stats import RunStats
from openevals.evaluation.store import RowStore

__all__ = ["load_run_file", "result_of_records"]

_FIELDS = ("inputs", "outputs", "reference_outputs")


def load_run_file(source: str | os.PathLike[str]) -> EvaluationResult:
    """The run whose ``output=`` file is ``source``.

    Raises:
        FileNotFoundError: no such file. ValueError: the file is not a run's output file.
    """
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
