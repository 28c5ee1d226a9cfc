"""compare(..., judge=): the two runs' outputs judged head to head through the batch runner."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from openevals.comparison import acompare, compare
from openevals.evaluation import Budget, EvaluatorFailing, LocalEngine, evaluate
from openevals.pairwise import create_async_pairwise_llm_as_judge, create_pairwise_llm_as_judge
from openevals.testing import FakeOpenAIServer, async_openai_client, openai_client


def _responder(body: dict[str, Any]) -> dict[str, Any]:
    """Prefers the longer answer; on rows mentioning 'biased' always the one shown first."""
    text = json.dumps(body["messages"])
    a = re.search(r"<response_a>\\n(.*?)\\n</response_a>", text)
    b = re.search(r"<response_b>\\n(.*?)\\n</response_b>", text)
    assert a and b, text
    if "biased" in text:
        return {"json": {"reasoning": "first", "preference": "A"}}
    return {"json": {"reasoning": "longer", "preference": "A" if len(a[1]) > len(b[1]) else "B"}}


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    rows = [{"id": f"r{i}", "inputs": f"q{i}" + (" biased" if i < 2 else "")} for i in range(10)]
    base = tmp_path / "base.jsonl"
    cand = tmp_path / "cand.jsonl"
    for path, answer in ((base, "short"), (cand, "a much longer answer")):
        evaluate([dict(r, outputs=answer) for r in rows], [_length], output=path, progress=False)
    return base, cand


def _length(*, outputs: str, **_: Any) -> dict[str, Any]:
    return {"key": "length", "score": float(len(outputs))}


def test_head_to_head_from_files(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.set_responder(_responder)
    base, cand = _runs(tmp_path)
    judge = create_pairwise_llm_as_judge(judge=openai_client(fake_openai), model="gpt-test")
    cache = tmp_path / "cache.sqlite"
    comparison = compare(base, cand, judge=judge, judge_options={"cache": cache})
    h2h = comparison.head_to_head
    assert h2h.comparisons == 10 and h2h.errors == 0
    assert (h2h.wins, h2h.ties, h2h.losses) == (8, 2, 0)
    assert h2h.win_rate.value == pytest.approx(0.8) and h2h.win_rate.low is not None
    assert h2h.order_flip_rate.value == pytest.approx(0.2)
    assert len(fake_openai.chat_requests) == 20  # both orders
    assert "head to head (10 judged pairs" in str(comparison)
    again = compare(base, cand, judge=judge, judge_options={"cache": cache})
    assert len(fake_openai.chat_requests) == 20, "the cache answered the rerun"
    assert again.head_to_head.wins == 8
    html = comparison.report_html(tmp_path / "c.html").read_text(encoding="utf-8")
    assert 'id="head-to-head"' in html
    assert comparison.to_dict()["head_to_head"]["wins"] == 8


async def test_async_twin_judges_through_aevaluate(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_responder(_responder)
    base, cand = _runs(tmp_path)
    judge = create_async_pairwise_llm_as_judge(
        judge=async_openai_client(fake_openai), model="gpt-test"
    )
    output = tmp_path / "judging.jsonl"
    comparison = await acompare(base, cand, judge=judge, judge_options={"output": output})
    assert comparison.head_to_head.wins == 8 and output.is_file()
    # resume: the judging run's output file answers a rerun without any call
    before = len(fake_openai.chat_requests)
    await acompare(base, cand, judge=judge, judge_options={"output": output})
    assert len(fake_openai.chat_requests) == before


def test_failing_judge_is_counted_not_scored(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.set_responder(lambda body: {"status": 500, "body": {"error": {"message": "x"}}})
    base, cand = _runs(tmp_path)
    judge = create_pairwise_llm_as_judge(
        judge=openai_client(fake_openai), model="gpt-test", max_retries=0
    )
    # Every first judgement fails the same way: the run stops and says why (never a score).
    with pytest.raises(EvaluatorFailing, match=r"first 5 rows.*Error code: 500") as info:
        compare(base, cand, judge=judge)
    assert info.value.result is not None and info.value.result.aggregates == {}


def test_bad_judge_arguments(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path)
    with pytest.raises(TypeError, match="`judge` must be a pairwise judge"):
        compare(base, cand, judge="gpt-4o")
    with pytest.raises(ValueError, match="`judge_options` takes"):
        compare(base, cand, judge=lambda **kw: None, judge_options={"target": print})


def test_judge_options_take_the_engine_and_budget_objects(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_responder(_responder)
    base, cand = _runs(tmp_path)
    judge = create_pairwise_llm_as_judge(judge=openai_client(fake_openai), model="gpt-test")
    options = {"engine": LocalEngine(eval_timeout=30), "budget": Budget(max_cost=0)}
    h2h = compare(base, cand, judge=judge, judge_options=options).head_to_head
    assert h2h.comparisons == 0 and fake_openai.chat_requests == []  # a zero cap starts nothing
    with pytest.raises(ValueError, match=r"LocalEngine\(eval_timeout=\)"):
        compare(base, cand, judge=judge, judge_options={"engine": LocalEngine(eval_timeout=-1)})
