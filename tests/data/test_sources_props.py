"""Property tests of the column mapping: dotted names, nested dicts, missing values."""

from __future__ import annotations

import io
import math
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.data.columns import FIELDS, plan_columns
from openevals.data.rows import load_rows

NAMES = st.text(alphabet="abcdefgh_", min_size=1, max_size=4)
KINDS = ("str", "int", "float", "bool")
# Text that a CSV reader would keep as text: it does not look like a JSON object or array.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8).filter(
    lambda s: s.strip()[:1] not in ("{", "[")
)
VALUES = {
    "str": TEXT,
    "int": st.integers(-(2**40), 2**40),
    "float": st.floats(allow_nan=False, allow_infinity=False, width=64),
    "bool": st.booleans(),
}


@st.composite
def nested_paths(draw: Any, head: str) -> list[tuple[str, ...]]:
    """Prefix-free dotted paths under ``head`` (``inputs.a``, ``inputs.b.c``, ...)."""
    firsts = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    paths: list[tuple[str, ...]] = []
    for first in firsts:
        seconds = draw(st.lists(NAMES, max_size=2, unique=True))
        if seconds:
            paths.extend((head, first, second) for second in seconds)
        else:
            paths.append((head, first))
    return paths


@st.composite
def tables(draw: Any) -> tuple[dict[str, tuple[str, list[Any]]], list[dict[str, Any]]]:
    """Columns ``name -> (kind, values)`` and the row dicts they must map to."""
    paths: list[tuple[str, ...]] = []
    for head in FIELDS:
        shape = draw(st.sampled_from(["absent", "whole", "dotted"]))
        if head == "outputs" and shape == "absent":
            shape = "whole"
        if shape == "whole":
            paths.append((head,))
        elif shape == "dotted":
            paths.extend(draw(nested_paths(head)))
    extras = draw(st.lists(NAMES, max_size=2, unique=True))
    paths.extend((f"x_{name}",) for name in extras)
    n = draw(st.integers(1, 6))
    columns: dict[str, tuple[str, list[Any]]] = {}
    for path in paths:
        kind = draw(st.sampled_from(KINDS))
        cells = draw(st.lists(st.one_of(st.none(), VALUES[kind]), min_size=n, max_size=n))
        columns[".".join(path)] = (kind, cells)
    expected: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {}
        for name, (_, cells) in columns.items():
            if cells[i] is None:
                continue
            node = row
            parts = name.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = cells[i]
        expected.append(row)
    return columns, expected


_PA_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
_PL_TYPES = {"str": pl.String, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_same(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, float) and isinstance(actual, float):
        return actual == expected or (math.isnan(actual) and math.isnan(expected))
    return bool(actual == expected) and type(actual) is type(expected)


def _check(data: Any, expected: list[dict[str, Any]]) -> None:
    rows = [row.fields for row in load_rows(data)]
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected, strict=True):
        assert _same(got, want), (got, want)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_arrow_and_polars_tables_map_like_nested_dicts(table: Any) -> None:
    columns, expected = table
    arrow = pa.table({k: pa.array(v, _PA_TYPES[kind]) for k, (kind, v) in columns.items()})
    _check(arrow, expected)
    _check(
        pl.DataFrame({k: pl.Series(k, v, _PL_TYPES[kind]) for k, (kind, v) in columns.items()}),
        expected,
    )


@settings(max_examples=60, deadline=None)
@given(tables(), st.sampled_from([None, float("nan"), pd.NA]))
def test_pandas_object_columns_with_any_missing_marker(table: Any, marker: Any) -> None:
    columns, expected = table
    frame = pd.DataFrame(
        {
            k: pd.Series([marker if c is None else c for c in v], dtype=object)
            for k, (_, v) in columns.items()
        }
    )
    _check(frame, expected)


@settings(max_examples=25, deadline=None)
@given(tables())
def test_parquet_round_trip_maps_the_same(table: Any) -> None:
    columns, expected = table
    arrow = pa.table({k: pa.array(v, _PA_TYPES[kind]) for k, (kind, v) in columns.items()})
    buffer = io.BytesIO()
    pq.write_table(arrow, buffer)
    back = pq.read_table(io.BytesIO(buffer.getvalue()))
    _check(back, expected)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["inputs", "inputs.a", "inputs.a.b", "outputs", "o", "outputs.x"]),
        min_size=1,
        max_size=4,
        unique=True,
    )
)
def test_plans_refuse_exactly_the_overlapping_columns(names: list[str]) -> None:
    def overlaps() -> bool:
        return any(a != b and b.startswith(a + ".") for a in names for b in names)

    has_io = any(n.split(".")[0] in ("inputs", "outputs") for n in names)
    try:
        plan_columns(names, "t")
    except ValueError as exc:
        assert overlaps() or not has_io, exc
    else:
        assert not overlaps() and has_io


CELLS = {
    "str": st.one_of(
        st.text(max_size=6),
        st.sampled_from([" x", "\u2003y", '{"a": 1}', "[1, 2]", " [3]", "\x1c{}", "", "a"]),
    ),
    "int": st.integers(-(2**40), 2**40),
    "float": st.floats(width=64),
    "bool": st.booleans(),
}


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_arrow_batches_map_as_cell_by_cell(data: Any) -> None:
    """A record batch whose columns map to themselves is zipped into rows directly; the rows
    are those the cell-by-cell mapping gives, for every batch."""
    from openevals.data.sources import _zip_records, arrow_records

    kinds = data.draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3))
    n = data.draw(st.integers(min_value=1, max_value=6))
    columns: dict[str, Any] = {"outputs": data.draw(st.lists(CELLS["str"], min_size=n, max_size=n))}
    for i, kind in enumerate(kinds):
        cells = st.one_of(CELLS[kind], st.none()) if data.draw(st.booleans()) else CELLS[kind]
        columns[f"c{i}"] = data.draw(st.lists(cells, min_size=n, max_size=n))
    batch = pa.RecordBatch.from_pydict(columns)
    plan = plan_columns(batch.schema.names, "t")
    fast = list(arrow_records(plan, batch))
    slow = list(_zip_records(plan, [column.to_pylist() for column in batch.columns]))

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        return type(a) is type(b) and a == b

    assert len(fast) == len(slow)
    for left, right in zip(fast, slow, strict=True):
        assert left.keys() == right.keys()
        assert all(same(left[k], right[k]) for k in left)
