"""Per-evaluation timeout, empty datasets and files that are not UTF-8 text (issue 27, items 1
and 6, runner part).

``eval_timeout=`` / ``--eval-timeout`` records an evaluation still running after that many
seconds as a ``TimeoutError`` on its row and moves on (async evaluators are cancelled, a sync
evaluator's thread is abandoned). ``openevals run`` refuses an empty dataset (exit 2) unless
``--allow-empty``; a binary file names the file and the line and says it is not UTF-8 text.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openevals import aevaluate, evaluate, exact_match
from openevals.cli import main
from openevals.data.rows import count_rows, load_rows
from openevals.evaluation import LocalEngine

ROWS = [{"id": f"r{i}", "outputs": "a", "reference_outputs": "a"} for i in range(4)]


# --------------------------------------------------------------------------- eval_timeout


async def slow_async(outputs: Any, reference_outputs: Any) -> dict[str, Any]:
    if outputs == "slow":
        await asyncio.sleep(30)
    return {"key": "fine", "score": True}


_release = threading.Event()


def slow_sync(outputs: Any, reference_outputs: Any) -> dict[str, Any]:
    if outputs == "slow":
        _release.wait(30)
    return {"key": "fine", "score": True}


def own_timeout(outputs: Any) -> dict[str, Any]:
    raise TimeoutError("my own deadline")


def _slow_rows() -> list[dict[str, Any]]:
    rows = [dict(row) for row in ROWS]
    rows[1]["outputs"] = "slow"
    return rows


@pytest.mark.parametrize("evaluator", [slow_async, slow_sync], ids=["async", "sync"])
@pytest.mark.parametrize("use_async", [False, True], ids=["evaluate", "aevaluate"])
def test_a_slow_evaluation_times_out_on_its_row(
    evaluator: Any, use_async: bool, tmp_path: Path
) -> None:
    out = tmp_path / "run.jsonl"
    kwargs: dict[str, Any] = {
        "progress": False,
        "engine": LocalEngine(eval_timeout=0.3),
        "output": out,
    }
    evaluators = {"slow": evaluator, "exact": exact_match}
    start = time.perf_counter()
    try:
        if use_async:
            result = asyncio.run(aevaluate(_slow_rows(), evaluators, **kwargs))
        else:
            result = evaluate(_slow_rows(), evaluators, **kwargs)
    finally:
        _release.set()
        _release.clear()
    assert time.perf_counter() - start < 10
    statuses = [row["evaluations"]["slow"]["status"] for row in result.rows]
    assert statuses == ["success", "error", "success", "success"]
    error = result.rows[1]["evaluations"]["slow"]["error"]
    assert error["type"] == "TimeoutError"
    assert "eval_timeout=0.3" in error["message"] and "'slow'" in error["message"]
    assert result.rows[1]["evaluations"]["exact"]["status"] == "success"
    assert result.summary["rows_with_errors"] == 1
    evals = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for e in evals if e["kind"] == "eval") == 8


def test_an_evaluators_own_timeout_is_not_reworded() -> None:
    result = evaluate(ROWS[:1], [own_timeout], progress=False, engine=LocalEngine(eval_timeout=5))
    error = result.rows[0]["evaluations"]["own_timeout"]["error"]
    assert error == {"type": "TimeoutError", "message": "my own deadline"}


def test_fast_evaluations_are_unaffected() -> None:
    plain = evaluate(ROWS, [exact_match, slow_async], progress=False)
    timed = evaluate(
        ROWS, [exact_match, slow_async], progress=False, engine=LocalEngine(eval_timeout=5)
    )
    assert plain.aggregates == timed.aggregates


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (True, TypeError),
        ("5", TypeError),
    ],
)
def test_eval_timeout_is_checked(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"LocalEngine\(eval_timeout=\)"):
        LocalEngine(eval_timeout=value)


def test_cli_eval_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    assert (
        main(["run", str(data), "-e", "exact_match", "--no-progress", "--eval-timeout", "5"]) == 0
    )
    code = main(["run", str(data), "-e", "exact_match", "--no-progress", "--eval-timeout", "-2"])
    assert code == 2
    assert "eval_timeout=) must be a positive number" in capsys.readouterr().err


# --------------------------------------------------------------------------- empty datasets


@pytest.mark.parametrize(
    ("name", "content"),
    [("e.jsonl", ""), ("e.jsonl", "\n  \n"), ("e.json", "[]"), ("e.csv", "inputs,outputs\n")],
)
def test_cli_refuses_an_empty_dataset(
    name: str, content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / name
    data.write_text(content)
    out = tmp_path / "out.jsonl"
    args = ["run", str(data), "-e", "exact_match", "--no-progress", "--output", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "holds no rows" in err and "--allow-empty" in err and name in err
    assert not out.exists()  # refused before anything ran
    assert main([*args, "--allow-empty"]) == 0


# --------------------------------------------------------------------------- not UTF-8 text


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".tsv"])
def test_a_binary_file_names_the_file_and_the_line(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / f"blob{suffix}"
    good = {
        ".jsonl": b'{"outputs": "a"}\n{"outputs": "b"}\n',
        ".json": b'[\n{"outputs": "a"},\n',
        ".csv": b"outputs,reference_outputs\na,a\n",
        ".tsv": b"outputs\treference_outputs\na\ta\n",
    }[suffix]
    data.write_bytes(good + b"\x80\x81\xfe binary \x00\n")
    with pytest.raises(ValueError, match=r"line 3 is not UTF-8 text \(byte 0x80") as info:
        load_rows(data)
    assert str(data) in str(info.value)
    if suffix != ".json":
        with pytest.raises(ValueError, match="line 3 is not UTF-8 text"):
            count_rows(data) if suffix != ".jsonl" else load_rows(data)
    assert main(["run", str(data), "-e", "exact_match", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and str(data) in err and "Traceback" not in err


def test_a_bom_is_still_accepted(tmp_path: Path) -> None:
    data = tmp_path / "bom.jsonl"
    data.write_bytes(b'\xef\xbb\xbf{"outputs": "a", "reference_outputs": "a"}\n')
    assert load_rows(data)[0].fields == {"outputs": "a", "reference_outputs": "a"}
    csv_file = tmp_path / "bom.csv"
    csv_file.write_bytes(b"\xef\xbb\xbfoutputs,reference_outputs\na,a\n")
    assert load_rows(csv_file)[0].fields == {"outputs": "a", "reference_outputs": "a"}


def test_a_multiline_csv_cell_still_reads(tmp_path: Path) -> None:
    data = tmp_path / "m.csv"
    data.write_bytes(b'outputs,reference_outputs\r\n"two\r\nlines",x\r\n')
    assert load_rows(data)[0].fields["outputs"] == "two\r\nlines"
    assert count_rows(data) == 1
