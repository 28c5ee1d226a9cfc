"""Parquet input on a RayEngine: Ray Data reads it on the workers; results equal local ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from openevals.evaluation import RayEngine, evaluate
from tests.ray.conftest import canon_result, file_records
from tests.ray.test_ray_engine import EVALUATORS, OPTIONS, rows

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ray_session")]


def _write(tmp_path: Path, data: list[dict[str, Any]], *, parts: int = 3) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    size = -(-len(data) // parts)
    for part in range(parts):
        chunk = data[part * size : (part + 1) * size]
        pq.write_table(pa.Table.from_pylist(chunk), folder / f"part-{part}.parquet")
    return folder


@pytest.mark.parametrize("with_ids", [True, False], ids=["explicit-ids", "content-ids"])
def test_parquet_on_ray_equals_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_ids: bool
) -> None:
    data = [r if with_ids else {k: v for k, v in r.items() if k != "id"} for r in rows(90)]
    folder = _write(tmp_path, data)
    # The driver never reads the rows itself: Ray Data reads the files on the workers.
    import openevals.data.sources as sources

    def no_driver_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the driver read Parquet rows")

    local = evaluate(folder, EVALUATORS, output=tmp_path / "local.jsonl", **OPTIONS)
    monkeypatch.setattr(sources, "parquet_batches", no_driver_reads)
    on_ray = evaluate(
        folder,
        EVALUATORS,
        output=tmp_path / "ray.jsonl",
        engine=RayEngine(batch_size=16, workers=2),
        **OPTIONS,
    )
    assert canon_result(on_ray) == canon_result(local)
    assert [r["index"] for r in on_ray.rows] == list(range(90))
    assert file_records(tmp_path / "ray.jsonl") == file_records(tmp_path / "local.jsonl")
    # and the same as the list of dicts the files were written from
    from_list = evaluate(data, EVALUATORS, **OPTIONS)
    assert canon_result(on_ray)["rows"] == canon_result(from_list)["rows"]


def test_parquet_on_ray_resumes_through_the_general_path(tmp_path: Path) -> None:
    folder = _write(tmp_path, rows(30))
    out = tmp_path / "run.jsonl"
    first = evaluate(folder, ["exact_match"], output=out, progress=False)
    again = evaluate(folder, EVALUATORS, output=out, engine=RayEngine(batch_size=8), **OPTIONS)
    local = evaluate(folder, EVALUATORS, **OPTIONS)
    assert again.summary["pairs"]["resumed"] == 30
    assert canon_result(again)["aggregates"] == canon_result(local)["aggregates"]
    assert len(first.rows) == 30


def test_parquet_output_of_a_ray_run_equals_local(tmp_path: Path) -> None:
    folder = _write(tmp_path, rows(30))
    on_ray = evaluate(folder, ["exact_match"], engine=RayEngine(batch_size=8), progress=False)
    local = evaluate(folder, ["exact_match"], progress=False)
    a = pq.read_table(on_ray.to_parquet(tmp_path / "ray.parquet")).to_pydict()
    b = pq.read_table(local.to_parquet(tmp_path / "local.parquet")).to_pydict()
    assert a == b


@pytest.mark.parametrize("parquet_input", [False, True], ids=["list", "parquet"])
def test_ray_workers_write_their_results_as_parquet(tmp_path: Path, parquet_input: bool) -> None:
    """With RayEngine(parquet=), each worker writes its batches' results; read back, the folder holds
    the long table of the local run (scores as floats), and ``_SUCCESS`` marks it complete."""
    data: Any = rows(40)
    if parquet_input:
        data = _write(tmp_path, data)
    folder = tmp_path / "results"
    on_ray = evaluate(data, EVALUATORS, engine=RayEngine(batch_size=8, parquet=folder), **OPTIONS)
    local = evaluate(data, EVALUATORS, **OPTIONS)
    parts = sorted(p.name for p in folder.iterdir())
    assert parts == ["_SUCCESS"] + [f"part-{i:06d}.parquet" for i in range(5)]
    written = pq.read_table(folder).to_pandas().sort_values(["index", "evaluator", "key"])
    expected = local.to_pandas().sort_values(["index", "evaluator", "key"])
    assert list(written.columns) == list(expected.columns)
    assert written["id"].tolist() == expected["id"].tolist()
    assert written["index"].tolist() == expected["index"].tolist()
    assert written["score"].fillna(-1.0).tolist() == [
        -1.0 if s is None else float(s) for s in expected["score"]
    ]
    assert written["error"].isna().tolist() == expected["error"].isna().tolist()
    summary = (folder / "_SUCCESS").read_text(encoding="utf-8")
    assert '"aggregates"' in summary
    assert canon_result(on_ray)["aggregates"] == canon_result(local)["aggregates"]
    with pytest.raises(ValueError, match="already holds results"):
        evaluate(data, EVALUATORS, engine=RayEngine(parquet=folder), **OPTIONS)


def test_the_parquet_folder_is_checked_by_the_engine() -> None:
    with pytest.raises(TypeError, match=r"RayEngine\(parquet=\) must be a folder path"):
        RayEngine(parquet=3)  # type: ignore[arg-type]
