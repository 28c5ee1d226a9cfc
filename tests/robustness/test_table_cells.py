"""Hostile cells in every data source: a value that contains itself, or is nested thousands of
levels deep (as a dict or as JSON text), becomes an error row naming the row and the field; the
other rows are evaluated and the run goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import openevals
from openevals.data.columns import plan_columns

DEPTH = 3_000


def _deep_dict() -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "x"}
    for _ in range(DEPTH):
        value = {"a": value}
    return value


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"q": 1}
    value["self"] = value
    return value


DEEP_TEXT = "[" * DEPTH + "]" * DEPTH


def match(*, outputs: Any, reference_outputs: Any, **_: Any) -> bool:
    return bool(outputs == reference_outputs)


def _columns(hostile: Any) -> dict[str, list[Any]]:
    return {"outputs": ["a", "b"], "reference_outputs": ["a", "c"], "inputs": [{"q": 0}, hostile]}


def _text_columns() -> dict[str, list[Any]]:
    return {"outputs": ["a", "b"], "reference_outputs": ["a", "c"], "inputs": ["{}", DEEP_TEXT]}


def _hf(columns: dict[str, list[Any]]) -> Any:
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_dict(columns)


def _parquet(tmp_path: Path) -> Path:
    path = tmp_path / "deep.parquet"
    pq.write_table(pa.table(_text_columns()), path)
    return path


SOURCES: dict[str, Callable[[Path], Any]] = {
    "list-cycle": lambda _: [
        {"outputs": "a", "reference_outputs": "a", "inputs": {"q": 0}},
        {"outputs": "b", "reference_outputs": "c", "inputs": _cyclic()},
    ],
    "list-deep": lambda _: [
        {"outputs": "a", "reference_outputs": "a", "inputs": {"q": 0}},
        {"outputs": "b", "reference_outputs": "c", "inputs": _deep_dict()},
    ],
    "pandas-cycle": lambda _: pd.DataFrame(_columns(_cyclic())),
    "pandas-deep": lambda _: pd.DataFrame(_columns(_deep_dict())),
    "pandas-deep-text": lambda _: pd.DataFrame(_text_columns()),
    "polars-cycle": lambda _: pl.DataFrame(
        {
            "outputs": ["a", "b"],
            "reference_outputs": ["a", "c"],
            "inputs": pl.Series([{"q": 0}, _cyclic()], dtype=pl.Object),
        }
    ),
    "polars-deep": lambda _: pl.DataFrame(
        {
            "outputs": ["a", "b"],
            "reference_outputs": ["a", "c"],
            "inputs": pl.Series([{"q": 0}, _deep_dict()], dtype=pl.Object),
        }
    ),
    "polars-deep-text": lambda _: pl.DataFrame(_text_columns()),
    "arrow-deep-text": lambda _: pa.table(_text_columns()),
    "parquet-deep-text": _parquet,
    "hf-deep-text": lambda _: _hf(_text_columns()),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_hostile_cell_is_an_error_row_naming_index_and_field(name: str, tmp_path: Path) -> None:
    data = SOURCES[name](tmp_path)
    result = openevals.evaluate(data, [match], progress=False)
    rows = sorted(result.rows, key=lambda r: r["index"])
    assert [r["index"] for r in rows] == [0, 1]
    good = rows[0]["evaluations"]["match"]
    assert good["status"] == "success"
    bad = rows[1]["evaluations"]["match"]
    assert bad["status"] == "error"
    message = bad["error"]["message"]
    assert "row 1 cannot be evaluated" in message
    assert "field 'inputs'" in message
    assert ("cycle" in message) == ("cycle" in name)
    assert ("nested too deeply" in message) == ("deep" in name)


def test_deep_and_cyclic_cells_convert_without_recursion() -> None:
    plan = plan_columns(["outputs", "inputs"], "t")
    deep = plan.record(["x", _deep_dict()])["inputs"]
    for _ in range(DEPTH):
        deep = deep["a"]
    assert deep == {"leaf": "x"}
    cyclic = _cyclic()
    assert plan.record(["x", cyclic])["inputs"] is cyclic  # left for the row check to report
    deep_text = plan.record(["x", DEEP_TEXT])["inputs"]
    for _ in range(DEPTH - 1):
        (deep_text,) = deep_text
    assert deep_text == []


def test_nested_values_still_convert_as_before() -> None:
    np = pytest.importorskip("numpy")
    plan = plan_columns(["outputs", "inputs"], "t")
    cell = {
        "a": (1, np.int64(2), float("nan"), pd.NA),
        "b": np.array([1.5, 2.5]),
        "c": [{"d": np.bool_(True)}, "[1]"],
    }
    assert plan.record(["x", cell])["inputs"] == {
        "a": [1, 2, None, None],
        "b": [1.5, 2.5],
        "c": [{"d": True}, "[1]"],
    }
    with pytest.raises(TypeError, match="column 'inputs' holds a value of type bytes"):
        plan.record(["x", {"a": [b"raw"]}])
