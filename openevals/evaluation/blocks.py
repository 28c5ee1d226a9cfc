"""The columnar path of the batch runner: pure evaluators over blocks of rows.

When every evaluator is cheap and pure (inline) and there is no target and no ``systems=``, rows
are taken :data:`BLOCK_ROWS` raw records at a time. A block of plain records (dicts with string
keys, storable as JSON: checked with one encoder call) is kept as columns (:class:`ColumnBlock`);
each evaluator's ``batch`` form (:mod:`.engines.batch_forms`) scores it in one call, rows it
cannot score are called one by one, and the block is counted, written and stored whole
(:meth:`.recording.RunRecords.add_block`). Any other block, and every block of a resumed run,
goes through the per-row code (:class:`~.executor.RowExecutor`). Results, the ``output=`` file
and the report equal the per-row path's (``tests/evaluation/test_blocks.py``). A Ray worker
takes the same path on the rows it is sent; :func:`batch_first` scores the pure evaluators of a
run that also has judges a block at a time.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openevals.data.columns import GRAPHRAG_COLUMNS
from openevals.data.encoding import encode, no_gc_pauses
from openevals.data.row_ids import RowIds, example_text, row_fingerprint
from openevals.data.rows import (
    check_id,
    group_of,
    storable_check,
)
from openevals.evaluation.engines.batch_forms import BatchForm, batch_form, run_batch_form
from openevals.evaluation.evaluators import Outcome, usage_of
from openevals.evaluation.pricing import estimate_cost
from openevals.evaluation.records import (
    ErrorInfo,
    Evaluation,
    Recorder,
    ResultRow,
    row_record,
)
from openevals.utils import _needs_langsmith

if TYPE_CHECKING:
    from openevals.data.rows import Row, RowReader
    from openevals.evaluation.evaluators import RunEvaluator
    from openevals.evaluation.executor import EngineRun


__all__ = [
    "BLOCK_ROWS",
    "ColumnBlock",
    "EvalColumn",
    "batch_first",
    "block_of_rows",
    "columnar_fits",
    "pure_batch_forms",
    "run_blocks",
]

BLOCK_ROWS = 1024
"""Rows per block."""

_ID = "id"


def columnar_fits(run: EngineRun) -> bool:
    """May ``run`` take the columnar path (every evaluator inline, no target, no systems)?"""
    return (
        run.target is None
        and run.pairwise is None
        and bool(run.evaluators)
        and all(ev.inline for ev in run.evaluators)
    )


# --------------------------------------------------------------------------- the columns


@dataclass
class EvalColumn:
    """One evaluator's outcomes over a block (positions are row offsets in the block)."""

    results: list[list[dict[str, Any]]]
    elapsed: list[float]
    errors: dict[int, ErrorInfo] = field(default_factory=dict)
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)
    usage: dict[int, dict[str, int]] = field(default_factory=dict)
    cost: dict[int, float] = field(default_factory=dict)

    def outcome(self, pos: int, cached: bool) -> Outcome:
        """Row ``pos``'s outcome, as a worker sends it back."""
        counts = self.counts.get(pos, (0, 0)) if cached else None
        return self.results[pos], self.errors.get(pos), self.elapsed[pos], counts


@dataclass
class ColumnBlock:
    """Consecutive rows scored on the columnar path, kept as columns (a :class:`~.store.Part`)."""

    start: int
    records: list[dict[str, Any]]
    """The raw records (shallow copies), with their ``id`` key when they had one."""
    ids: list[str | None]
    """The row ids; ``None`` where a row without an ``id`` has not been numbered yet (see
    :meth:`settle`: a run without an ``output=`` file numbers them only when they are read)."""
    names: list[str]
    models: list[str | None]
    columns: list[EvalColumn]
    fingerprints: list[str] = field(default_factory=list)
    """The evaluators' fingerprints, for the ``eval`` lines."""
    row_fps: list[str] | None = None
    """The rows' fingerprints, made before secrets are taken out of the records."""
    groups: list[str | None] | None = None
    cached: bool = False

    def __len__(self) -> int:
        return len(self.records)

    def row_id(self, pos: int) -> str:
        row_id = self.ids[pos]
        if row_id is None:
            raise RuntimeError(
                f"row {self.start + pos} has no id yet: the block must be settled first"
            )
        return row_id

    def settle(self, ids: RowIds, *, fingerprints: bool = False) -> bool:
        """Number the rows without an id, in order (``ids`` must have numbered every earlier
        row), and with ``fingerprints`` make :attr:`row_fps` from the same encoding; returns
        whether there were rows to number."""
        missing = None in self.ids
        if not missing and not fingerprints:
            return False
        records, row_ids = self.records, self.ids
        fps: list[str] = []
        for pos, record in enumerate(records):
            text = example_text(record)
            if row_ids[pos] is None:
                row_ids[pos] = ids.number_text(text)
            if fingerprints:
                fps.append(row_fingerprint(record, text))
        if fingerprints:
            self.row_fps = fps
        return missing

    def fields(self, pos: int) -> dict[str, Any]:
        record = self.records[pos]
        return {k: v for k, v in record.items() if k != _ID} if _ID in record else record

    def evaluation(self, number: int, pos: int) -> Evaluation:
        column = self.columns[number]
        return Recorder.evaluation(
            column.outcome(pos, self.cached),
            usage=column.usage.get(pos),
            cost_usd=column.cost.get(pos),
            model=self.models[number],
        )

    def _record(self, pos: int, evaluations: dict[str, Evaluation] | None = None) -> ResultRow:
        """Row ``pos``'s result dict (:func:`~.records.row_record`)."""
        groups = self.groups
        group = groups[pos] if groups is not None else None
        return row_record(
            self.row_id(pos),
            self.start + pos,
            self.fields(pos),
            group=group,
            grouped=groups is not None,
            evaluations=evaluations,
        )

    def rows(self) -> list[ResultRow]:
        """The block as result dicts, as the per-row path makes them."""
        out: list[ResultRow] = []
        for pos in range(len(self.records)):
            evaluations = {
                name: self.evaluation(number, pos) for number, name in enumerate(self.names)
            }
            rec = self._record(pos, evaluations)
            failed = any(e["status"] != "success" for e in evaluations.values())
            rec["status"] = "error" if failed else "success"
            out.append(rec)
        return out

    def long_columns(self, grouped: bool) -> dict[str, list[Any]] | None:
        """The block's part of ``EvaluationResult.to_pandas()``'s long form, read from the
        columns (see :func:`~.frames.long_columns`); ``None`` unless every pair has exactly one
        result and no error (then the result dicts are read instead)."""
        columns = self.columns
        if any(column.errors for column in columns):
            return None
        if any(len(results) != 1 for column in columns for results in column.results):
            return None
        n, width = len(self.records), len(columns)

        def woven(per_evaluator: list[list[Any]]) -> list[Any]:
            out: list[Any] = [None] * (n * width)
            for number, values in enumerate(per_evaluator):
                out[number::width] = values
            return out

        ids = [self.row_id(pos) for pos in range(n)]
        indexes = list(range(self.start, self.start + n))
        out = {
            "id": woven([ids] * width),
            "index": woven([indexes] * width),
            "evaluator": woven([[name] * n for name in self.names]),
            "key": woven([[r[0]["key"] for r in c.results] for c in columns]),
            "score": woven([[r[0]["score"] for r in c.results] for c in columns]),
            "comment": woven([[r[0].get("comment") for r in c.results] for c in columns]),
            "error": [None] * (n * width),
            "model": woven([[model] * n for model in self.models]),
            "tokens": woven(
                [[_total_tokens(c.usage.get(pos)) for pos in range(n)] for c in columns]
            ),
            "cost": woven([[c.cost.get(pos) for pos in range(n)] for c in columns]),
        }
        if grouped:
            groups = self.groups if self.groups is not None else [None] * n
            out["group"] = woven([groups] * width)
        return out

    def lines(self) -> list[str]:
        """The block's ``output=`` lines: per row its ``row`` line, then one ``eval`` line per
        evaluator (the order the per-row path writes them in), not yet cleared of secrets."""
        out: list[str] = []
        writers = [_EvalLines(self, number) for number in range(len(self.names))]
        for pos in range(len(self.records)):
            row_id, index = self.row_id(pos), self.start + pos
            rec = self._record(pos)
            row_fp = self.row_fps[pos] if self.row_fps else row_fingerprint(self.fields(pos))
            out.append(encode(Recorder.row_line(rec, row_fp)))
            text_id = _string(row_id)
            for writer in writers:
                out.append(writer.line(pos, row_id, text_id, index, row_fp))
        return out


def _total_tokens(usage: Mapping[str, Any] | None) -> Any:
    return usage.get("total_tokens") if usage else None


_RESULT_ORDER = ("key", "score", "comment", "metadata")
_string = json.encoder.encode_basestring  # JSON text of a str, as the record encoder writes it


def _scalar(value: Any) -> str | None:
    """The JSON text of a score the record encoder would write, for plain scalars; else None."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return float.__repr__(value) if math.isfinite(value) else None
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    return None


class _EvalLines:
    """One evaluator's ``eval`` lines of a block, written as text from their constant parts;
    a pair that is not plain (an error, usage, a structured score or comment) goes through the
    record encoder. Either way the text is what :func:`~openevals.data.encoding.encode` writes for the line."""

    def __init__(self, block: ColumnBlock, number: int) -> None:
        self.block, self.number = block, number
        self.column = block.columns[number]
        self.name = block.names[number]
        self.head = ', "evaluator": ' + _string(self.name) + ', "status": "success", "results": '
        model = block.models[number]
        model_text = "null" if model is None else _string(model)
        cache = '{"hits": 0, "misses": 0}' if block.cached else "null"
        self.fingerprint = block.fingerprints[number]
        self.tail = (
            f', "usage": null, "cost_usd": null, "model": {model_text}, "cache": {cache}, '
            f'"evaluator_fp": {_string(self.fingerprint)}, "row_fp": "'
        )
        self.keys: dict[str, str] = {}

    def _results(self, results: list[dict[str, Any]]) -> str | None:
        if len(results) != 1:
            return None
        result = results[0]
        if type(result) is not dict or tuple(result) != _RESULT_ORDER:
            return None
        key, comment = result["key"], result["comment"]
        score = _scalar(result["score"])
        if score is None or result["metadata"] is not None or type(key) is not str:
            return None
        if comment is None:
            comment_text = "null"
        elif type(comment) is str:
            comment_text = _string(comment)
        else:
            return None
        key_text = self.keys.get(key)
        if key_text is None:
            key_text = self.keys[key] = _string(key)
        return f'[{{"key": {key_text}, "score": {score}, "comment": {comment_text}, "metadata": null}}]'

    def line(self, pos: int, row_id: str, text_id: str, index: int, row_fp: str) -> str:
        column = self.column
        elapsed = column.elapsed[pos]
        results = None
        if (
            pos not in column.errors
            and pos not in column.counts
            and pos not in column.usage
            and type(elapsed) is float
            and math.isfinite(elapsed)
        ):
            results = self._results(column.results[pos])
        if results is None:
            entry = self.block.evaluation(self.number, pos)
            line = Recorder.eval_line(
                row_id, index, self.name, entry, evaluator_fp=self.fingerprint, row_fp=row_fp
            )
            return encode(line)
        return (
            f'{{"kind": "eval", "row_id": {text_id}, "index": {index}{self.head}{results}'
            f', "error": null, "elapsed_sec": {float.__repr__(elapsed)}{self.tail}{row_fp}"}}'
        )


# --------------------------------------------------------------------------- the run


def pure_batch_forms(evaluators: Sequence[RunEvaluator]) -> dict[str, BatchForm]:
    """The batch forms of the cheap pure (inline) evaluators, by name; none while LangSmith
    tracing is on (each call is then traced as usual)."""
    found = (
        {} if _needs_langsmith() else {ev.name: batch_form(ev) for ev in evaluators if ev.inline}
    )
    return {name: form for name, form in found.items() if form is not None}


async def run_blocks(run: EngineRun) -> None:
    """Process every row of ``run`` block by block (see the module docs)."""
    forms = pure_batch_forms(run.evaluators)
    resumed = bool(run.previous.evals or run.previous.rows)
    while True:
        with no_gc_pauses():  # the collector runs between blocks (see data.encoding.no_gc_pauses)
            more = await _one_block(run, forms, resumed)
        if not more:
            return
        await asyncio.sleep(0)


async def _one_block(run: EngineRun, forms: dict[str, BatchForm], resumed: bool) -> bool:
    """Read, score and record the next block; ``False`` at the end of the data."""
    reader = run.reader
    if reader is None:  # rows handed over already normalised (a distributed worker)
        rows = [row for row in (run.next_row() for _ in range(BLOCK_ROWS)) if row is not None]
        if not rows:
            return False
        # Rows that cannot be stored or were partly scored before take the per-row code.
        fresh = not resumed and all(
            row.problem is None and not run.previous.finished(row) for row in rows
        )
        block = block_of_rows(run, rows) if fresh else None
    else:
        start, records = reader.raw_block(BLOCK_ROWS)
        if not records:
            return False
        block = None if resumed else _plain_block(run, reader, start, records)
        if block is None:
            rows = [reader.normalize(raw, start + i) for i, raw in enumerate(records)]
    if block is not None:
        await _score_block(run, forms, block)
        run.add_block(block)
    else:
        await _rows_one_by_one(run, forms, rows)
    return True


def _plain_block(
    run: EngineRun, reader: RowReader, start: int, raws: list[Any]
) -> ColumnBlock | None:
    """``raws`` as a :class:`ColumnBlock` (not scored yet), or ``None`` when one of them needs
    the per-row code."""
    if not all(type(raw) is dict for raw in raws):
        return None
    keys: set[Any] = set().union(*raws)
    if not all(type(k) is str for k in keys) or not keys.isdisjoint(GRAPHRAG_COLUMNS):
        return None
    # The caller's dicts are copied (a later change to them must not change the results).
    records: list[dict[str, Any]] = raws if reader.owned else list(map(dict, raws))
    if not reader.known_storable(start, start + len(records)):
        try:  # one encoder call proves every record of the block can be stored
            storable_check(records)
        except Exception:
            return None
    ids: list[str | None] = [None] * len(records)  # numbered later (ColumnBlock.settle)
    if _ID in keys:
        given: list[Any] = [record.get(_ID) for record in records]
        if all(type(i) is str and i for i in given) and reader.claim_all(given, start):
            ids = given  # every id a non-empty str, none seen before: claimed at once
        else:
            for pos, value in enumerate(given):
                try:
                    explicit = check_id(value, start + pos, reader.source)
                    if explicit is not None:
                        reader.claim(explicit, start + pos)
                except (TypeError, ValueError):  # a bad or taken id: an error row, per row
                    return None
                ids[pos] = explicit
    if None in ids:
        reader.ids.defer()
    return _new_block(run, start, records, ids)


def block_of_rows(
    run: EngineRun, rows: Sequence[Row], columns: list[EvalColumn] | None = None
) -> ColumnBlock:
    """A :class:`ColumnBlock` of consecutive normalised rows (their ids known), with the
    evaluators' ``columns`` when they are already scored."""
    ids: list[str | None] = [row.id for row in rows]
    return _new_block(run, rows[0].index, [row.fields for row in rows], ids, columns)


def _new_block(
    run: EngineRun,
    start: int,
    records: list[dict[str, Any]],
    ids: list[str | None],
    columns: list[EvalColumn] | None = None,
) -> ColumnBlock:
    evaluators = run.evaluators
    block = ColumnBlock(
        start=start,
        records=records,
        ids=ids,
        names=[ev.name for ev in evaluators],
        models=[ev.info.model if ev.info is not None else None for ev in evaluators],
        fingerprints=[ev.fingerprint for ev in evaluators],
        columns=[] if columns is None else columns,
        cached=run.cache is not None,
    )
    group_by = run.options.group_by
    if group_by is not None:
        block.groups = [group_of(block.fields(pos), group_by) for pos in range(len(records))]
    return block


async def _score_block(run: EngineRun, forms: dict[str, BatchForm], block: ColumnBlock) -> None:
    size = len(block)
    fields: list[Mapping[str, Any]] = []  # the rows' fields (without ``id``), made when needed
    shared: dict[str, list[Any]] = {}  # columns of the records, read once for every form
    for ev in run.evaluators:
        form = forms.get(ev.name)
        outcomes: list[Any] = [None] * size
        if form is not None and size >= 2:
            # A form that reads only its named columns can read the records as they are.
            direct = not ev.fields and (ev.accepts is None or ev.accepts.issuperset(form.columns))
            if not direct and not fields:
                fields = [block.fields(pos) for pos in range(size)]
            outcomes = await (
                run_batch_form(ev, form, block.records, run.cache, shared)
                if direct
                else run_batch_form(ev, form, fields, run.cache)
            )
        if None in outcomes and not fields:
            fields = [block.fields(pos) for pos in range(size)]
        block.columns.append(_column(run, ev, fields, outcomes))


def _column(
    run: EngineRun, ev: RunEvaluator, fields: Sequence[Mapping[str, Any]], outcomes: list[Any]
) -> EvalColumn:
    """One evaluator's column: the batch outcomes, and per-row calls where there are none."""
    if None not in outcomes:  # the batch form scored every row
        column = EvalColumn(
            results=[outcome[0] for outcome in outcomes],
            elapsed=[outcome[2] for outcome in outcomes],
        )
    else:
        column = EvalColumn(results=[], elapsed=[])
        for pos, outcome in enumerate(outcomes):
            if outcome is None:
                results, error, took, counts = run.calls.run_inline(ev, fields[pos])
                if error is not None:
                    column.errors[pos] = error
                if counts is not None and any(counts):
                    column.counts[pos] = counts
                outcome = (results, error, took, None)
            column.results.append(outcome[0])
            column.elapsed.append(outcome[2])
    metadata = [r.get("metadata") for results in column.results for r in results]
    if metadata.count(None) != len(metadata):  # results that may report token usage
        model = ev.info.model if ev.info is not None else None
        for pos, results in enumerate(column.results):
            usage = usage_of(results)
            if usage is not None:
                column.usage[pos] = usage
                cost = estimate_cost(model, usage, run.prices)
                if cost is not None:
                    column.cost[pos] = cost
    return column


async def batch_first(run: EngineRun, forms: Mapping[str, BatchForm], rows: Sequence[Row]) -> None:
    """Score ``rows`` with the evaluators' batch forms (where 2+ rows are left for one); the
    outcomes wait in ``run.calls.batched`` for the per-row code to take them."""
    for ev in run.evaluators:
        form = forms.get(ev.name)
        if form is None:
            continue
        todo = [
            row for row in rows if row.problem is None and ev.name not in run.previous.finished(row)
        ]
        if len(todo) < 2:
            continue
        outcomes = await run_batch_form(ev, form, [row.fields for row in todo], run.cache)
        for row, outcome in zip(todo, outcomes, strict=True):
            if outcome is not None:
                run.calls.batched[(row.id, ev.name)] = outcome


async def _rows_one_by_one(run: EngineRun, forms: dict[str, BatchForm], rows: list[Row]) -> None:
    """A block the columns cannot hold: the shared per-row code, row by row, with the
    outcomes of the batch forms computed first."""
    await batch_first(run, forms, rows)
    with run.block():
        for row in rows:
            await run.executor.process_row(row)
