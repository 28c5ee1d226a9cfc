"""One bad row must never cost a batch run (issue 29, item 1).

A row holding a lone surrogate, a value that contains itself or 2,000 levels of nesting cannot be
stored as JSON text. With or without an ``id``, on the sync and the async path, such a row becomes
an error row (``RowDataError``, naming the row index and the field), the other rows are scored,
the ``output=`` file stays valid JSONL and resumes, and ``to_jsonl()`` / ``report_html()`` work.
Values an evaluator or a target returns that cannot be stored are written in a bounded, escaped
form. The caller's rows are never modified.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openevals import aevaluate, evaluate, exact_match
from openevals.data.encoding import escape_surrogates, storable_text
from openevals.data.rows import RowDataError, iter_rows

DEEP = 2_000


def _cycle() -> list[Any]:
    value: list[Any] = ["x"]
    value.append(value)
    return value


def _deep() -> Any:
    value: Any = "leaf"
    for _ in range(DEEP):
        value = {"k": value}
    return value


BAD: dict[str, Callable[[], Any]] = {
    "surrogate": lambda: "caf\udce9",
    "cycle": _cycle,
    "deep": _deep,
}
REASON = {"surrogate": "not valid Unicode", "cycle": "contains itself", "deep": "nested too deeply"}


def _rows(bad: str, *, with_id: bool, field: str = "outputs") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"inputs": {"q": i}, "outputs": f"a{i}", "reference_outputs": f"a{i}"} for i in range(4)
    ]
    rows[2][field] = BAD[bad]()
    if with_id:
        for i, row in enumerate(rows):
            row["id"] = f"r{i}"
    return rows


def _check_lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # strict: the file is UTF-8
    return [json.loads(line) for line in text.splitlines()]


def _run(rows: list[dict[str, Any]], *, use_async: bool, **kwargs: Any) -> Any:
    if use_async:
        return asyncio.run(aevaluate(rows, [exact_match], progress=False, **kwargs))
    return evaluate(rows, [exact_match], progress=False, **kwargs)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("with_id", [False, True], ids=["no-id", "id"])
@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_bad_row_is_an_error_row(
    bad: str, with_id: bool, use_async: bool, tmp_path: Path
) -> None:
    rows = _rows(bad, with_id=with_id)
    held = rows[2]["outputs"]
    out = tmp_path / "run.jsonl"
    result = _run(rows, use_async=use_async, output=out)
    assert rows[2]["outputs"] is held  # the caller's row is untouched
    assert [r["status"] for r in result.rows] == ["success", "success", "error", "success"]
    error = result.rows[2]["evaluations"]["exact_match"]["error"]
    assert error["type"] == "RowDataError"
    assert "row 2" in error["message"] and "'outputs'" in error["message"]
    assert REASON[bad] in error["message"]
    assert result.rows[2]["outputs"].startswith("<unstorable ")
    lines = _check_lines(out)
    assert sum(1 for line in lines if line["kind"] == "eval") == 4
    # the report and to_jsonl hold the row too
    assert len([json.loads(line) for line in result.to_jsonl().splitlines()]) == 4
    result.to_jsonl(tmp_path / "rows.jsonl")
    assert len(_check_lines(tmp_path / "rows.jsonl")) == 4
    assert "RowDataError" in result.report_html(tmp_path / "r.html").read_text(encoding="utf-8")
    # resume: nothing runs again, the same four rows come back
    again = _run(rows, use_async=use_async, output=out)
    assert [r["id"] for r in again.rows] == [r["id"] for r in result.rows]
    assert all(r["evaluations"]["exact_match"]["resumed"] for r in again.rows)
    assert len(_check_lines(out)) == len(lines) + 1  # only the new run line


def test_the_error_names_every_bad_field_and_a_bad_id() -> None:
    row = {"id": "caf\udce9", "inputs": _cycle(), "outputs": "a", "context": _deep()}
    (got,) = iter_rows([row])
    assert got.problem is not None
    assert "'inputs'" in got.problem and "'context'" in got.problem and "'id'" in got.problem
    assert "row 0" in got.problem
    assert got.id != row["id"] and got.id.isalnum()
    assert got.fields["outputs"] == "a"
    assert issubclass(RowDataError, ValueError)


def test_ids_of_bad_rows_are_stable_across_runs() -> None:
    first = [r.id for r in iter_rows(_rows("cycle", with_id=False))]
    second = [r.id for r in iter_rows(_rows("cycle", with_id=False))]
    assert first == second and len(set(first)) == 4


def test_a_thousand_rows_five_percent_bad_then_resume(tmp_path: Path) -> None:
    """The runner test the issue asks for: every row present once, bad rows are error rows,
    the file parses line by line after an interrupted run is resumed."""
    makers = list(BAD.values())
    rows: list[dict[str, Any]] = []
    bad_rows = set()
    for i in range(1000):
        row: dict[str, Any] = {"inputs": {"q": i}, "outputs": f"a{i}", "reference_outputs": "a1"}
        if i % 20 == 7:
            row["inputs"] = makers[(i // 20) % 3]()
            bad_rows.add(i)
        if i % 2:
            row["id"] = f"row-{i}"
        rows.append(row)
    assert len(bad_rows) == 50
    out = tmp_path / "run.jsonl"
    evaluate(rows[:613], [exact_match], progress=False, output=out)  # "interrupted" here
    result = evaluate(rows, [exact_match], progress=False, output=out)
    assert len(result.rows) == 1000
    lines = _check_lines(out)
    evals: dict[str, int] = {}
    for line in lines:
        if line["kind"] == "eval":
            evals[line["row_id"]] = evals.get(line["row_id"], 0) + 1
    assert sorted(evals) == sorted(r["id"] for r in result.rows)
    assert set(evals.values()) == {1}
    for row in result.rows:
        entry = row["evaluations"]["exact_match"]
        if row["index"] in bad_rows:
            assert entry["status"] == "error"
            assert entry["error"]["type"] == "RowDataError"
            assert f"row {row['index']}" in entry["error"]["message"]
        else:
            assert entry["status"] == "success"
        assert entry["resumed"] == (row["index"] < 613)


def test_values_a_target_returns_are_stored_bounded(tmp_path: Path) -> None:
    def target(inputs: Any) -> Any:
        return {"cycle": _cycle(), "deep": _deep(), "text": "caf\udce9"}

    out = tmp_path / "run.jsonl"
    rows = [{"id": "a", "inputs": "q", "reference_outputs": "r"}]
    result = evaluate(rows, [exact_match], target=target, progress=False, output=out)
    assert result.rows[0]["evaluations"]["exact_match"]["status"] == "error"
    lines = _check_lines(out)
    (row_line,) = [line for line in lines if line["kind"] == "row"]
    stored = row_line["outputs"]
    assert stored["text"] == "caf\udce9"  # escaped in the file, read back exactly
    # the part that cannot be stored is a bounded text; what can be stored is kept
    assert stored["cycle"][0] == "x" and "<unstorable list" in json.dumps(stored["cycle"])
    assert "<unstorable dict" in json.dumps(stored["deep"])
    assert len(json.dumps(stored)) < 2_000
    assert json.loads(result.to_jsonl() or "")["outputs"]["text"] == "caf\udce9"
    result.report_html(tmp_path / "r.html")
    # resume reuses the stored target outputs and the file stays valid
    again = evaluate(rows, [exact_match], target=target, progress=False, output=out)
    assert again.rows[0]["evaluations"]["exact_match"]["resumed"]
    _check_lines(out)


def test_escaped_text_reads_back_the_same() -> None:
    record = {"a": "x\ud800y", "caf\udce9": ["\udfff", "ok é"]}
    text = storable_text(record)
    text.encode("utf-8")
    assert json.loads(text) == record
    assert escape_surrogates("plain é") == "plain é"
