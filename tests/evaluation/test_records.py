"""One record format: the live rows, the ``output=`` file, resume and ``to_jsonl`` agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openevals.data.encoding import encode
from openevals.evaluation import evaluate
from openevals.evaluation.records import Evaluation, Recorder, ResultRow, TargetInfo
from openevals.exact import exact_match

DATA = [
    {"id": f"r{i}", "inputs": {"q": f"é{i}"}, "outputs": f"a{i % 2}", "reference_outputs": "a0"}
    | ({"topic": "t"} if i % 2 else {})
    for i in range(6)
]


def flaky(*, outputs: str, **kwargs: Any) -> dict[str, Any]:
    if outputs == "a1":
        raise RuntimeError("boom")
    usage = {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    return {"key": "judged", "score": 0.5, "comment": "ok", "metadata": {"usage": usage}}


def target(inputs: dict[str, Any]) -> str:
    return "a" + inputs["q"][-1]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_live_rows_file_records_and_to_jsonl_share_one_encoding(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = evaluate(
        DATA, [exact_match, flaky], target=target, output=out, group_by="topic", progress=False
    )
    text = result.to_jsonl()
    assert text == "".join(encode(row) + "\n" for row in result.rows)
    result.to_jsonl(tmp_path / "copy.jsonl")
    assert (tmp_path / "copy.jsonl").read_text(encoding="utf-8") == text

    lines = _lines(out)
    assert [line["kind"] for line in lines[:1]] == ["run"]
    evals = {(line["row_id"], line["evaluator"]): line for line in lines if line["kind"] == "eval"}
    rows = {line["row_id"]: line for line in lines if line["kind"] == "row"}
    eval_keys = [k for k in Evaluation.__annotations__ if k != "resumed"]
    for row in result.rows:
        row_fp = rows[row["id"]]["row_fp"]
        assert len(row_fp) == 16
        assert rows[row["id"]] == Recorder.row_line(row, row_fp)
        optional = ["extra"] if "extra" in row else []
        assert list(row) == [
            *(k for k in ResultRow.__annotations__ if k in ResultRow.__required_keys__),
            *optional,
            "group",
            "evaluations",
            "target",
            "status",
        ]
        assert set(row["target"]) == set(TargetInfo.__annotations__)
        for name, entry in row["evaluations"].items():
            assert list(entry) == list(Evaluation.__annotations__)
            line = evals[(row["id"], name)]
            fps = {"evaluator_fp": line["evaluator_fp"], "row_fp": row_fp}
            assert line == Recorder.eval_line(row["id"], row["index"], name, entry, **fps)
            assert list(line) == ["kind", "row_id", "index", "evaluator", *eval_keys, *fps]
            # Resume reads back exactly what the live path recorded.
            assert Recorder().resumed(json.loads(encode(line))) == {**entry, "resumed": True}


def test_a_resumed_run_reports_the_same_rows(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = evaluate(DATA, [exact_match, flaky], target=target, output=out, progress=False)
    again = evaluate(DATA, [exact_match, flaky], target=target, output=out, progress=False)

    def comparable(row: dict[str, Any]) -> dict[str, Any]:
        return {
            **row,
            "evaluations": {
                name: {**entry, "resumed": None} for name, entry in row["evaluations"].items()
            },
        }

    assert [comparable(r) for r in again.rows] == [comparable(r) for r in first.rows]
    assert all(e["resumed"] for r in again.rows for e in r["evaluations"].values())
    assert again.summary["pairs"] == {**first.summary["pairs"], "resumed": 12}
    assert again.summary["evaluators"]["flaky"]["usage"] == {
        "input_tokens": 15,
        "output_tokens": 5,
        "total_tokens": 20,
    }
    assert again.summary["usage"] == first.summary["usage"]
    assert again.aggregates == first.aggregates


def test_missing_fields_in_an_old_record_get_the_documented_defaults() -> None:
    entry = Recorder().resumed({"kind": "eval", "row_id": "x", "evaluator": "e"})
    assert entry == {
        "status": "error",
        "results": [],
        "error": None,
        "elapsed_sec": None,
        "usage": None,
        "cost_usd": None,
        "model": None,
        "cache": None,
        "resumed": True,
    }
