"""Column mapping shared by the tabular sources (DataFrames, Parquet, Arrow, Hugging Face).

A table becomes rows the way a CSV file does (:mod:`openevals.data.rows`):

* a column named ``inputs``, ``outputs``, ``reference_outputs``, ``id`` or anything else becomes
  the row field of that name (graphrag-eval's ``Question`` / ``Actual answer`` /
  ``Reference answer`` are renamed later, as for every source);
* a dotted name under one of the three fields builds a nested dict: ``inputs.question`` and
  ``inputs.context`` become ``inputs = {"question": ..., "context": ...}``;
* a string cell that holds a JSON object or array (``{...}`` / ``[...]``) is decoded.

Values become plain Python: numpy scalars become ``int`` / ``float`` / ``bool``, arrays become
lists, dates and times become ISO-8601 strings and decimals become floats. A *missing* cell
(``None``, ``NaN``, ``pd.NA``, ``NaT``) leaves its field out of that row, as if the column were
absent there (a row missing its ``id`` is identified by its example); inside a nested value (a list or
a struct) a missing element stays as ``None``. Binary data, complex numbers, durations and other
objects have no JSON form and raise a ``TypeError`` naming the column.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._repr import show
from openevals._structure import fold, load_json

__all__ = [
    "ABSENT",
    "FIELDS",
    "GRAPHRAG_COLUMNS",
    "PRESETS",
    "ColumnPlan",
    "decode_cell",
    "naming_hint",
    "plan_columns",
]

FIELDS = ("inputs", "outputs", "reference_outputs")
"""The three standard evaluator arguments."""

GRAPHRAG_COLUMNS = {
    "Question": "inputs",
    "Actual answer": "outputs",
    "Reference answer": "reference_outputs",
}
"""graphrag-eval's answer-correctness TSV columns and the fields they map to."""

PRESETS: dict[str, dict[str, str]] = {
    "ragas": {
        "question": "inputs",
        "user_input": "inputs",
        "answer": "outputs",
        "response": "outputs",
        "ground_truth": "reference_outputs",
        "ground_truths": "reference_outputs",
        "reference": "reference_outputs",
        "contexts": "context",
        "retrieved_contexts": "context",
    },
    "deepeval": {
        "input": "inputs",
        "actual_output": "outputs",
        "expected_output": "reference_outputs",
        "retrieval_context": "context",
    },
}
"""The column names of ragas (0.1 and 0.2 datasets) and deepeval test cases, and their fields."""

_KNOWN = {**PRESETS["ragas"], **PRESETS["deepeval"], "query": "inputs"}
"""Column names other libraries use, and the field each one holds."""


def naming_hint(columns: list[str]) -> str:
    """A sentence suggesting :func:`map_columns` for columns named as ragas / deepeval name
    them (``""`` when none is)."""
    known = {name: _KNOWN[name] for name in columns if name in _KNOWN}
    if not known:
        return ""
    return (
        f". The columns {sorted(known)} look like ragas/deepeval names: pass "
        f"map_columns(data, {show(known)}) (or map_columns(data, 'ragas') / 'deepeval') to "
        "evaluate"
    )


ABSENT: Any = object()
"""A missing cell (the field is left out of the row)."""

_MISSING_TYPES = frozenset({"NAType", "NaTType"})
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SHALLOW = 64  # nesting levels converted by recursion; deeper cells go through the fold
_OUTPUT_COLUMNS = ("outputs", *(c for c, f in GRAPHRAG_COLUMNS.items() if f == "outputs"))
_INPUT_COLUMNS = ("inputs", *(c for c, f in GRAPHRAG_COLUMNS.items() if f == "inputs"))


def _unsupported(value: Any, column: str, source: str) -> TypeError:
    kind = type(value)
    name = (
        f"{kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins" else kind.__name__
    )
    return TypeError(
        f"{source}: column {show(column)} holds a value of type {name} ({show(value, 60)}), "
        "which has no plain form for an evaluator; accepted: text, numbers, booleans, dates, lists "
        "and dicts of those. Convert the column (for example to str) or drop it"
    )


def _leaf(value: Any, column: str, source: str) -> Any:
    """A scalar inside a list or struct cell: plain Python, missing elements as ``None``."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return None if value != value else value
    if isinstance(value, str):  # nested text is kept as it is (only whole cells are decoded)
        return str(value)
    out = _scalar(value, column, source)
    return None if out is ABSENT else out


def _listlike(value: Any) -> bool:
    """Whether :func:`_children` takes ``value`` apart (without converting it)."""
    if type(value).__module__ == "numpy":
        return hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0
    return (
        isinstance(value, Iterable)
        and not isinstance(value, (str, bytes, bytearray, memoryview))
        and callable(getattr(value, "tolist", None) or getattr(value, "to_list", None))
    )


def _children(value: Any, column: str, source: str) -> list[Any] | None:
    """The elements of a list-like cell value (a tuple, a numpy array, a polars Series, an Arrow
    list scalar), or ``None`` when ``value`` is not one."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if not _listlike(value):
        return None
    if type(value).__module__ == "numpy":  # an array
        if value.dtype.kind in "biufUO":
            return list(value.tolist())
        raise _unsupported(value, column, source)
    # array-likes of other libraries (a polars Series in a list cell, an Arrow scalar list)
    return list((getattr(value, "tolist", None) or value.to_list)())


def decode_cell(value: str) -> Any:
    """A text cell holding a JSON object or array (``{...}`` / ``[...]``) decoded, else as is.

    Decoded at any depth (a cell nested deeper than Python's recursion limit becomes that deep
    value, which the run then records as an error row naming the row and field, as it does for
    such a value in a list of dicts)."""
    text = value.strip()
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            return load_json(text)  # at any depth: a row nested too deep is reported on the row
        except ValueError:
            return value
    return value


def set_dotted(record: dict[str, Any], dotted: str, value: Any) -> None:
    """``record["a"]["b"] = value`` for ``dotted`` ``"a.b"`` (any depth), making the dicts on the
    way (in place of a value that is not one)."""
    parts = dotted.split(".")
    node = record
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


class _Deeper(Exception):
    """A cell nested deeper than :data:`_SHALLOW` levels (converted by :func:`fold` instead)."""


def _shallow(value: Any, column: str, source: str, depth: int) -> Any:
    """:func:`_container`'s result for the usual few levels of nesting, by plain recursion
    (about twice as fast as the fold); ``_Deeper`` past :data:`_SHALLOW` levels."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return None if value != value else value
    if depth == _SHALLOW:
        raise _Deeper
    if isinstance(value, Mapping):
        return {str(k): _shallow(v, column, source, depth + 1) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_shallow(v, column, source, depth + 1) for v in value]
    if kind.__name__ in _MISSING_TYPES:
        return None
    elements = _children(value, column, source)
    if elements is None:
        return _leaf(value, column, source)
    return [_shallow(v, column, source, depth + 1) for v in elements]


def _container(value: Any, column: str, source: str) -> Any:
    """A dict or list-like cell as plain Python; a value nested deeper than :data:`_SHALLOW`
    levels is converted without recursion (at any depth), and one that contains itself is
    returned as it is, so the row becomes an error row naming the field, as for a list of
    dicts."""
    try:
        return _shallow(value, column, source, 0)
    except _Deeper:
        pass

    def expand(item: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
        if isinstance(item, Mapping):
            keys = list(item)
            return "map", [item[k] for k in keys], keys
        if type(item) in _PLAIN or type(item).__name__ in _MISSING_TYPES:
            return None
        elements = _children(item, column, source)
        return None if elements is None else ("seq", elements, None)

    def combine(tag: Any, _: Any, keys: Sequence[Any] | None, parts: list[Any]) -> Any:
        if keys is None:
            return parts
        return {str(k): v for k, v in zip(keys, parts)}  # noqa: B905 - same length

    try:
        return fold(value, column, expand, lambda v: _leaf(v, column, source), combine)
    except ValueError:  # a cycle: the row check reports it on the row
        return value


def _convert(value: Any, column: str, source: str) -> Any:
    """A cell that is not a plain str / int / float / bool / None, as plain Python
    (:data:`ABSENT` if missing); ``TypeError`` naming ``column`` when it has no plain form."""
    if isinstance(value, (Mapping, list, tuple)) or _listlike(value):
        return _container(value, column, source)
    return _scalar(value, column, source)


def _scalar(value: Any, column: str, source: str) -> Any:
    """A cell value that is not a container, as plain Python (:data:`ABSENT` if missing)."""
    kind = type(value)
    if kind.__name__ in _MISSING_TYPES:  # pd.NA, pd.NaT
        return ABSENT
    if isinstance(value, str):  # subclasses of the plain types (numpy.float64 is a float)
        return decode_cell(str(value))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return ABSENT if value != value else float(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return ABSENT if value.is_nan() else float(value)
    if kind.__module__ == "numpy":
        if value.dtype.kind in "biuf":  # a numpy scalar
            item = value.item()
            return ABSENT if isinstance(item, float) and item != item else item
        if value.dtype.kind == "M":  # numpy.datetime64
            return ABSENT if str(value) == "NaT" else str(value)
    raise _unsupported(value, column, source)


@dataclass(frozen=True)
class Unreadable:
    """A record a table source could not build (a cell with no plain form; ``reason`` names the
    column): a ``TypeError`` naming the row where rows are read, an error row in a batch run."""

    reason: str


@dataclass(frozen=True)
class ColumnPlan:
    """Where each column of a table goes in a row: a top-level field or a nested path."""

    names: tuple[str, ...]
    paths: tuple[tuple[str, ...] | None, ...]
    source: str

    @property
    def fields(self) -> frozenset[str]:
        """The top-level row fields its rows can have (graphrag-eval's columns renamed)."""
        return frozenset(
            path[0] if path is not None else GRAPHRAG_COLUMNS.get(name, name)
            for name, path in zip(self.names, self.paths)  # noqa: B905 - same length
        )

    def record(self, values: Sequence[Any]) -> dict[str, Any]:
        """One row dict from the cells of one table row (in column order)."""
        record: dict[str, Any] = {}
        source = self.source
        for name, path, cell in zip(self.names, self.paths, values):  # noqa: B905 - same length
            # The common cells inline (this runs once per cell of every table row).
            kind = type(cell)
            if kind is str:
                first = cell[:1]
                value = decode_cell(cell) if first in "{[" or first.isspace() else cell
            elif kind is int or kind is bool:
                value = cell
            elif kind is float:
                if cell != cell:
                    continue
                value = cell
            elif cell is None:
                continue
            else:
                value = _convert(cell, name, source)
                if value is ABSENT:
                    continue
            if path is None:
                record[name] = value
                continue
            node = record
            for part in path[:-1]:
                child = node.get(part)
                if child is None:
                    child = node[part] = {}
                node = child
            node[path[-1]] = value
        return record


def plan_columns(columns: Iterable[Any], source: str) -> ColumnPlan:
    """Check a table's column names and plan how they map to row fields.

    Raises:
        TypeError: a column name is not a string.
        ValueError: duplicate names; a field given both whole and dotted (``inputs`` and
            ``inputs.question``), or a dotted name inside another (``inputs.a`` and
            ``inputs.a.b``); or a table with neither an ``outputs`` nor an ``inputs`` column.
    """
    names = list(columns)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"{source}: column names must be strings; got {show(name)} "
                f"({type(name).__name__}). Rename the column"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(
                f"{source}: duplicate column name {show(name)}; column names must be unique"
            )
        seen.add(name)
    paths: list[tuple[str, ...] | None] = []
    for name in names:
        head, _, rest = name.partition(".")
        if rest and head in FIELDS:
            parts = tuple(name.split("."))
            if any(not p for p in parts):
                raise ValueError(
                    f"{source}: column {show(name)} has an empty part in its dotted name"
                )
            paths.append(parts)
        else:
            paths.append(None)
    dotted = {".".join(p) for p in paths if p is not None}
    for name, path in zip(names, paths):  # noqa: B905 - same length
        prefixes = [".".join(path[:i]) for i in range(1, len(path))] if path else []
        clash = next((p for p in prefixes if p in seen and (p in FIELDS or p in dotted)), None)
        if clash is not None:
            raise ValueError(
                f"{source}: columns {show(clash)} and {show(name)} both set {show(name)}; keep "
                "either the whole value or the dotted columns"
            )
    if not any(_holds(n, _OUTPUT_COLUMNS) or _holds(n, _INPUT_COLUMNS) for n in names):
        raise ValueError(
            f"{source}: no 'outputs' column (columns: {show(names[:12])}"
            f"{'...' if len(names) > 12 else ''}); "
            "add the outputs to score as an 'outputs' column (or 'outputs.<name>' columns), or "
            "give an 'inputs' column and pass target= to produce them" + naming_hint(names)
        )
    return ColumnPlan(names=tuple(names), paths=tuple(paths), source=source)


def _holds(name: str, fields: tuple[str, ...]) -> bool:
    return name in fields or name.partition(".")[0] == fields[0]
