"""Results out as pandas / polars DataFrames and Parquet; notebook views; `run --output x.parquet`."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

import openevals
from openevals._contract import EvaluatorInfo, attach_info
from openevals.cli import main
from openevals.data import frames
from openevals.data.frames import LONG_COLUMNS
from openevals.evaluation import Budget
from openevals.evaluation.result import EvaluationResult

DATA = pd.DataFrame(
    {
        "id": ["r0", "r1", "r2"],
        "outputs": ["a", "b", "boom"],
        "reference_outputs": ["a", "c", "x"],
        "topic": ["t", "u", "t"],
    }
)


def _judged(**kw: Any) -> list[dict[str, Any]]:
    """A two-key evaluator with token usage (and a failure on the 'boom' row)."""
    if kw["outputs"] == "boom":
        raise RuntimeError("judge <down>")
    usage = {"input_tokens": 10, "output_tokens": 5}
    return [
        {"key": "style", "score": 0.5, "comment": "ok", "metadata": {"usage": usage}},
        {"key": "verdict", "score": "pass", "comment": None, "metadata": {"usage": usage}},
    ]


attach_info(
    _judged,
    EvaluatorInfo(run_name="judged", feedback_keys=("style", "verdict"), model="priced-model"),
)
PRICES = {"priced-model": (1.0, 2.0)}


@pytest.fixture(scope="module")
def result() -> EvaluationResult:
    return openevals.evaluate(
        DATA,
        {"exact": openevals.exact_match, "judged": _judged},
        group_by="topic",
        budget=Budget(prices=PRICES),
        progress=False,
    )


def _expected_long(result: EvaluationResult) -> list[dict[str, Any]]:
    """The long form, spelled out from the per-row results."""
    out = []
    for row in result.rows:
        for name, entry in row["evaluations"].items():
            usage = entry["usage"] or {}
            error = entry["error"]
            base = {
                "id": row["id"],
                "index": row["index"],
                "group": row["group"],
                "evaluator": name,
                "error": f"{error['type']}: {error['message']}" if error else None,
                "model": entry["model"],
                "tokens": usage.get("total_tokens"),
                "cost": entry["cost_usd"],
            }
            results = entry["results"] or [
                {"key": k, "score": None, "comment": None}
                for k in ({"judged": ["style", "verdict"]}.get(name) or [name])
            ]
            for res in results:
                out.append(
                    {**base, "key": res["key"], "score": res["score"], "comment": res["comment"]}
                )
    return [{c: r[c] for c in LONG_COLUMNS} for r in out]


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def test_dataframe_to_pandas_equals_the_per_row_results(result: EvaluationResult) -> None:
    frame = result.to_pandas()
    assert list(frame.columns) == list(LONG_COLUMNS)
    got = [{k: _none(v) for k, v in rec.items()} for rec in frame.to_dict("records")]
    assert got == _expected_long(result)
    assert len(frame) == 3 * 3  # 3 rows x (exact_match, style, verdict)


def test_long_form_details(result: EvaluationResult) -> None:
    frame = result.to_pandas()
    failed = frame[frame["id"] == "r2"]
    assert set(failed[failed["evaluator"] == "judged"]["key"]) == {"style", "verdict"}
    assert failed[failed["evaluator"] == "judged"]["error"].str.contains("judge <down>").all()
    ok = frame[(frame["id"] == "r0") & (frame["evaluator"] == "judged")]
    assert list(ok["tokens"]) == [15, 15]
    assert list(ok["cost"]) == pytest.approx([(10 * 1.0 + 5 * 2.0) / 1e6] * 2)
    assert list(ok["model"]) == ["priced-model"] * 2


def test_wide_form_has_one_column_per_key(result: EvaluationResult) -> None:
    wide = result.to_pandas(wide=True)
    assert list(wide.columns) == [
        "id",
        "index",
        "group",
        "status",
        "exact_match",
        "style",
        "verdict",
    ]
    assert list(wide["exact_match"]) == [True, False, False]
    assert list(wide["verdict"])[:2] == ["pass", "pass"] and _none(wide["verdict"][2]) is None
    assert list(wide["status"]) == ["success", "success", "error"]


def test_polars_has_one_type_per_column(result: EvaluationResult) -> None:
    frame = result.to_polars()
    assert frame.columns == list(LONG_COLUMNS)
    assert frame.schema["score"] == pl.String  # booleans, floats and text mixed -> text
    assert frame.schema["tokens"] == pl.Int64 and frame.schema["cost"] == pl.Float64
    wide = result.to_polars(wide=True)
    assert wide.schema["exact_match"] == pl.Boolean
    assert wide.schema["style"] == pl.Float64
    assert wide.schema["verdict"] == pl.String
    assert wide.height == 3


def test_parquet_read_back_equals_the_jsonl_output(
    result: EvaluationResult, tmp_path: Path
) -> None:
    run = openevals.evaluate(
        DATA,
        {"exact": openevals.exact_match, "judged": _judged},
        budget=Budget(prices=PRICES),
        progress=False,
    )
    jsonl = tmp_path / "run.jsonl"
    run.to_jsonl(jsonl)
    path = run.to_parquet(tmp_path / "run.parquet")
    back = pq.read_table(path)
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    from_jsonl = EvaluationResult(rows=rows, aggregates={}, summary={})
    names, records = frames.long_table(from_jsonl.rows)
    assert back.column_names == names
    typed = frames.typed_columns(from_jsonl, wide=False)
    assert back.to_pydict() == typed
    assert records[0][0] == "r0"
    metadata = json.loads(back.schema.metadata[b"openevals"])
    assert metadata["aggregates"]["exact_match"]["count"] == 3
    wide = pq.read_table(run.to_parquet(tmp_path / "wide.parquet", wide=True))
    assert wide.column("exact_match").to_pylist() == [True, False, False]


def test_a_failed_parquet_write_leaves_no_partial_file(
    result: EvaluationResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.parquet"
    target.write_bytes(b"the previous complete file")

    def broken(table: Any, where: Any, **kw: Any) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        result.to_parquet(target)
    assert target.read_bytes() == b"the previous complete file"
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]
    with pytest.raises(OSError, match="disk full"):
        result.to_parquet(tmp_path / "new.parquet")
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]


def test_bad_arguments(result: EvaluationResult) -> None:
    with pytest.raises(TypeError, match="wide must be True or False"):
        result.to_pandas(wide="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path must be a file path"):
        result.to_parquet(3)  # type: ignore[arg-type]


def test_empty_result_gives_empty_tables(tmp_path: Path) -> None:
    empty = openevals.evaluate([], ["exact_match"], progress=False)
    assert list(empty.to_pandas().columns) == [c for c in LONG_COLUMNS if c != "group"]
    assert empty.to_polars().height == 0
    assert pq.read_table(empty.to_parquet(tmp_path / "e.parquet")).num_rows == 0


def test_to_pandas_without_pandas(
    result: EvaluationResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'openevals-suite\[pandas\]'"):
        result.to_pandas()


# --------------------------------------------------------------------------- notebook views


def test_repr_html_is_the_escaped_summary(result: EvaluationResult) -> None:
    page = result._repr_html_()
    assert "<table>" in page and "exact_match" in page and "style" in page
    assert "3 rows; failed evaluations: 1" in page
    assert "estimated cost $4e-05" in page
    assert "judged (1)" in page
    assert "r0" not in page  # the summary, not the rows
    tricky = openevals.evaluate(
        [{"outputs": 1}], {"x": lambda **kw: {"key": "<script>", "score": 1}}, progress=False
    )
    assert "<script>" not in tricky._repr_html_()
    assert "&lt;script&gt;" in tricky._repr_html_()


def test_show_report_embeds_the_full_report(result: EvaluationResult) -> None:
    inline = result.show_report(title="T <1>")
    assert "<!DOCTYPE html>" in inline.html or "<html" in inline.html
    frame = inline._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "sandbox=" in frame
    assert "<html" not in frame  # escaped into the attribute
    assert "r0" in inline.html  # the full report has the rows


def test_calibration_report_repr_html() -> None:
    from openevals.calibration import calibrate

    frame = pd.DataFrame(
        {
            "outputs": ["x", "y", "z", "w"],
            "reference_outputs": ["x", "n", "z", "w"],
            "label": [True, False, True, False],
        }
    )
    report = calibrate(frame, openevals.exact_match, label="label", progress=False)
    page = report._repr_html_()
    assert "CalibrationReport" in page and "Confusion" in page
    assert "1 disagreements" in page


# --------------------------------------------------------------------------- the command


def test_cli_output_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "in.parquet"
    DATA.to_parquet(data)
    out = tmp_path / "out.parquet"
    code = main(
        ["run", str(data), "--evaluator", "exact_match", "--output", str(out), "--no-progress"]
    )
    assert code == 0
    table = pq.read_table(out)
    assert table.column("id").to_pylist() == ["r0", "r1", "r2"]
    assert table.column("score").to_pylist() == [True, False, False]
    assert (tmp_path / "out.parquet.jsonl").exists()  # the resumable record
    assert f"Results: {out}" in capsys.readouterr().out
    # a rerun resumes from the record and writes the same table
    assert (
        main(
            ["run", str(data), "--evaluator", "exact_match", "--output", str(out), "--no-progress"]
        )
        == 0
    )
    assert pq.read_table(out).column("score").to_pylist() == [True, False, False]


# --------------------------------------------------------------------------- hostile values (issue 43)


def test_exports_take_lone_surrogates_and_mixed_key_scores(tmp_path: Path) -> None:
    """A judge can answer half an emoji; a dict score can mix key types. Every export used to
    raise (UnicodeEncodeError, or TypeError from sorting the keys)."""
    import pyarrow.parquet as pq

    from openevals.evaluation import evaluate

    def half_emoji(**_: Any) -> dict[str, Any]:
        return {"key": "s", "score": 1.0, "comment": "half \ud83d emoji"}

    def text_score(**_: Any) -> dict[str, Any]:
        return {"key": "t", "score": "x\ud83d"}

    def mixed_keys(**_: Any) -> dict[str, Any]:
        return {"key": "m", "score": {1: "a", "b": 2}}

    result = evaluate(
        [{"inputs": "a", "outputs": "b"}], [half_emoji, text_score, mixed_keys], progress=False
    )
    for wide in (False, True):
        frame = result.to_pandas(wide=wide)
        assert "\ud83d" not in frame.to_json()
        result.to_polars(wide=wide)
        table = pq.read_table(result.to_parquet(tmp_path / f"run-{wide}.parquet", wide=wide))
        assert table.num_rows == (1 if wide else 3)
    long = result.to_pandas()
    comments = dict(zip(long["key"], long["comment"], strict=True))
    assert comments["s"] == "half \ufffd emoji"
    scores = dict(zip(long["key"], long["score"], strict=True))
    assert scores["t"] == "x\ufffd" and scores["m"] == {1: "a", "b": 2}
    stored = pq.read_table(tmp_path / "run-False.parquet").to_pydict()
    assert dict(zip(stored["key"], stored["score"], strict=True))["m"] == '{"1": "a", "b": 2}'
