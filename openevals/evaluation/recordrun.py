"""Recording a finished run in a run store (``evaluate(..., store=...)``, the CLI).

:func:`record_result` writes what the store keeps of an :class:`EvaluationResult`: the git
commit of the working directory (when it is a repository), the dataset's fingerprint (a hash
of its file, or of its row ids), each evaluator's description (its
:class:`~openevals._contract.EvaluatorInfo`, and for a judge of this package a hash of its
prompt and its options), the models, cost and time, the aggregates with their intervals,
groups, binned histograms, and the rows (chunks of consecutive result rows, made by
:func:`row_chunks`; secrets were removed when the run recorded them), with the path of the
run's ``output=`` file when it has one.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals._repr import PATH_LIMIT, show
from openevals.data.columns import FIELDS
from openevals.data.encoding import escape_surrogates, storable_text
from openevals.evaluation.evaluators import RunEvaluator
from openevals.evaluation.result import EvaluationResult
from openevals.store.runs import RowChunk, RunStore, StoredRun, open_store

if TYPE_CHECKING:
    from openevals.evaluation.blocks import ColumnBlock

__all__ = [
    "describe_evaluator",
    "git_commit",
    "histogram",
    "record_result",
    "row_chunks",
    "rows_ready",
]

_BINS = 20


def git_commit(cwd: str | None = None) -> str | None:
    """The commit checked out in ``cwd`` (the working directory), or ``None`` outside a git
    repository or without git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) >= 7 else None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def describe_evaluator(ev: RunEvaluator) -> dict[str, Any]:
    """What the store keeps of one evaluator: name, info, and for a judge of this package the
    hash of its prompt and its options."""
    out: dict[str, Any] = {"name": ev.name}
    info = ev.info
    if info is not None:
        out.update(
            run_name=info.run_name,
            feedback_keys=list(info.feedback_keys),
            model=info.model,
            judge=info.judge,
            pure=info.pure,
            score_type=info.score_type,
        )
    if ev.fields:
        out["fields"] = dict(ev.fields)
    if info is not None and info.judge:
        from openevals._judge.shell import judge_core

        try:
            core = judge_core(ev.fn)
        except TypeError:
            return out
        options = core.options
        if core.prompt.template is not None:
            out["prompt_hash"] = _hash(core.prompt.template)
        out["options"] = {
            "model": options.model,
            "continuous": options.continuous,
            "choices": list(options.choices) if options.choices else None,
            "use_reasoning": options.use_reasoning,
            "samples": options.samples,
            "few_shot_examples": len(options.few_shot_examples or ()),
            "system_hash": _hash(options.system) if options.system else None,
        }
    return out


def histogram(values: Sequence[Any]) -> dict[str, Any] | None:
    """``values`` binned for a chart: ``{"edges": [...], "counts": [...]}`` (booleans: two
    bins, False and True); ``None`` without finite values."""
    import numpy as np

    if isinstance(values, array) and values.typecode == "d":
        floats = np.frombuffer(values, dtype=np.float64)
    else:
        floats = np.array(
            [float(v) for v in values if isinstance(v, (int, float))], dtype=np.float64
        )
    finite = floats[np.isfinite(floats)]
    if not finite.size:
        return None
    low, high = float(finite.min()), float(finite.max())
    if high == low:
        return {"edges": [low, high], "counts": [int(finite.size)]}
    bins = 2 if bool(np.all((finite == 0.0) | (finite == 1.0))) else _BINS
    width = (high - low) / bins
    slots = np.minimum(((finite - low) / width).astype(np.int64), bins - 1)
    counts = np.bincount(slots, minlength=bins)
    return {
        "edges": [low + i * width for i in range(bins + 1)],
        "counts": [int(c) for c in counts],
    }


CHUNK_ROWS = 1024
"""Rows per stored chunk for rows that are dicts (a columnar block is stored as one chunk)."""

_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
_RESULT_ORDER = ("key", "score", "comment", "metadata")
_BLOCK_FIELDS = frozenset(("id", *FIELDS))
_SCALARS = (str, float, int, bool, type(None))


def row_chunks(rows: Sequence[Any], digest: Any = None) -> Iterator[RowChunk]:
    """A result's ``rows`` as the store's chunks, in data order (each row id also goes into
    ``digest`` when given). Rows still kept as a columnar block become one chunk written
    from its columns, without building a dict per row."""
    from openevals.evaluation.blocks import ColumnBlock
    from openevals.evaluation.store import ResultRows

    parts: Iterable[Any] = rows.iter_parts() if isinstance(rows, ResultRows) else [rows]
    first = 0
    for part in parts:
        made = _block_chunk(part, first) if isinstance(part, ColumnBlock) else None
        if made is not None:
            chunks: Iterable[RowChunk] = [made]
        else:
            listed = part.rows() if isinstance(part, ColumnBlock) else part
            chunks = (
                _dict_chunk(listed[at : at + CHUNK_ROWS], first + at)
                for at in range(0, len(listed), CHUNK_ROWS)
            )
        for chunk in chunks:
            if digest is not None and chunk.ids:
                text = "\n".join(chunk.ids) + "\n"
                digest.update(text.encode("utf-8", "backslashreplace"))
            first += len(chunk)
            yield chunk


def _json_text(value: Any) -> str | None:
    """``value``'s JSON text, safe to write as UTF-8; ``None`` when it cannot be encoded."""
    try:
        text = _ENCODER.encode(value)
    except (ValueError, RecursionError, TypeError):
        return None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return escape_surrogates(text)
    return text


def _dict_chunk(rows: Sequence[Mapping[str, Any]], first: int) -> RowChunk:
    body = _json_text({"rows": rows})
    if body is None:  # a value the encoder refuses: each row encoded on its own
        body = '{"rows": [' + ", ".join(storable_text(row) for row in rows) + "]}"
    scores: dict[str, list[Any]] = {}
    _add_scores(
        scores,
        [
            [
                r
                for entry in (row.get("evaluations") or {}).values()
                for r in entry.get("results") or ()
            ]
            for row in rows
        ],
    )
    return RowChunk(
        first=first,
        ids=[str(row.get("id")) for row in rows],
        errors=[row.get("status") == "error" for row in rows],
        scores=scores,
        body=body,
    )


class _Shape:
    """The columns of a chunk being written (see :mod:`openevals.store._chunks`)."""

    def __init__(self) -> None:
        self.columns: list[list[Any]] = []

    def column(self, values: list[Any]) -> list[Any]:
        self.columns.append(values)
        return ["c", len(self.columns) - 1]

    def same(self, values: list[Any]) -> list[Any]:
        """One value for all rows when every row has the same scalar (of the same type: ``1``,
        ``1.0`` and ``True`` are equal but not the same), else a column."""
        head = values[0]
        kind = type(head)
        if (
            kind in _SCALARS
            and values.count(head) == len(values)
            and (head is None or set(map(type, values)) == {kind})
        ):
            return ["v", head]
        return self.column(values)


def _block_chunk(block: ColumnBlock, first: int) -> RowChunk | None:
    """A columnar block as one chunk (``None`` when its rows do not all have the same columns:
    those are stored as dicts)."""
    records, n = block.records, len(block)
    if not n:
        return None
    columns = records[0].keys()
    if not all(map(columns.__eq__, map(dict.keys, records))):
        return None
    shape = _Shape()
    ids = [block.row_id(pos) for pos in range(n)]
    fields = shape.column(records)
    row: dict[str, Any] = {
        "id": ["i"],
        "index": ["n", block.start],
        **{name: ["g", fields[1], name] for name in FIELDS},
    }
    extra = [name for name in columns if name not in _BLOCK_FIELDS]
    if extra:
        row["extra"] = ["o", {name: ["g", fields[1], name] for name in extra}]
    if block.groups is not None:
        row["group"] = shape.column(block.groups)
    evaluations: dict[str, Any] = {}
    scores: dict[str, list[Any]] = {}
    failed: set[int] = set()
    for number, name in enumerate(block.names):
        column = block.columns[number]
        failed.update(column.errors)
        evaluations[name] = ["o", _evaluation(shape, block, number, scores)]
    row["evaluations"] = ["o", evaluations]
    errors = [pos in failed for pos in range(n)] if failed else [False] * n
    row["status"] = (
        shape.column(["error" if bad else "success" for bad in errors])
        if failed
        else ["v", "success"]
    )
    body = _json_text({"n": n, "shape": ["o", row], "columns": shape.columns})
    if body is None:
        return None
    return RowChunk(first=first, ids=ids, errors=errors, scores=scores, body=body)


def _evaluation(
    shape: _Shape, block: ColumnBlock, number: int, scores: dict[str, list[Any]]
) -> dict[str, Any]:
    """The shape of one evaluator's entry of a block's rows (what ``ColumnBlock.rows`` makes),
    adding its scores to ``scores``."""
    column, n = block.columns[number], len(block)
    results = column.results
    errors, usage, cost = column.errors, column.usage, column.cost
    firsts: list[Any] = [found[0] if len(found) == 1 else None for found in results]
    if set(map(type, firsts)) == {dict} and set(map(tuple, firsts)) == {_RESULT_ORDER}:
        keys = [first["key"] for first in firsts]
        values = [first["score"] for first in firsts]
        stored = keys.count(keys[0]) == n and scores.setdefault(str(keys[0]), values) is values
        results_node: list[Any] = [
            "l",
            [
                [
                    "o",
                    {
                        "key": shape.same(keys),
                        "score": ["s", str(keys[0])] if stored else shape.column(values),
                        "comment": shape.same([first["comment"] for first in firsts]),
                        "metadata": shape.same([first["metadata"] for first in firsts]),
                    },
                ]
            ],
        ]
        if keys.count(keys[0]) != n:
            _add_scores(scores, results)
    else:
        results_node = shape.column(results)
        _add_scores(scores, results)
    if block.cached:
        counts = [column.counts.get(pos, (0, 0)) for pos in range(n)]
        cache = shape.column([{"hits": c[0], "misses": c[1]} for c in counts])
    else:
        cache = ["v", None]
    return {
        "status": shape.column(["error" if pos in errors else "success" for pos in range(n)])
        if errors
        else ["v", "success"],
        "results": results_node,
        "error": shape.column([errors.get(pos) for pos in range(n)]) if errors else ["v", None],
        "elapsed_sec": shape.same(column.elapsed),
        "usage": shape.column([usage.get(pos) for pos in range(n)]) if usage else ["v", None],
        "cost_usd": shape.column([cost.get(pos) for pos in range(n)]) if cost else ["v", None],
        "model": ["v", block.models[number]],
        "cache": cache,
        "resumed": ["v", False],
    }


def _add_scores(scores: dict[str, list[Any]], results: Sequence[Sequence[Any]]) -> None:
    """Each row's first score per key in ``results`` (per row, its results; keys already in
    ``scores``, from an earlier evaluator, keep theirs)."""
    n = len(results)
    mine: dict[str, list[Any]] = {}
    for at, found in enumerate(results):
        for result in found:
            if isinstance(result, dict) and "key" in result:
                column = mine.setdefault(str(result["key"]), [None] * n)
                if column[at] is None:
                    column[at] = result.get("score")
    for key, values in mine.items():
        scores.setdefault(key, values)


def _store_rows(opened: RunStore, run_id: int, rows: Sequence[Any]) -> str:
    """Write ``rows`` (a result's rows); returns the dataset fingerprint (a hash of the row
    ids)."""
    digest = hashlib.blake2b(digest_size=12)
    opened.add_chunks(run_id, row_chunks(rows, digest))
    return digest.hexdigest()


def rows_ready(opened: RunStore, run: StoredRun) -> StoredRun:
    """``run`` with its rows in the store: a run recorded with its rows left in its ``output=``
    file has them read from the file (once; the first viewer or ``load_run`` does it).

    Raises:
        ValueError: the file is gone or is no longer a run's output file.
    """
    if run.details.get("rows_in") != "file":
        return run
    path = run.output or ""
    if not Path(path).is_file():
        raise ValueError(
            f"the rows of run {run.id} are in its output file {show(path, PATH_LIMIT)}, which no "
            "longer exists; restore the file to see them"
        )
    from openevals.evaluation.runfile import load_run_file

    fingerprint = _store_rows(opened, run.id, load_run_file(path).rows)
    details = {**run.details, "rows_in": "store"}
    opened.update(run.id, details=details, fingerprint=run.fingerprint or fingerprint)
    return opened.run(run.id)


def _file_hash(dataset: str | None) -> str | None:
    """The dataset's fingerprint when it is one file: a hash of its bytes."""
    if dataset is None or not Path(dataset).is_file():
        return None
    digest = hashlib.blake2b(digest_size=12)
    with Path(dataset).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_result(
    store: Any,
    result: EvaluationResult,
    *,
    kind: str = "run",
    dataset: str | None = None,
    evaluators: Sequence[RunEvaluator] | None = None,
    output: str | None = None,
    name: str | None = None,
    tags: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> int:
    """Record ``result`` in ``store`` (``True``, a path or URL, or a ``RunStore``); returns the
    run's id, also set as ``result.summary["run_id"]``. ``extra`` adds report data to the
    record's details (a calibration or comparison).

    The rows are written now, also for a run with an ``output`` file (the store keeps its path
    too): a viewer then opens even a large run at once, where copying the rows from the file on
    first use took minutes for a million rows (records made that way by earlier versions are
    still copied when first needed, :func:`rows_ready`). The dataset's fingerprint is a hash of
    its file, or of its row ids."""
    described = (
        [describe_evaluator(ev) for ev in evaluators]
        if evaluators is not None
        else [{"name": n} for n in result.evaluators]
    )
    summary = result.summary
    models = [str(e["model"]) for e in (summary.get("evaluators") or {}).values() if e.get("model")]
    with open_store(store) as opened:
        run_id = opened.begin(
            kind=kind,
            name=name,
            dataset=dataset,
            fingerprint=_file_hash(dataset),
            git_commit=git_commit(),
            evaluators=described,
            models=models,
            output=output,
            tags=tags,
        )
        fingerprint = _store_rows(opened, run_id, result.rows)
        details: dict[str, Any] = {
            "rows_in": "store",
            "summary": summary,
            "by_group": result.by_group,
            "batch_metrics": result.batch_metrics,
            "histograms": {k: histogram(v) for k, v in result.histograms.items()},
            **(dict(extra) if extra else {}),
        }
        if result.pairwise:
            details["pairwise"] = {k: v.to_dict() for k, v in result.pairwise.items()}
        opened.finish(
            run_id,
            aggregates=result.aggregates,
            details=details,
            rows=len(result.rows),
            error_rows=int(summary.get("rows_with_errors") or 0),
            cost_usd=summary.get("cost_usd"),
            elapsed_sec=summary.get("elapsed_sec"),
        )
        if dataset is None:
            opened.update(run_id, details=None, fingerprint=fingerprint)
    summary["run_id"] = run_id
    return run_id
