"""Bad records and failing sources on the Ray engine (issue 43, item 1): as on the local engine,
a bad record is an error row and a source failing mid-stream raises ``DataSourceFailed`` with the
finished rows as ``.result`` (rows read by the driver, and Parquet read by Ray Data)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import DataSourceFailed, RayEngine, evaluate
from tests.ray.conftest import canon_result

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ray_session")]


def _rows(n: int) -> list[Any]:
    return [
        {"id": f"r{i}", "inputs": {"q": i}, "outputs": str(i % 3), "reference_outputs": "1"}
        for i in range(n)
    ]


def test_bad_records_are_error_rows_on_ray_as_locally() -> None:
    data: list[Any] = _rows(40)
    data[7] = 5
    data[20] = {**data[20], "id": "r3"}
    data[30] = {**data[30], "id": 2.5}
    engine = RayEngine(batch_size=16)
    for evaluators in (["exact_match"], {"match": lambda outputs: outputs == "1"}):
        local = evaluate(data, evaluators, progress=False)
        on_ray = evaluate(data, evaluators, progress=False, engine=engine)
        assert canon_result(on_ray)["rows"] == canon_result(local)["rows"]
        bad = [row["index"] for row in on_ray.rows if row["status"] == "error"]
        assert bad == [7, 20, 30]


def test_a_failing_source_on_ray_keeps_the_finished_rows(tmp_path: Path) -> None:
    def broken() -> Iterator[Any]:
        yield from _rows(25)
        raise OSError("gone")

    with pytest.raises(DataSourceFailed, match=r"after 25 rows.*OSError: gone") as info:
        evaluate(broken(), ["exact_match"], progress=False, engine=RayEngine(batch_size=8))
    assert info.value.result is not None and len(info.value.result.rows) == 25

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 3000
    table = pa.table({"inputs": [f"q{i}" for i in range(n)], "outputs": ["a"] * n})
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=1000)
    column = pq.ParquetFile(path).metadata.row_group(2).column(0)
    data = bytearray(path.read_bytes())
    start = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
    data[start : start + column.total_compressed_size] = b"\xff" * column.total_compressed_size
    path.write_bytes(bytes(data))
    with pytest.raises(DataSourceFailed) as failed:
        evaluate(path, ["exact_match"], progress=False, engine=RayEngine(batch_size=500))
    assert failed.value.result is not None
    assert [row["index"] for row in failed.value.result.rows] == list(
        range(len(failed.value.result.rows))
    )
