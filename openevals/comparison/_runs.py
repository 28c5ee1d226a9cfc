"""Reading a run for a comparison: an :class:`EvaluationResult` or a run's ``output=`` JSONL file,
streamed, into per-key score arrays indexed by row position (nothing else of the run is kept).

A score's state per row and key: missing, a value, a NaN/None score, or the evaluator failed on
the row. The file is read line by line; the last ``eval`` record of a row and evaluator wins, as
on resume.
"""

from __future__ import annotations

import json
import math
import os
import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from openevals._repr import PATH_LIMIT, show
from openevals.trust.trials import REPEAT, TRIAL

MISSING, VALUE, NAN, ERROR = 0, 1, 2, 3
_TRIAL_ID = re.compile(rf"(.*){re.escape(TRIAL)}\d+$", re.DOTALL)


def _set(items: array[Any], pos: int, value: Any, fill: Any = -1) -> None:
    """``items[pos] = value``, first padding ``items`` with ``fill`` up to ``pos``."""
    if pos >= len(items):
        items.extend([fill] * (pos + 1 - len(items)))
    items[pos] = value


@dataclass
class KeyScores:
    values: array[float] = field(default_factory=lambda: array("d"))
    states: array[int] = field(default_factory=lambda: array("b"))
    kinds: set[str] = field(default_factory=set)
    evaluator: str = ""
    counts: dict[int, int] = field(default_factory=dict)
    """Positions holding a sum of several scores (trials, judge repeats) -> how many."""

    def put(self, pos: int, state: int, value: float = math.nan) -> None:
        _set(self.values, pos, value, math.nan)
        _set(self.states, pos, state, MISSING)


@dataclass
class RunScores:
    """One run, reduced to what a comparison needs."""

    label: str
    ids: dict[str, int] = field(default_factory=dict)
    keys: dict[str, KeyScores] = field(default_factory=dict)
    evaluators: set[str] = field(default_factory=set)
    errors: dict[str, set[int]] = field(default_factory=dict)
    """evaluator -> positions of rows it failed on."""
    groups: list[Any] = field(default_factory=list)
    source: Any = None
    row_offsets: array[int] = field(default_factory=lambda: array("q"))
    """A file's byte offset of each row's ``row`` line (-1: none), by position."""
    eval_offsets: dict[str, array[int]] = field(default_factory=dict)
    """evaluator -> byte offset of each row's last ``eval`` line, by position."""
    skipped: list[tuple[int, str]] = field(default_factory=list)
    """A file's corrupt lines before its last one: (line number, why), in file order."""
    clustered: bool = False
    """A run with ``trials=``: rows ``<id>@trial<t>`` are one row (their mean), as are judge
    repeats ``<evaluator>@repeat<j>``, so a comparison treats each data row as one cluster."""

    def position(self, row_id: str) -> int:
        found = _TRIAL_ID.match(row_id)
        if found is not None:
            row_id = found.group(1)
            self.clustered = True
        pos = self.ids.get(row_id)
        if pos is None:
            pos = self.ids[row_id] = len(self.ids)
            self.groups.append(None)
        return pos

    def add_eval(self, row_id: str, evaluator: str, status: Any, results: Any) -> int:
        pos = self.position(row_id)
        self.evaluators.add(evaluator)
        if status != "success":
            self.errors.setdefault(evaluator, set()).add(pos)
            return pos
        failed = self.errors.get(evaluator)
        if failed:
            failed.discard(pos)
        keys = self.keys
        for result in results or ():
            if type(result) is not dict or "key" not in result:
                continue
            key = str(result["key"])
            scores = keys.get(key)
            if scores is None:
                scores = keys[key] = KeyScores(evaluator=evaluator)
            score: Any = result.get("score")
            if type(score) is bool:
                value, label = (1.0 if score else 0.0), "boolean"
            elif score is None or (isinstance(score, float) and math.isnan(score)):
                scores.put(pos, NAN)
                continue
            elif isinstance(score, (int, float)):
                value, label = _finite(score)
                if not label:
                    scores.kinds.add("infinite")
                    scores.put(pos, NAN)
                    continue
            else:
                scores.kinds.add(f"unsupported ({type(score).__name__})")
                scores.put(pos, NAN)
                continue
            scores.kinds.add(label)
            if pos == len(scores.states):  # the usual case: rows arrive in order
                scores.values.append(value)
                scores.states.append(VALUE)
            elif (self.clustered or REPEAT in evaluator) and scores.states[pos] == VALUE:
                scores.values[pos] += value  # another trial or repeat of the same row
                scores.counts[pos] = scores.counts.get(pos, 1) + 1
            else:
                scores.put(pos, VALUE, value)
        return pos

    def finish(self) -> None:
        """Sums of trials and repeats become means (of booleans: rates, so the key is then
        continuous); failed evaluations mark every key of their evaluator as an error on that
        row."""
        for scores in self.keys.values():
            for pos, count in scores.counts.items():
                scores.values[pos] /= count
            if self.clustered and scores.kinds == {"boolean"}:
                scores.kinds = {"continuous"}
            for pos in self.errors.get(scores.evaluator, ()):
                if pos >= len(scores.states) or scores.states[pos] == MISSING:
                    scores.put(pos, ERROR)


def _finite(score: float) -> tuple[float, str]:
    """``(value, "continuous")``, or ``(nan, "")`` for an infinite score; an int past the float
    range (``10**400``) counts as the infinity of its sign, as in ``numeric_score``."""
    try:
        value = float(score)
    except OverflowError:
        return math.nan, ""
    return (value, "continuous") if math.isfinite(value) else (math.nan, "")


def _group_of(record: Mapping[str, Any], group_by: str | None) -> Any:
    if group_by is None:
        return None
    node: Any = record
    for part in group_by.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            extra = record.get("extra")
            if isinstance(extra, Mapping) and group_by in extra:
                return extra[group_by]
            group = record.get("group")
            return group if isinstance(group, (str, int, float, bool)) else None
    return node if isinstance(node, (str, int, float, bool)) or node is None else str(node)


_KIND = re.compile(rb'^\{"kind": "(\w+)"')
_ROW_ID = re.compile(rb'"row_id": ("(?:[^"\\]|\\.)*")')


def _unreadable(line: bytes) -> tuple[Any, str | None]:
    """``(record, None)`` for a line that is JSON, else ``(None, why it is not)``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "nested too deeply to read as JSON"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"


def _decode(path: Path, line: bytes, number: int, run: RunScores) -> dict[str, Any] | None:
    """A record of a run file (``None`` for a corrupt line, noted in ``run.skipped``), or
    ``ValueError`` naming the line."""
    record, why = _unreadable(line)
    if why is not None:
        if number == 1:
            raise ValueError(
                f"{path} is not a run's output file: line 1 is {why} (pass the JSONL file an "
                "`evaluate(..., output=...)` run wrote)"
            )
        # A torn last line is what an interrupted run leaves (resume drops it): only a corrupt
        # line with more lines after it is reported (see ``_scan``).
        run.skipped.append((number, why))
        return None
    if not isinstance(record, dict) or "kind" not in record:
        raise ValueError(
            f"{path}, line {number}: not a record of a run's output file (no `kind`); pass the "
            "JSONL file an `evaluate(..., output=...)` run wrote"
        )
    return record


def _scan(path: Path, run: RunScores, group_by: str | None) -> None:
    """Read a run file once: scores, groups, and where each row's lines are (for the rows shown
    later). A ``row`` line is decoded only for ``group_by``; otherwise its id is enough."""
    offset = 0
    last = 0
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            last = number
            kind = _KIND.match(line)
            if kind is not None and kind.group(1) == b"row" and group_by is None:
                row_id = _row_id(line)
                if row_id is not None:
                    _set(run.row_offsets, run.position(row_id), start)
                    continue
            record = _decode(path, line, number, run)
            if record is None:
                continue
            if record["kind"] == "row":
                pos = run.position(str(record.get("row_id")))
                run.groups[pos] = _group_of(record, group_by)
                _set(run.row_offsets, pos, start)
            elif record["kind"] == "eval":
                results = record.get("results")
                if results is not None and not isinstance(results, list):
                    raise ValueError(
                        f"{show(str(path), PATH_LIMIT)}, line {number}: the eval record of row "
                        f"{show(str(record.get('row_id')))} has `results` "
                        f"{show(results)} ({type(results).__name__}), not a list of results; "
                        "pass the JSONL file an `evaluate(..., output=...)` run wrote"
                    )
                evaluator = str(record.get("evaluator"))
                pos = run.add_eval(
                    str(record.get("row_id")),
                    evaluator,
                    record.get("status"),
                    results,
                )
                offsets = run.eval_offsets.get(evaluator)
                if offsets is None:
                    offsets = run.eval_offsets[evaluator] = array("q")
                _set(offsets, pos, start)
    if run.skipped and run.skipped[-1][0] == last:
        run.skipped.pop()  # the torn last line: its row is reported as missing


def _row_id(line: bytes) -> str | None:
    """The ``row_id`` of a ``row`` line read without decoding the line (``None``: decode it)."""
    found = _ROW_ID.search(line)
    if found is None:
        return None
    raw = found.group(1)
    try:
        return str(json.loads(raw)) if b"\\" in raw else raw[1:-1].decode("utf-8")
    except ValueError:  # not UTF-8, or a bad escape: the line is decoded (and reported)
        return None


def skipped_notes(run: RunScores) -> list[str]:
    """The comparison's notes on ``run``'s corrupt lines (the first ten, then a count)."""
    shown = [
        f"{run.label} run file {show(str(run.source), PATH_LIMIT)}, line {number} skipped: "
        f"{why}; the results it held are missing from the comparison"
        for number, why in run.skipped[:_NOTED]
    ]
    if len(run.skipped) > _NOTED:
        shown.append(
            f"{run.label} run file: {len(run.skipped) - _NOTED} more corrupt line(s) skipped"
        )
    return shown


_NOTED = 10


def read_run(source: Any, label: str, group_by: str | None) -> RunScores:
    """The scores of ``source``: an ``EvaluationResult`` or the path of a run's output file."""
    run = RunScores(label=label, source=source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"`{label}`: no such run file: {path}")
        _scan(path, run, group_by)
        if not run.ids:
            what = "is empty" if path.stat().st_size == 0 else "holds no row records"
            raise ValueError(
                f"`{label}`: the run file {show(str(path), PATH_LIMIT)} {what}, so there is "
                "nothing to compare; pass the JSONL file an `evaluate(..., output=...)` run "
                "wrote after scoring rows"
            )
    elif hasattr(source, "rows") and hasattr(source, "aggregates"):
        for rec in source.rows:
            pos = run.position(str(rec.get("id")))
            run.groups[pos] = _group_of(rec, group_by)
            for name, entry in (rec.get("evaluations") or {}).items():
                run.add_eval(str(rec.get("id")), name, entry.get("status"), entry.get("results"))
    else:
        raise TypeError(
            f"`{label}` must be an EvaluationResult or the path of a run's output JSONL file; "
            f"got {type(source).__name__}"
        )
    run.finish()
    return run


def record_at(handle: BinaryIO, offsets: array[int], pos: int, row_id: str) -> Any:
    """The record whose line starts at ``offsets[pos]`` in the open file; ``None`` if none.

    A line that is not JSON (the scan took only its ``row_id``) is a ``ValueError`` naming the
    file, the line and the row."""
    if pos >= len(offsets) or offsets[pos] < 0:
        return None
    handle.seek(offsets[pos])
    record, why = _unreadable(handle.readline())
    if why is not None:
        raise ValueError(
            f"{show(str(handle.name), PATH_LIMIT)}, line {_line_number(handle, offsets[pos])} "
            f"(row {show(row_id)}) is {why}; repair or remove that line, or run the evaluation "
            "again"
        )
    return record


def _line_number(handle: BinaryIO, offset: int) -> int:
    """The number of the line starting at byte ``offset`` of the open file."""
    handle.seek(0)
    count = 1
    while offset > 0:
        chunk = handle.read(min(offset, 1 << 20))
        if not chunk:
            break
        count += chunk.count(b"\n")
        offset -= len(chunk)
    return count


def row_details(run: RunScores, wanted: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Outputs and per-key comments of the rows ``wanted`` (a second pass over a file)."""
    want = set(wanted)
    out: dict[str, dict[str, Any]] = {}
    if not want:
        return out

    def entry(row_id: str) -> dict[str, Any]:
        return out.setdefault(row_id, {"outputs": None, "comments": {}})

    source = run.source
    if isinstance(source, (str, os.PathLike)):
        with Path(source).open("rb") as handle:
            for row_id in want:
                pos = run.ids[row_id]
                item = entry(row_id)
                row = record_at(handle, run.row_offsets, pos, row_id)
                if row is not None:
                    item["outputs"] = row.get("outputs")
                for offsets in run.eval_offsets.values():
                    record = record_at(handle, offsets, pos, row_id)
                    if record is not None:
                        _comments(item, record)
    else:
        for rec in source.rows:
            row_id = str(rec.get("id"))
            if row_id in want:
                item = entry(row_id)
                item["outputs"] = rec.get("outputs")
                for name, value in (rec.get("evaluations") or {}).items():
                    _comments(item, {"evaluator": name, **value})
    return out


def _comments(item: dict[str, Any], record: Mapping[str, Any]) -> None:
    if record.get("status") != "success":  # a failed evaluation has no comments to show
        return
    for result in record.get("results") or ():
        if isinstance(result, Mapping) and "key" in result:
            item["comments"][str(result["key"])] = result.get("comment")
