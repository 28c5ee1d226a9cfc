"""Judge panels: concurrent calls, every vote kept, the three aggregates, runs, calibration."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from openevals import evaluate
from openevals._contract import EvaluatorInfo, attach_info, info_of
from openevals.calibration import calibrate
from openevals.llm import create_llm_as_judge
from openevals.panel import (
    create_async_judge_panel,
    create_judge_panel,
    panel_agreement_of,
)
from openevals.testing import FakeOpenAIServer
from tests.calibration.fakes import row_tag


def _fixed(name: str, score: Any, delay: float = 0.0) -> Any:
    def judge(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        time.sleep(delay)
        value = score(outputs) if callable(score) else score
        return {"key": name, "score": value, "comment": f"{name} says {value}"}

    judge.__name__ = name
    attach_info(judge, EvaluatorInfo(run_name=name, feedback_keys=(name,), score_type="boolean"))
    return judge


def _llm(server: FakeOpenAIServer, style: str) -> Any:
    client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    prompt = f"Judge {style}.\nQuestion: {{inputs}}\nAnswer: {{outputs}}\nGrade the answer."
    return create_llm_as_judge(prompt=prompt, judge=client, model="gpt-test", max_retries=0)


def _two_llm_judges(server: FakeOpenAIServer) -> list[Any]:
    """A strict judge (passes rows 0-2) and a lenient one (passes rows 0-5), told apart by prompt."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        row = int(row_tag(body)[4:-1])
        strict = "Judge strictly" in json.dumps(body["messages"])
        return {"json": {"reasoning": "r", "score": row < (3 if strict else 6)}}

    server.set_responder(respond)
    return [_llm(server, "strictly"), _llm(server, "leniently")]


def test_majority_of_judges_of_different_families_keeps_every_vote(
    fake_openai: FakeOpenAIServer,
) -> None:
    strict, lenient = _two_llm_judges(fake_openai)
    middle = _fixed("rule", lambda out: out in ("[row0]", "[row1]", "[row2]", "[row3]"))
    panel = create_judge_panel([strict, lenient, middle])
    assert info_of(panel).score_type == "boolean" and info_of(panel).judge  # type: ignore[union-attr]
    found = panel(inputs="q", outputs="[row4]")
    assert found["key"] == "panel" and found["score"] is False
    votes = found["metadata"]["votes"]
    assert [v["score"] for v in votes] == [False, True, False]
    assert [v["judge"] for v in votes] == ["llm_as_judge", "llm_as_judge_2", "rule"]
    assert found["comment"] == "2 of 3 judges: False (majority)"
    assert found["metadata"]["agreement"] == pytest.approx(2 / 3)
    assert panel(inputs="q", outputs="[row1]")["score"] is True


def test_a_run_with_a_cached_panel_and_its_agreement(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    judges = _two_llm_judges(fake_openai)
    rule = _fixed("rule", lambda out: out in ("[row0]", "[row1]", "[row7]"))
    panel = create_judge_panel([*judges, rule])
    rows = [{"id": f"r{i}", "inputs": "q", "outputs": f"[row{i}]"} for i in range(8)]
    cache = tmp_path / "cache.sqlite"
    first = evaluate(rows, [panel], cache=str(cache), progress=False)
    assert len(fake_openai.chat_requests) == 16
    again = evaluate(rows, [panel], cache=str(cache), progress=False)
    # The runner's judge cache reaches the judges in the panel's threads: no new calls.
    assert len(fake_openai.chat_requests) == 16
    assert [r["evaluations"]["judge_panel"]["results"][0]["score"] for r in again.rows] == [
        True, True, True, False, False, False, False, False,
    ]  # fmt: skip
    agreement = panel_agreement_of(first, resamples=200)
    krippendorff = pytest.importorskip("krippendorff")
    votes = [
        [i < 3 for i in range(8)],
        [i < 6 for i in range(8)],
        [i in (0, 1, 7) for i in range(8)],
    ]
    expected = krippendorff.alpha(
        [[float(v) for v in judge] for judge in votes], level_of_measurement="nominal"
    )
    assert agreement.alpha.value == pytest.approx(expected, abs=1e-12)
    assert agreement.level == "nominal" and agreement.judges == 3 and agreement.rows == 8
    assert 1.0 <= agreement.effective_judges <= 3.0  # type: ignore[operator]
    assert "Krippendorff's alpha" in str(agreement)


def test_sync_panel_calls_its_judges_concurrently() -> None:
    panel = create_judge_panel([_fixed(f"j{i}", True, delay=0.2) for i in range(4)])
    start = time.perf_counter()
    assert panel(outputs="x")["score"] is True
    assert time.perf_counter() - start < 0.5  # four 0.2 s judges, in parallel


async def test_async_panel_awaits_judges_together_and_runs_sync_ones_in_threads() -> None:
    async def slow(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        await asyncio.sleep(0.2)
        return {"key": "slow", "score": 0.5}

    main = threading.get_ident()
    seen: list[int] = []

    def blocking(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        seen.append(threading.get_ident())
        time.sleep(0.2)
        return {"key": "blocking", "score": 1.0}

    panel = create_async_judge_panel([slow, slow, blocking], aggregate="mean")
    start = time.perf_counter()
    found = await panel(outputs="x")
    assert time.perf_counter() - start < 0.35
    assert found["score"] == pytest.approx(2 / 3) and seen and seen[0] != main
    assert info_of(panel).score_type == "continuous"  # type: ignore[union-attr]


def test_aggregates_ties_and_weights() -> None:
    yes, no = _fixed("yes", True), _fixed("no", False)
    assert create_judge_panel([yes, no])(outputs="x")["score"] is False  # a tie does not pass
    assert "(a tie)" in create_judge_panel([yes, no])(outputs="x")["comment"]
    nums = [_fixed("a", 1), _fixed("b", 3), _fixed("c", 3)]
    assert create_judge_panel(nums)(outputs="x")["score"] == 3
    assert create_judge_panel(nums, aggregate="mean")(outputs="x")["score"] == pytest.approx(7 / 3)
    weighted = create_judge_panel(nums, aggregate="weighted", weights=[2, 1, 1])
    found = weighted(outputs="x")
    assert found["score"] == pytest.approx((2 * 1 + 3 + 3) / 4)
    assert found["metadata"]["spread"] == 2


def test_a_failing_judge_fails_the_panel_never_a_score() -> None:
    def broken(**_: Any) -> Any:
        raise RuntimeError("judge down")

    panel = create_judge_panel([_fixed("yes", True), broken, _fixed("no", False)])
    with pytest.raises(RuntimeError, match="judge down"):
        panel(outputs="x")
    run = evaluate([{"outputs": "x"}], [panel], progress=False)
    entry = run.rows[0]["evaluations"]["judge_panel"]
    assert entry["status"] == "error" and "judge down" in entry["error"]["message"]


def test_calibration_works_on_a_panel() -> None:
    panel = create_judge_panel(
        [_fixed("a", lambda o: o != "bad"), _fixed("b", True), _fixed("c", lambda o: o == "ok")]
    )
    rows = [{"outputs": o, "label": o == "ok"} for o in ["ok", "bad", "meh", "ok", "meh", "bad"]]
    report = calibrate(rows, panel, label="label", progress=False, resamples=0)
    assert report.label_type == "boolean" and report.feedback_key == "panel"
    assert [r.judge for r in report.rows] == [True, False, True, True, True, False]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"judges": [_fixed("a", True)]}, TypeError, "at least 2"),
        ({"judges": [_fixed("a", True), 3]}, TypeError, r"judges\[1\]"),
        ({"aggregate": "median"}, ValueError, "`aggregate`"),
        ({"aggregate": "weighted"}, ValueError, "`weights`"),
        ({"aggregate": "weighted", "weights": [1, -1]}, ValueError, "positive"),
        ({"weights": [1, 1]}, ValueError, "`weights`"),
        ({"judge_keys": ["a"]}, TypeError, "`judge_keys`"),
        ({"feedback_key": ""}, TypeError, "`feedback_key`"),
        ({"max_workers": 0}, ValueError, "`max_workers`"),
    ],
)
def test_bad_options_name_the_parameter(kwargs: Any, error: Any, match: str) -> None:
    options = {"judges": [_fixed("a", True), _fixed("b", True)], **kwargs}
    with pytest.raises(error, match=match):
        create_judge_panel(**options)


def test_sync_panel_refuses_async_judges_and_unreadable_votes() -> None:
    async def judge(**_: Any) -> Any:
        return {"key": "x", "score": True}

    with pytest.raises(TypeError, match="create_async_judge_panel"):
        create_judge_panel([judge, _fixed("a", True)])

    def two(**_: Any) -> Any:
        return [{"key": "p", "score": True}, {"key": "q", "score": False}]

    with pytest.raises(ValueError, match="judge_keys"):
        create_judge_panel([two, _fixed("a", True)])(outputs="x")
    panel = create_judge_panel([two, two], judge_keys="q")
    assert panel(outputs="x")["score"] is False
    with pytest.raises(ValueError, match="no panel votes"):
        panel_agreement_of(evaluate([{"outputs": "x"}], [_fixed("a", True)], progress=False))
