"""How one reference step is compared with one executed step (for :mod:`openevals.rag.steps`).

Every comparison except the retrieval rule is an equality: the executed step's output, read the
way the reference step says (its *spec*: media type, required columns, order), must give the same
hashable *key* as the reference output. Keys let the matcher group steps by hashing instead of
comparing every pair, which is what keeps a level of thousands of steps fast.

Retrieval steps (by default, steps named ``retrieval``) are scored instead: recall@k of the ids
in the executed step's output against the ids of the reference step's output.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show

SPARQL_RESULTS = "application/sparql-results+json"
JSON = "application/json"
CSV = "text/csv"
TSV = "text/tab-separated-values"
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_OK_STATUSES = (None, "success")


class Unparsable(Exception):
    """An executed step's output cannot be read the way the reference asks (a mismatch)."""


# --------------------------------------------------------------------------- canonical values


def canon(value: Any) -> Hashable:
    """A hashable form of a JSON value in which equal JSON values are equal.

    ``1`` and ``1.0`` are the same JSON number; ``true`` and ``1`` are not.
    """
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("num", int(value))
        return ("num", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, Mapping):
        return ("obj", tuple(sorted((str(k), canon(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("arr", tuple(canon(v) for v in value))
    return ("other", repr(value))


def maybe_json(value: Any) -> Any:
    """Parse a JSON object/array given as text (tool arguments often are); else return as is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _load_json(value: Any) -> Any:
    if isinstance(value, (str, bytes, bytearray)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise Unparsable(f"not valid JSON ({exc})") from None
    return value


# --------------------------------------------------------------------------- tables

Row = tuple[Hashable, ...]


def _rows_key(rows: Sequence[Row], ordered: bool) -> Hashable:
    """Rows as a sequence (``ordered``) or as a multiset: equal keys <=> equal tables."""
    if ordered:
        return ("seq", tuple(rows))
    return ("bag", frozenset(Counter(rows).items()))


def _sparql_term(term: Any) -> Hashable:
    if not isinstance(term, Mapping):
        return canon(term)
    kind = term.get("type")
    if kind == "typed-literal":
        kind = "literal"
    if kind == "bnode":
        # Blank-node labels are local to one result set; any blank node equals any other.
        return ("bnode",)
    datatype = term.get("datatype")
    if datatype == _XSD_STRING:
        datatype = None
    lang = term.get("xml:lang")
    if isinstance(lang, str):
        lang = lang.lower()
    return (kind, canon(term.get("value")), datatype, lang)


@dataclass(frozen=True)
class _AskResult:
    value: bool


def _sparql_parse(value: Any) -> tuple[list[str], list[Mapping[str, Any]]] | _AskResult:
    data = _load_json(value)
    if not isinstance(data, Mapping):
        raise Unparsable(f"SPARQL results must be a JSON object; got {type(data).__name__}")
    if "boolean" in data:
        if not isinstance(data["boolean"], bool):
            raise Unparsable("the 'boolean' of an ASK result must be true or false")
        return _AskResult(data["boolean"])
    head = data.get("head")
    results = data.get("results")
    bindings = results.get("bindings") if isinstance(results, Mapping) else None
    if not isinstance(bindings, list) or not all(isinstance(b, Mapping) for b in bindings):
        raise Unparsable("SPARQL results need 'results': {'bindings': [ {...}, ... ]}")
    variables = head.get("vars", []) if isinstance(head, Mapping) else []
    if not isinstance(variables, list):
        raise Unparsable("'head.vars' of SPARQL results must be a list")
    return [str(v) for v in variables], bindings


def _project(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], cell: Callable[[Any], Hashable]
) -> list[Row]:
    return [tuple(cell(row.get(c)) for c in columns) for row in rows]


_FIELD_LIMIT_LOCK = threading.Lock()


def _csv_lines(text: str, delimiter: str) -> list[list[str]]:
    """The rows of a CSV/TSV text, whatever the length of its cells.

    ``csv`` refuses a cell longer than its process-wide field limit (128 KB by default). No
    cell can be longer than the text, so the limit is raised to the text's length only while a
    longer text is read, under a lock, and restored afterwards (other readers only ever see a
    higher limit, never a lower one than they set).
    """
    try:
        if len(text) < csv.field_size_limit():
            return list(csv.reader(io.StringIO(text), delimiter=delimiter))
        with _FIELD_LIMIT_LOCK:
            previous = csv.field_size_limit(len(text) + 1)
            try:
                return list(csv.reader(io.StringIO(text), delimiter=delimiter))
            finally:
                csv.field_size_limit(previous)
    except csv.Error as exc:
        raise Unparsable(f"not a readable CSV/TSV table ({exc})") from None


def _csv_parse(value: Any, delimiter: str) -> tuple[list[str], list[dict[str, Any]]]:
    if not isinstance(value, str):
        raise Unparsable(f"a CSV/TSV table must be text; got {type(value).__name__}")
    lines = [line for line in _csv_lines(value.strip("\r\n"), delimiter) if line]
    if not lines:
        raise Unparsable("the table has no header row")
    header = [h.strip() for h in lines[0]]
    return header, [
        dict(zip(header, (c.strip() for c in line), strict=False)) for line in lines[1:]
    ]


def _text_cell(value: Any) -> Hashable:
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- specs and keys


@dataclass(frozen=True)
class Spec:
    """How an output is read for comparison. Hashable: steps sharing a spec are keyed once."""

    kind: str  # "sparql", "json", "json_table", "table", "text", "value"
    columns: tuple[str, ...] | None = None
    ordered: bool = False
    delimiter: str = ","


@dataclass
class Output:
    """An executed step's output, with its parses cached (one parse serves every spec)."""

    value: Any
    cache: dict[str, Any] = field(default_factory=dict)

    def parsed(self, how: str, parse: Callable[[Any], Any]) -> Any:
        try:
            got = self.cache[how]
        except KeyError:
            try:
                got = parse(self.value)
            except Unparsable as exc:
                got = exc
            self.cache[how] = got
        if isinstance(got, Unparsable):
            raise got
        return got


def output_key(spec: Spec, output: Output) -> Hashable:
    """The key of an output under ``spec``; raises :class:`Unparsable` when it cannot be read."""
    kind = spec.kind
    if kind == "sparql":
        got = output.parsed("sparql", _sparql_parse)
        if isinstance(got, _AskResult):
            return ("ask", got.value)
        if spec.columns is None:  # the reference is an ASK result: no SELECT result equals it
            return ("select",)
        return _rows_key(_project(got[1], spec.columns, _sparql_term), spec.ordered)
    if kind == "json":
        key: Hashable = output.parsed("json_canon", lambda v: canon(_load_json(v)))
        return key
    if kind == "json_table":
        rows = output.parsed("json", _load_json)
        if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
            raise Unparsable("not a list of row objects")
        assert spec.columns is not None
        return _rows_key(_project(rows, spec.columns, canon), spec.ordered)
    if kind == "table":
        header, table = output.parsed(
            f"table{spec.delimiter}", lambda v: _csv_parse(v, spec.delimiter)
        )
        assert spec.columns is not None
        if any(c not in header for c in spec.columns):
            raise Unparsable("a required column is missing")
        return _rows_key(_project(table, spec.columns, _text_cell), spec.ordered)
    if kind == "text":
        if not isinstance(output.value, str):
            raise Unparsable("not text")
        return output.value
    return canon(output.value)  # "value": a non-text reference output, compared as JSON


def _check_columns(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if (
        isinstance(value, str)
        or not isinstance(value, (list, tuple))
        or not value
        or not all(isinstance(c, str) for c in value)
    ):
        raise TypeError(
            f"{where}['required_columns'] must be a non-empty list of column names; got {show(value)}"
        )
    return tuple(value)


def _sparql_spec(
    output: Any, columns: tuple[str, ...] | None, ordered: bool, where: str
) -> tuple[Spec, Hashable]:
    try:
        parsed = _sparql_parse(output)
    except Unparsable as exc:
        raise ValueError(f"{where}['output'] is not SPARQL results JSON: {exc}") from None
    if isinstance(parsed, _AskResult):
        return Spec("sparql"), ("ask", parsed.value)
    variables, bindings = parsed
    if columns is None:
        columns = tuple(variables) or tuple(sorted({str(k) for b in bindings for k in b}))
    else:
        known = set(variables) | {str(k) for b in bindings for k in b}
        missing = [c for c in columns if c not in known]
        if missing:
            raise ValueError(
                f"{where}['required_columns'] names {show(missing)}, which the reference output does "
                f"not have (its variables: {show(variables)})"
            )
    spec = Spec("sparql", columns, ordered)
    return spec, _rows_key(_project(bindings, columns, _sparql_term), ordered)


def _json_spec(
    output: Any, columns: tuple[str, ...] | None, ordered: bool | None, where: str
) -> tuple[Spec, Hashable]:
    try:
        reference = _load_json(output)
    except Unparsable as exc:
        raise ValueError(f"{where}['output'] is not valid JSON: {exc}") from None
    as_table = (columns is not None or ordered is not None) and (
        isinstance(reference, list) and all(isinstance(r, Mapping) for r in reference)
    )
    if not as_table:
        return Spec("json"), canon(reference)
    cols = columns or tuple(sorted({str(k) for row in reference for k in row}))
    spec = Spec("json_table", cols, bool(ordered))
    return spec, _rows_key(_project(reference, cols, canon), bool(ordered))


def _table_spec(
    output: Any, columns: tuple[str, ...] | None, ordered: bool, delimiter: str, where: str
) -> tuple[Spec, Hashable]:
    try:
        header, rows = _csv_parse(output, delimiter)
    except Unparsable as exc:
        raise ValueError(f"{where}['output'] is not a table: {exc}") from None
    cols = columns or tuple(header)
    missing = [c for c in cols if c not in header]
    if missing:
        raise ValueError(
            f"{where}['required_columns'] names {show(missing)}, which the reference table does not "
            f"have (its header: {show(header)})"
        )
    spec = Spec("table", cols, ordered, delimiter)
    return spec, _rows_key(_project(rows, cols, _text_cell), ordered)


# --------------------------------------------------------------------------- retrieval ids


def retrieved_ids(value: Any) -> list[Hashable]:
    """The ids in a retrieval step's output: a JSON list (text or parsed) of ``{"id": ...}``
    objects or of bare string/int ids. Raises :class:`Unparsable` for anything else."""
    items = _load_json(value)
    if not isinstance(items, list):
        raise Unparsable(
            f"a retrieval output must be a list of contexts; got {type(items).__name__}"
        )
    ids: list[Hashable] = []
    for position, item in enumerate(items):
        ident = item.get("id") if isinstance(item, Mapping) else item
        if isinstance(ident, bool) or not isinstance(ident, (str, int)):
            raise Unparsable(
                f"item {position} has no string or int id (a context is {{'id': ..., ...}} or "
                f"the id itself); got {show(item)}"[:300]
            )
        ids.append(ident)
    return ids


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class RefStep:
    level: int
    index: int
    name: str
    args: Hashable | None  # canonical args, None when the step has no args
    has_output: bool
    spec: Spec | None  # None: no output, or a retrieval step
    expected: Hashable | None  # key of the reference output under ``spec``
    relevant: tuple[Hashable, ...] | None  # the ids of a retrieval step's output


@dataclass
class ActualStep:
    index: int
    step_id: Any
    name: str
    args: Hashable | None
    usable: bool  # not failed
    output: Output | None  # None when the step has no output
    k: int | None = None  # args["k"] of a retrieval step


def _step_name(raw: Any, where: str) -> str:
    if not isinstance(raw, Mapping):
        raise TypeError(f"{where} must be a step dict with a 'name'; got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a non-empty string 'name'; got {show(name)}")
    return name


def prepare_ref_step(raw: Any, level: int, index: int, retrieval_steps: frozenset[str]) -> RefStep:
    where = f"reference_outputs[{level}][{index}]"
    name = _step_name(raw, where)
    media_type = raw.get("output_media_type")
    if media_type is not None and not isinstance(media_type, str):
        raise TypeError(f"{where}['output_media_type'] must be a string; got {show(media_type)}")
    ordered_raw = raw.get("ordered")
    if ordered_raw is not None and not isinstance(ordered_raw, bool):
        raise TypeError(f"{where}['ordered'] must be true or false; got {show(ordered_raw)}")
    ordered = bool(ordered_raw)
    columns = _check_columns(raw.get("required_columns"), where)
    output = raw.get("output")
    args = canon(maybe_json(raw["args"])) if "args" in raw else None
    if output is None:
        return RefStep(level, index, name, args, False, None, None, None)
    if name in retrieval_steps:
        try:
            relevant = tuple(dict.fromkeys(retrieved_ids(output)))
        except Unparsable as exc:
            raise ValueError(
                f"{where}['output'] must list the relevant contexts of this retrieval step as "
                f"JSON ([{{'id': ...}}, ...] or [id, ...]): {exc}"
            ) from None
        if not relevant:
            raise ValueError(
                f"{where}['output'] lists no context; a retrieval reference step needs at least "
                "one relevant id"
            )
        return RefStep(level, index, name, args, True, None, None, relevant)
    kind = (media_type or "").split(";")[0].strip().lower()
    if kind == SPARQL_RESULTS:
        spec, expected = _sparql_spec(output, columns, ordered, where)
    elif kind == JSON:
        spec, expected = _json_spec(output, columns, ordered_raw, where)
    elif kind in (CSV, TSV):
        spec, expected = _table_spec(output, columns, ordered, "," if kind == CSV else "\t", where)
    elif isinstance(output, str):
        spec, expected = Spec("text"), output
    else:
        spec, expected = Spec("value"), canon(output)
    return RefStep(level, index, name, args, True, spec, expected, None)


def _retrieval_k(raw_args: Any, where: str) -> int | None:
    args = maybe_json(raw_args)
    if not isinstance(args, Mapping) or args.get("k") is None:
        return None
    k = args["k"]
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(
            f"{where}['args']['k'] is the cutoff of this retrieval step and must be an int >= 1 "
            f"(or absent: every retrieved context counts); got {show(k)}"
        )
    return k


def prepare_actual_step(raw: Any, index: int, retrieval_steps: frozenset[str]) -> ActualStep:
    where = f"outputs[{index}]"
    name = _step_name(raw, where)
    status = raw.get("status")
    output = raw.get("output")
    return ActualStep(
        index=index,
        step_id=raw.get("id"),
        name=name,
        args=canon(maybe_json(raw["args"])) if "args" in raw else None,
        usable=status in _OK_STATUSES,
        output=None if output is None else Output(output),
        k=_retrieval_k(raw.get("args"), where) if name in retrieval_steps else None,
    )
