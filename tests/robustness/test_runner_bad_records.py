"""One bad record, or a source failing mid-stream, never loses finished work (issue 43, item 1).

* A record that cannot be a row (not a dict, a non-text field name, an ``id`` that is a float or
  is already taken, a DataFrame cell with no plain form) is an error row: ``RowDataError`` naming
  its index and field, counted in ``summary["errors"]``; every other row is evaluated. On the row
  path and the columnar path, sync and async.
* A source that fails mid-stream (a generator raising, a Hugging Face ``IterableDataset``
  raising, a corrupt Parquet row group) ends the rows there: the rows read before are finished,
  then ``DataSourceFailed`` is raised with them as ``.result``; with ``output=`` they are in the
  file and a rerun resumes without calling the judge again.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate
from openevals.evaluation import DataSourceFailed, EvaluationResult, aevaluate
from openevals.testing import FakeOpenAIServer
from tests.evaluation.helpers import make_judge, qa_rows

VERDICT = {"reasoning": "Right.", "score": True}


def _good(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"r{i}", "inputs": {"q": i}, "outputs": f"a{i}", "reference_outputs": f"a{i}"}
        for i in range(n)
    ]


def _scorer(*, outputs: Any, reference_outputs: Any) -> bool:  # a plain sync evaluator: rows
    return bool(outputs == reference_outputs)


async def _async_scorer(*, outputs: Any, reference_outputs: Any) -> bool:
    return bool(outputs == reference_outputs)


EVALUATORS: dict[str, Any] = {
    "columnar": ["exact_match"],  # cheap pure: the columnar path (blocks.py)
    "rows": {"match": _scorer},  # the per-row path (executor.py)
    "async": {"match": _async_scorer},
}

BAD_RECORDS: dict[str, tuple[Any, str]] = {
    "not a dict": (5, r"row 60 must be a dict .* got int"),
    "float id": (
        {"id": 1.5, "inputs": 1, "outputs": "a", "reference_outputs": "a"},
        r"row 60 has an 'id' of type float",
    ),
    "duplicate id": (
        {"id": "r3", "inputs": 1, "outputs": "a", "reference_outputs": "a"},
        r"rows 3 and 60 share the id 'r3'",
    ),
    "non-text field name": (
        {3: "x", "inputs": 1, "outputs": "a", "reference_outputs": "a"},
        r"row 60 has a non-string field name 3",
    ),
}


def _errors(result: EvaluationResult) -> list[tuple[int, dict[str, Any]]]:
    return [
        (row["index"], entry["error"])
        for row in result.rows
        for entry in row["evaluations"].values()
        if entry["status"] != "success"
    ]


def _run(data: Any, evaluators: Any, how: str, **options: Any) -> EvaluationResult:
    if how == "async":
        return asyncio.run(aevaluate(data, evaluators, progress=False, **options))
    return evaluate(data, evaluators, progress=False, **options)


@pytest.mark.parametrize("bad", sorted(BAD_RECORDS))
@pytest.mark.parametrize("path", sorted(EVALUATORS))
def test_a_bad_record_is_an_error_row_naming_its_index_and_field(bad: str, path: str) -> None:
    record, message = BAD_RECORDS[bad]
    rows = [*_good(60), record, *_good(70)[62:]]
    snapshot = copy.deepcopy(record)
    result = _run(rows, EVALUATORS[path], "async" if path == "async" else "sync")
    assert len(result.rows) == 69
    ((index, error),) = _errors(result)
    assert index == 60 and error["type"] == "RowDataError"
    assert pytest.approx(1.0) == next(iter(result.aggregates.values()))["mean"]
    assert re.search(message, error["message"]), error["message"]
    assert result.summary["errors"]["by_type"] == {"RowDataError": 1}
    ids = [row["id"] for row in result.rows]
    assert len(set(ids)) == len(ids)  # the error row has an id of its own
    assert rows[60] == snapshot  # the caller's record is not touched


def test_a_bad_record_after_sixty_judge_calls_keeps_them(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_default_chat(json=VERDICT)
    judge = make_judge("openai-async", fake_openai)
    rows: list[Any] = [*qa_rows(60), 5]
    out = tmp_path / "run.jsonl"
    result = evaluate(rows, {"judge": judge}, output=out, concurrency=8, progress=False)
    assert len(fake_openai.chat_requests) == 60
    assert result.summary["pairs"]["failed"] == 1 and len(result.rows) == 61
    ((index, error),) = _errors(result)
    assert index == 60 and "row 60 must be a dict" in error["message"]
    again = evaluate(rows, {"judge": judge}, output=out, concurrency=8, progress=False)
    assert len(fake_openai.chat_requests) == 60  # resumed: no judge call repeated
    assert again.summary["pairs"]["failed"] == 1


def test_an_undecodable_dataframe_cell_at_row_1200_is_an_error_row() -> None:
    pd = pytest.importorskip("pandas")
    n = 1300
    cells: list[Any] = [f"a{i}" for i in range(n)]
    cells[1200] = b"\xff"
    frame = pd.DataFrame(
        {
            "inputs": [f"q{i}" for i in range(n)],
            "outputs": pd.Series(cells, dtype=object),
            "reference_outputs": [f"a{i}" for i in range(n)],
        }
    )
    for evaluators in (["exact_match"], {"match": _scorer}):
        result = evaluate(frame, evaluators, progress=False)
        assert len(result.rows) == n
        ((index, error),) = _errors(result)
        assert index == 1200 and error["type"] == "RowDataError"
        assert "row 1200" in error["message"] and "column 'outputs'" in error["message"]
        assert "bytes" in error["message"]


def _failing(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield from rows
    raise OSError("the connection was reset")


@pytest.mark.parametrize("how", ["sync", "async"])
@pytest.mark.parametrize("path", ["columnar", "rows"])
def test_a_generator_raising_mid_stream_keeps_the_finished_rows(
    how: str, path: str, tmp_path: Path
) -> None:
    out = tmp_path / "run.jsonl"
    with pytest.raises(DataSourceFailed, match=r"after 1500 rows.*OSError: the connection") as info:
        _run(_failing(_good(1500)), EVALUATORS[path], how, output=out)
    failed = info.value
    assert isinstance(failed.__cause__, OSError) and failed.rows_read == 1500
    assert failed.result is not None and failed.result.interrupted
    assert [row["index"] for row in failed.result.rows] == list(range(1500))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(line["kind"] == "eval" for line in lines) == 1500


def test_a_failing_generator_resumes_without_repeating_judge_calls(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_default_chat(json=VERDICT)
    judge = make_judge("openai-async", fake_openai)
    rows = qa_rows(80)
    out = tmp_path / "run.jsonl"

    def broken() -> Iterator[dict[str, Any]]:
        yield from rows[:50]
        raise ConnectionError("stream closed")

    with pytest.raises(DataSourceFailed) as info:
        evaluate(broken(), {"judge": judge}, output=out, concurrency=8, progress=False)
    assert info.value.result is not None and len(info.value.result.rows) == 50
    assert len(fake_openai.chat_requests) == 50
    result = evaluate(rows, {"judge": judge}, output=out, concurrency=8, progress=False)
    assert len(result.rows) == 80 and result.summary["pairs"]["failed"] == 0
    assert len(fake_openai.chat_requests) == 80  # the 50 finished calls were not made again


def test_a_hugging_face_iterable_dataset_raising_mid_stream() -> None:
    datasets = pytest.importorskip("datasets")

    def generate() -> Iterator[dict[str, Any]]:
        for i in range(4100):
            yield {"inputs": f"q{i}", "outputs": "a", "reference_outputs": "a"}
        raise RuntimeError("shard 2 is unreachable")

    streamed = datasets.IterableDataset.from_generator(generate)
    with pytest.raises(DataSourceFailed, match="shard 2 is unreachable") as info:
        evaluate(streamed, ["exact_match"], progress=False)
    # The dataset is read 4096 rows at a time: the rows of the batch it failed in never came.
    assert info.value.result is not None and len(info.value.result.rows) == 4096
    assert "Hugging Face IterableDataset" in str(info.value)


def _corrupt_parquet(tmp_path: Path, n: int = 6000, group: int = 4096) -> Path:
    """A Parquet file whose second row group is damaged (the first one reads whole)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "inputs": [f"q{i}" for i in range(n)],
            "outputs": [f"a{i}" for i in range(n)],
            "reference_outputs": [f"a{i}" for i in range(n)],
        }
    )
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=group)
    column = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    start = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
    data[start : start + column.total_compressed_size] = b"\xff" * column.total_compressed_size
    path.write_bytes(bytes(data))
    return path


def test_a_corrupt_parquet_row_group_keeps_the_rows_before_it(tmp_path: Path) -> None:
    group = 4096  # the reader takes 4096 rows at a time: the first batch is whole
    path = _corrupt_parquet(tmp_path, group=group)
    out = tmp_path / "run.jsonl"
    with pytest.raises(
        DataSourceFailed, match=r"(?s)after 4096 rows.*truncated or corrupt"
    ) as info:
        evaluate(path, ["exact_match"], output=out, progress=False)
    assert info.value.result is not None and len(info.value.result.rows) == group
    assert isinstance(info.value, ValueError)  # callers catching bad data still catch it
    evals = [line for line in out.read_text().splitlines() if '"kind": "eval"' in line]
    assert len(evals) == group


def test_the_cli_shows_the_finished_rows_then_the_data_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openevals.cli import main

    path = _corrupt_parquet(tmp_path)
    code = main(["run", str(path), "-e", "exact_match", "--no-progress", "--no-store"])
    out, err = capsys.readouterr()
    assert code == 2  # a data error, never the gate's 1
    assert "4096 rows, 0 with errors" in out  # the summary of what finished
    assert "reading the data failed after 4096 rows" in err
