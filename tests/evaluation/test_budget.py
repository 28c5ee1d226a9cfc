"""``budget=Budget(prices=..., max_cost=...)``: a run stops starting rows at its cost cap, keeps
every finished row, says where it stopped, and a rerun with the same ``output=`` resumes.

Judges talk to the fake OpenAI server, which reports token usage priced by the budget's table.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from openevals.cli import main
from openevals.evaluation import Budget, aevaluate, evaluate
from openevals.evaluation.pricing import DEFAULT_PRICES
from openevals.testing import FakeOpenAIServer
from tests.evaluation.helpers import make_judge, qa_rows

VERDICT = {"reasoning": "Right.", "score": True}
USAGE = {"prompt_tokens": 100, "completion_tokens": 10}
PRICES = {"gpt-test": (2.0, 10.0)}
CALL = (100 * 2.0 + 10 * 10.0) / 1e6  # USD per judge call: 0.0003


def _file_rows(path: Path) -> dict[str, int]:
    """Row id -> finished evaluations in an ``output=`` file."""
    done: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == "eval":
            done[record["row_id"]] = done.get(record["row_id"], 0) + 1
    return done


@pytest.mark.parametrize("use_async", [False, True], ids=["evaluate", "aevaluate"])
def test_the_cap_stops_new_rows_keeps_finished_ones_and_a_rerun_resumes(
    fake_openai: FakeOpenAIServer, tmp_path: Path, use_async: bool
) -> None:
    fake_openai.set_default_chat(json=VERDICT, usage=USAGE)
    output = tmp_path / "run.jsonl"
    budget = Budget(prices=PRICES, max_cost=0.001)  # the 4th call reaches it (4 x 0.0003)

    def run(cap: Budget) -> Any:
        # A judge per run: an async client belongs to the event loop of its first call.
        judge = make_judge("openai-async" if use_async else "openai-sync", fake_openai)
        options: dict[str, Any] = {"output": output, "budget": cap, "concurrency": 1}
        if use_async:
            return asyncio.run(aevaluate(qa_rows(10), {"judge": judge}, progress=False, **options))
        return evaluate(qa_rows(10), {"judge": judge}, progress=False, **options)

    first = run(budget)
    assert [row["id"] for row in first.rows] == ["q0", "q1", "q2", "q3"]
    assert len(fake_openai.chat_requests) == 4
    assert first.summary["cost_usd"] == pytest.approx(4 * CALL)
    assert first.stopped is not None and first.stopped.startswith(
        "stopped at cost cap $0.001 after 4 rows"
    )
    assert first.summary["stopped"] == first.stopped
    assert first.to_dict()["stopped"] == first.stopped
    assert not first.interrupted and " stopped " in repr(first)
    assert _file_rows(output) == {f"q{i}": 1 for i in range(4)}

    again = run(budget)  # the cap counts this run's calls only: four more rows
    assert len(fake_openai.chat_requests) == 8
    assert again.summary["pairs"]["resumed"] == 4
    assert [row["id"] for row in again.rows] == [f"q{i}" for i in range(8)]
    assert again.stopped is not None and "after 8 rows" in again.stopped

    last = run(Budget(prices=PRICES, max_cost=1.0))
    assert len(fake_openai.chat_requests) == 10, "no finished row was asked again"
    assert last.stopped is None and "stopped" not in last.summary
    assert "stopped" not in last.to_dict()
    assert [row["id"] for row in last.rows] == [f"q{i}" for i in range(10)]
    assert all(row["status"] == "success" for row in last.rows)


def test_rows_in_flight_finish_whole_and_nothing_after_the_cap_starts(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_default_chat(json=VERDICT, usage=USAGE, delay=0.02)
    judges = {
        "a": make_judge("openai-async", fake_openai, feedback_key="a"),
        "b": make_judge("openai-async", fake_openai, feedback_key="b"),
    }
    output = tmp_path / "run.jsonl"
    cap = 0.0015  # five calls, i.e. two and a half rows
    result = evaluate(
        qa_rows(40),
        judges,
        output=output,
        budget=Budget(prices=PRICES, max_cost=cap),
        concurrency=4,
        progress=False,
    )
    rows = len(result.rows)
    # Rows start only while the cost is under the cap; at most `concurrency` rows were in
    # flight when it was reached, and each of them finished.
    assert 3 <= rows <= 3 + 4
    assert len(fake_openai.chat_requests) == 2 * rows
    assert all(set(row["evaluations"]) == {"a", "b"} for row in result.rows)
    assert _file_rows(output) == {row["id"]: 2 for row in result.rows}
    assert result.summary["cost_usd"] == pytest.approx(2 * rows * CALL)
    assert result.stopped is not None and f"after {rows} rows" in result.stopped


def test_no_cap_and_unpriced_models_never_stop(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(json=VERDICT, usage=USAGE)
    judge = make_judge("openai-sync", fake_openai)
    assert "gpt-test" not in DEFAULT_PRICES
    unpriced = evaluate(qa_rows(3), [judge], budget=Budget(max_cost=1e-9), progress=False)
    assert len(unpriced.rows) == 3 and unpriced.stopped is None
    uncapped = evaluate(qa_rows(3), [judge], budget=Budget(prices=PRICES), progress=False)
    assert len(uncapped.rows) == 3 and uncapped.stopped is None
    assert uncapped.summary["cost_usd"] == pytest.approx(3 * CALL)


def test_a_zero_cap_starts_nothing(fake_openai: FakeOpenAIServer) -> None:
    judge = make_judge("openai-sync", fake_openai)
    result = evaluate(qa_rows(3), [judge], budget=Budget(prices=PRICES, max_cost=0), progress=False)
    assert result.rows == [] and fake_openai.chat_requests == []
    assert result.stopped is not None and "after 0 rows" in result.stopped


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"max_cost": -1}, ValueError, r"Budget\(max_cost=\) must be a finite number >= 0"),
        ({"max_cost": float("nan")}, ValueError, r"Budget\(max_cost=\)"),
        ({"max_cost": "5"}, TypeError, r"Budget\(max_cost=\) must be a number"),
        ({"max_cost": True}, TypeError, r"Budget\(max_cost=\) must be a number"),
        ({"prices": {"m": "cheap"}}, TypeError, r"prices\['m'\]"),
        ({"prices": [("m", 1)]}, TypeError, "prices must be a dict"),
    ],
)
def test_bad_budgets_are_refused_where_they_are_written(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        Budget(**kwargs)


def test_a_budget_does_not_keep_the_callers_dict() -> None:
    prices: dict[str, Any] = {"m": (1.0, 2.0)}
    budget = Budget(prices=prices, max_cost=3)
    prices["m"] = (9.0, 9.0)
    assert budget.table["m"] == (1.0, 2.0) and budget.max_cost == 3.0
    assert budget.table["gpt-4.1-mini"] == DEFAULT_PRICES["gpt-4.1-mini"]


@pytest.mark.parametrize("fn", [evaluate, aevaluate])
def test_evaluate_keeps_to_its_keyword_budget(fn: Any) -> None:
    """Issue 34: at most 14 keyword options; engine, batch-metric and budget options live on
    their objects."""
    params = inspect.signature(fn).parameters.values()
    keywords = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert len(keywords) <= 14
    assert not [name for name in keywords if name.startswith("ray_")]
    assert {"accumulate", "batch_size", "prices", "eval_timeout"}.isdisjoint(keywords)


@pytest.mark.usefixtures("openai_env")
def test_cli_max_cost(
    fake_openai: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_openai.set_default_chat(
        json=VERDICT, usage={"prompt_tokens": 1000, "completion_tokens": 500}
    )
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in qa_rows(6)), encoding="utf-8")
    output = tmp_path / "run.jsonl"
    argv = [
        "run",
        str(data),
        "-e",
        "llm:CORRECTNESS_PROMPT",
        "--model",
        "openai:gpt-4.1-mini",  # priced by the default table: 0.0012 USD per call here
        "--concurrency",
        "1",
        "--output",
        str(output),
        "--no-progress",
        "--max-cost",
        "0.003",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "stopped at cost cap $0.003 after 3 rows" in err and "--output" in err
    assert len(fake_openai.chat_requests) == 3
    assert main(argv) == 0  # resumes: three more rows, the rest of the data
    assert len(fake_openai.chat_requests) == 6
    assert len(_file_rows(output)) == 6
    assert main([*argv[:-1], "-1"]) == 2
    assert "Budget(max_cost=) must be a finite number >= 0" in capsys.readouterr().err
