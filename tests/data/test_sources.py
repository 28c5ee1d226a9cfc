"""DataFrames, Arrow, Parquet and Hugging Face datasets as evaluation data."""

from __future__ import annotations

import datetime as dt
import decimal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import openevals
from openevals.calibration import calibrate
from openevals.data.detect import open_source
from openevals.data.rows import count_rows, iter_rows, load_rows


def _rows(data: Any) -> list[dict[str, Any]]:
    return [{"id": r.id, **r.fields} for r in load_rows(data)]


FRAME = {
    "id": ["a", "b", "c"],
    "inputs.question": ["q1", "q2", "q3"],
    "inputs.context": ["c1", None, "c3"],
    "outputs": ["x", "y", "z"],
    "reference_outputs": ["x", "n", "z"],
    "topic": ["t1", "t2", "t1"],
}
EXPECTED = [
    {
        "id": "a",
        "inputs": {"question": "q1", "context": "c1"},
        "outputs": "x",
        "reference_outputs": "x",
        "topic": "t1",
    },
    {
        "id": "b",
        "inputs": {"question": "q2"},
        "outputs": "y",
        "reference_outputs": "n",
        "topic": "t2",
    },
    {
        "id": "c",
        "inputs": {"question": "q3", "context": "c3"},
        "outputs": "z",
        "reference_outputs": "z",
        "topic": "t1",
    },
]


def _parquet(tmp_path: Path, name: str = "data.parquet", frame: dict[str, Any] = FRAME) -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(frame), path)
    return path


# --------------------------------------------------------------------------- each source


def test_the_issue_example_runs() -> None:
    frame = pd.DataFrame({"outputs": ["a"], "reference_outputs": ["a"]})
    result = openevals.evaluate(frame, ["exact_match"], progress=False)
    assert result.aggregates["exact_match"]["mean"] == 1.0


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda tmp: pd.DataFrame(FRAME), id="pandas"),
        pytest.param(lambda tmp: pl.DataFrame(FRAME), id="polars"),
        pytest.param(lambda tmp: pa.table(FRAME), id="arrow-table"),
        pytest.param(lambda tmp: pa.RecordBatch.from_pydict(FRAME), id="arrow-batch"),
        pytest.param(lambda tmp: _parquet(tmp), id="parquet-path"),
        pytest.param(lambda tmp: str(_parquet(tmp)), id="parquet-str"),
        pytest.param(lambda tmp: _hf(FRAME), id="hf-dataset"),
        pytest.param(lambda tmp: _hf(FRAME).to_iterable_dataset(num_shards=1), id="hf-iterable"),
    ],
)
def test_every_source_gives_the_same_rows(make: Any, tmp_path: Path) -> None:
    data = make(tmp_path)
    assert _rows(data) == EXPECTED
    streamed = type(data).__name__ == "IterableDataset"
    assert count_rows(data) == (None if streamed else 3)
    result = openevals.evaluate(data, ["exact_match"], progress=False, group_by="topic")
    assert [r["id"] for r in result.rows] == ["a", "b", "c"]
    assert result.aggregates["exact_match"]["sum"] == 2
    assert set(result.by_group["per_group"]) == {"t1", "t2"}  # type: ignore[index]


def _hf(frame: dict[str, Any]) -> Any:
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_dict(frame)


async def test_aevaluate_reads_a_dataframe_and_parquet(tmp_path: Path) -> None:
    for data in (pd.DataFrame(FRAME), _parquet(tmp_path)):
        result = await openevals.aevaluate(data, ["exact_match"], progress=False)
        assert [r["id"] for r in result.rows] == ["a", "b", "c"]
        assert result.aggregates["exact_match"]["sum"] == 2


def test_calibrate_reads_a_dataframe() -> None:
    frame = pd.DataFrame(
        {
            "outputs": ["x", "y", "z", "w"],
            "reference_outputs": ["x", "n", "z", "w"],
            "label": [True, False, True, False],
        }
    )
    report = calibrate(frame, openevals.exact_match, label="label", progress=False)
    assert report.n == 4
    assert len(report.disagreements) == 1


def test_parquet_directory_and_glob_read_in_sorted_order(tmp_path: Path) -> None:
    first = {k: v[:2] for k, v in FRAME.items()}
    second = {k: v[2:] for k, v in FRAME.items()}
    (tmp_path / "part").mkdir()
    _parquet(tmp_path / "part", "b.parquet", second)
    _parquet(tmp_path / "part", "a.parquet", first)
    (tmp_path / "part" / "README.txt").write_text("not data")
    assert _rows(tmp_path / "part") == EXPECTED
    assert _rows(str(tmp_path / "part" / "*.parquet")) == EXPECTED
    assert count_rows(tmp_path / "part") == 3


def test_a_parquet_dataset_plans_its_columns_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening plans each file's columns (and fails early on a bad layout); reading then streams
    rows through those plans instead of planning every file again (issue 34 item 4)."""
    import openevals.data.sources as sources

    (tmp_path / "part").mkdir()
    _parquet(tmp_path / "part", "a.parquet", {k: v[:2] for k, v in FRAME.items()})
    _parquet(tmp_path / "part", "b.parquet", {k: v[2:] for k, v in FRAME.items()})
    planned: list[str] = []
    real = sources.check_arrow_schema

    def counting(pa_module: Any, schema: Any, source: str) -> Any:
        planned.append(Path(source).name)
        return real(pa_module, schema, source)

    monkeypatch.setattr(sources, "check_arrow_schema", counting)
    assert _rows(tmp_path / "part") == EXPECTED
    assert planned == ["a.parquet", "b.parquet"]


def test_parquet_is_read_in_record_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openevals.data.sources as sources

    monkeypatch.setattr(sources, "_BATCH_ROWS", 2)
    n = 7
    path = tmp_path / "big.parquet"
    pq.write_table(
        pa.table({"outputs": [str(i) for i in range(n)], "reference_outputs": ["0"] * n}),
        path,
        row_group_size=3,
    )
    seen: list[int] = []
    real = pq.ParquetFile.iter_batches

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        for batch in real(self, *args, **kwargs):
            seen.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    rows = iter_rows(path)
    assert next(rows).fields["outputs"] == "0"
    assert max(seen) <= 2
    assert sum(1 for _ in rows) == n - 1


def test_source_is_not_consumed_or_mutated() -> None:
    frame = pd.DataFrame(FRAME)
    before = frame.copy()
    openevals.evaluate(frame, ["exact_match"], progress=False)
    openevals.evaluate(frame, ["exact_match"], progress=False)
    pd.testing.assert_frame_equal(frame, before)


# --------------------------------------------------------------------------- value mapping


def test_missing_values_leave_the_field_out() -> None:
    frame = pd.DataFrame(
        {
            "id": ["a", None, "c"],
            "outputs": ["x", None, "z"],
            "reference_outputs": pd.array(["x", pd.NA, "z"], dtype="string"),
            "score_hint": [1.0, np.nan, 3.0],
            "when": pd.to_datetime(["2024-01-02", None, "2024-03-04"]),
        }
    )
    rows = load_rows(frame)
    assert rows[1].fields == {}
    assert rows[1].id != "nan" and len(rows[1].id) == 16  # the content hash
    assert rows[0].fields == {
        "outputs": "x",
        "reference_outputs": "x",
        "score_hint": 1.0,
        "when": "2024-01-02T00:00:00",
    }


def test_numpy_and_arrow_values_become_plain_python() -> None:
    frame = pd.DataFrame(
        {
            "outputs": pd.Series([np.int64(3), np.float32(0.5), np.bool_(True)], dtype=object),
            "reference_outputs": [np.array([1, 2]), {"a": np.int32(1)}, [np.float64("nan"), None]],
            "day": [dt.date(2024, 1, 2), dt.time(3, 4), decimal.Decimal("1.5")],
        }
    )
    rows = [r.fields for r in load_rows(frame)]
    assert rows[0]["outputs"] == 3 and type(rows[0]["outputs"]) is int
    assert rows[1]["outputs"] == 0.5 and type(rows[1]["outputs"]) is float
    assert rows[2]["outputs"] is True
    assert rows[0]["reference_outputs"] == [1, 2]
    assert type(rows[1]["reference_outputs"]["a"]) is int
    assert rows[2]["reference_outputs"] == [None, None]  # missing elements inside a list: None
    assert [r["day"] for r in rows] == ["2024-01-02", "03:04:00", 1.5]


def test_json_text_cells_are_decoded_like_csv(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"outputs": ['{"a": 1}', "[1, 2]", "{not json"], "reference_outputs": ["x", "y", "z"]}
    )
    csv_path = tmp_path / "same.csv"
    frame.to_csv(csv_path, index=False)
    assert [r.fields for r in load_rows(frame)] == [r.fields for r in load_rows(csv_path)]
    assert load_rows(frame)[0].fields["outputs"] == {"a": 1}


def test_arrow_structs_and_lists_stay_nested(tmp_path: Path) -> None:
    table = pa.table(
        {
            "outputs": [{"answer": "a", "docs": [1, 2]}, {"answer": "b", "docs": None}],
            "reference_outputs": [{"answer": "a", "docs": [1]}, None],
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), None], pa.timestamp("s")),
        }
    )
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    rows = [r.fields for r in load_rows(path)]
    assert rows[0] == {
        "outputs": {"answer": "a", "docs": [1, 2]},
        "reference_outputs": {"answer": "a", "docs": [1]},
        "ts": "2024-01-02T03:04:05",
    }
    assert rows[1] == {"outputs": {"answer": "b", "docs": None}}


def test_graphrag_columns_map_like_csv() -> None:
    frame = pd.DataFrame({"Question": ["q"], "Actual answer": ["a"], "Reference answer": ["a"]})
    assert load_rows(frame)[0].fields == {
        "inputs": "q",
        "outputs": "a",
        "reference_outputs": "a",
    }


def test_inputs_without_outputs_is_accepted_for_a_target() -> None:
    frame = pd.DataFrame({"inputs": ["x", "y"], "reference_outputs": ["X", "Z"]})
    result = openevals.evaluate(
        frame, ["exact_match"], target=lambda inputs: inputs.upper(), progress=False
    )
    assert result.aggregates["exact_match"]["sum"] == 1


# --------------------------------------------------------------------------- bad input


def test_dataframe_without_outputs_names_the_columns() -> None:
    frame = pd.DataFrame({"answer": ["a"], "reference_outputs": ["a"]})
    with pytest.raises(ValueError, match=r"pandas DataFrame: no 'outputs' column.*'answer'"):
        openevals.evaluate(frame, ["exact_match"], progress=False)
    with pytest.raises(ValueError, match=r"polars DataFrame: no 'outputs' column"):
        load_rows(pl.DataFrame({"answer": ["a"]}))


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "hf"])
def test_duplicate_ids_are_refused_before_any_row_runs(kind: str) -> None:
    frame = {"id": ["a", "b", "a"], "outputs": ["1", "2", "3"], "reference_outputs": ["1"] * 3}
    data = {
        "pandas": pd.DataFrame,
        "polars": pl.DataFrame,
        "arrow": pa.table,
        "hf": _hf,
    }[kind](frame)
    calls: list[Any] = []

    def spy(**kw: Any) -> bool:
        calls.append(kw)
        return True

    with pytest.raises(ValueError, match=r"rows 0 and 2 share the id 'a' \(column 'id'\)"):
        openevals.evaluate(data, [spy], progress=False)
    assert calls == []


def test_duplicate_ids_in_parquet_name_the_file(tmp_path: Path) -> None:
    path = _parquet(tmp_path, frame={"id": [1, 1], "outputs": ["a", "b"]})
    with pytest.raises(ValueError, match=r"data.parquet: rows 0 and 1 share the id '1'"):
        load_rows(path)


def test_unsupported_column_types_name_the_column(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"column 'blob' has dtype timedelta64"):
        load_rows(pd.DataFrame({"outputs": ["a"], "blob": pd.to_timedelta([1], unit="s")}))
    with pytest.raises(TypeError, match=r"column 'blob' has dtype complex"):
        load_rows(pd.DataFrame({"outputs": ["a"], "blob": [1 + 2j]}))
    with pytest.raises(TypeError, match=r"column 'blob' holds a value of type bytes"):
        load_rows(pd.DataFrame({"outputs": ["a"], "blob": [b"\x00"]}))
    with pytest.raises(TypeError, match=r"column 'blob' has dtype Binary"):
        load_rows(pl.DataFrame({"outputs": ["a"], "blob": [b"\x00"]}))
    path = tmp_path / "bin.parquet"
    pq.write_table(pa.table({"outputs": ["a"], "blob": pa.array([b"x"], pa.binary())}), path)
    with pytest.raises(TypeError, match=r"bin.parquet: column 'blob' has type binary"):
        load_rows(path)
    nested = pa.table({"outputs": [{"raw": b"x"}]})
    with pytest.raises(TypeError, match=r"column 'outputs' has type struct"):
        load_rows(nested)


def test_bad_column_names() -> None:
    with pytest.raises(TypeError, match=r"column names must be strings; got 0"):
        load_rows(pd.DataFrame([["a"]]))
    frame = pd.DataFrame([["a", "b"]], columns=["outputs", "outputs"])
    with pytest.raises(ValueError, match=r"duplicate column name 'outputs'"):
        load_rows(frame)
    frame = pd.DataFrame({"outputs": ["a"], "inputs": [{"q": 1}], "inputs.q": [2]})
    with pytest.raises(ValueError, match=r"columns 'inputs' and 'inputs.q' both set"):
        load_rows(frame)


def test_corrupt_and_truncated_parquet_name_the_file(tmp_path: Path) -> None:
    good = _parquet(tmp_path)
    blob = good.read_bytes()
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match=r"truncated.parquet' is not a readable Parquet file"):
        openevals.evaluate(truncated, ["exact_match"], progress=False)
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1")
    with pytest.raises(ValueError, match=r"garbage.parquet' is not a readable Parquet file"):
        load_rows(garbage)
    # A valid footer over damaged data pages fails while reading, naming the file.
    damaged = tmp_path / "damaged.parquet"
    pq.write_table(
        pa.table({"outputs": [f"value {i}" * 20 for i in range(2000)]}),
        damaged,
        compression="snappy",
    )
    raw = bytearray(damaged.read_bytes())
    for i in range(100, 3000):
        raw[i] = 0xFF
    damaged.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"damaged.parquet'"):
        load_rows(damaged)


def test_missing_parquet_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no such file"):
        load_rows(tmp_path / "nope.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"holds no Parquet files"):
        load_rows(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match=r"no file matches the pattern"):
        load_rows(str(tmp_path / "*.parquet"))
    (tmp_path / "x.jsonl").write_text("{}\n")
    with pytest.raises(ValueError, match=r"matches files that are not Parquet"):
        load_rows(str(tmp_path / "*"))


def test_dataset_objects_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = _hf(FRAME)
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r"pip install 'openevals-suite\[datasets\]'"):
        openevals.evaluate(dataset, ["exact_match"], progress=False)


def test_parquet_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _parquet(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"pip install 'openevals-suite\[parquet\]'"):
        load_rows(path)


def test_wrong_container_types_say_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"pandas Series"):
        load_rows(pd.Series(["a"]))
    with pytest.raises(TypeError, match=r"LazyFrame; collect it first"):
        load_rows(pl.DataFrame(FRAME).lazy())
    datasets = pytest.importorskip("datasets")
    splits = datasets.DatasetDict({"test": _hf(FRAME)})
    with pytest.raises(TypeError, match=r"pass one split"):
        load_rows(splits)


def test_plain_data_is_not_a_source() -> None:
    assert open_source([{"outputs": 1}]) is None
    assert open_source("rows.jsonl") is None
    assert open_source([]) is None


def test_parquet_rows_taken_as_they_are_skip_the_storable_check_and_others_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches taken as they are from Arrow are storable by construction; a batch whose text
    is decoded from JSON (here into a lone surrogate) is still checked, row by row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from openevals import evaluate
    from openevals.data import sources
    from openevals.evaluation import blocks

    monkeypatch.setattr(sources, "_BATCH_ROWS", 4)
    monkeypatch.setattr(blocks, "BLOCK_ROWS", 4)
    plain = [{"outputs": f"a{i}", "reference_outputs": f"a{i % 2}"} for i in range(8)]
    decoded = [{"outputs": '["\\ud800"]', "reference_outputs": "x"}, *plain[:3]]
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(plain + decoded), path, row_group_size=4)
    checked: list[int] = []
    real = blocks.storable_check

    def spy(records: Any) -> None:
        checked.append(len(records))
        real(records)

    monkeypatch.setattr(blocks, "storable_check", spy)
    result = evaluate(path, ["exact_match"], progress=False)
    assert checked == [4], "only the decoded batch was checked"
    errors = [r["evaluations"]["exact_match"]["error"] for r in result.rows]
    assert errors[8] is not None and errors[8]["type"] == "RowDataError"
    assert [e is None for e in errors] == [True] * 8 + [False, True, True, True]
    assert result.aggregates["exact_match"]["count"] == 11


# --------------------------------------------------------------------------- deep text cells (issue 43)


@pytest.mark.parametrize("form", ["dataframe", "csv", "parquet"])
def test_a_deeply_nested_text_cell_is_an_error_row_not_a_recursion_error(
    tmp_path: Path, form: str
) -> None:
    import pandas as pd

    from openevals.evaluation import evaluate

    deep = "[" * 3000 + "]" * 3000
    frame = pd.DataFrame({"inputs": ["a", "b"], "outputs": [deep, "x"], "reference_outputs": "x"})
    data: Any = frame
    if form == "csv":
        data = tmp_path / "rows.csv"
        frame.to_csv(data, index=False)
    elif form == "parquet":
        data = tmp_path / "rows.parquet"
        frame.to_parquet(data)
    result = evaluate(data, ["exact_match"], progress=False)
    first, second = result.rows
    error = first["evaluations"]["exact_match"]["error"]
    assert error["type"] == "RowDataError"
    assert "row 0" in error["message"] and "'outputs'" in error["message"]
    assert "nested too deeply" in error["message"]
    assert second["evaluations"]["exact_match"]["results"][0]["score"] is True
