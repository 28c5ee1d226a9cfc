"""evaluate(..., systems=...): pairwise comparisons through the batch runner."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI

from openevals.evaluation import aevaluate, evaluate
from openevals.pairwise import create_async_pairwise_llm_as_judge, create_pairwise_llm_as_judge
from openevals.testing import FakeOpenAIServer

QUALITY = {"alpha": 3, "beta": 2, "gamma": 1}


def _texts(body: dict[str, Any]) -> tuple[str, str]:
    text = json.dumps(body["messages"])
    a = re.search(r"<response_a>\\n(.*?)\\n</response_a>", text)
    b = re.search(r"<response_b>\\n(.*?)\\n</response_b>", text)
    assert a and b, text
    return a.group(1), b.group(1)


def _responder(body: dict[str, Any]) -> dict[str, Any]:
    """Prefers the better system's answer; on rows mentioning 'biased' it prefers position A."""
    a, b = _texts(body)
    if "biased" in json.dumps(body["messages"]):
        choice = "A"
    else:
        qa, qb = (QUALITY[t.split()[0]] for t in (a, b))
        choice = "A" if qa > qb else "B"
    return {"json": {"reasoning": "compared", "preference": choice}}


def _rows(n: int = 8, biased: int = 2) -> list[dict[str, Any]]:
    return [
        {
            "id": f"p{i}",
            "inputs": f"question {i}" + (" biased" if i < biased else ""),
            "outputs": {name: f"{name} answer {i}" for name in QUALITY},
        }
        for i in range(n)
    ]


def _sync(server: FakeOpenAIServer) -> Any:
    client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return create_pairwise_llm_as_judge(judge=client, model="gpt-test", max_retries=0)


def _async(server: FakeOpenAIServer) -> Any:
    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return create_async_pairwise_llm_as_judge(judge=client, model="gpt-test", max_retries=0)


def _check(result: Any) -> None:
    summary = result.pairwise["pref"]
    assert summary.comparisons == 8 * 3 and summary.errors == 0
    # 2 biased rows x 3 pairs: the judge preferred position A in both orders -> order flip, tie
    assert summary.judged_twice == 24 and summary.order_flips == 6
    assert summary.order_flip_rate.value == pytest.approx(0.25)
    assert summary.inconsistent == 6
    assert [s.system for s in summary.ranking.systems] == ["alpha", "beta", "gamma"]
    by_pair = {(p.a, p.b): (p.wins, p.ties, p.losses) for p in summary.pairs}
    assert by_pair == {
        ("alpha", "beta"): (6, 2, 0),
        ("alpha", "gamma"): (6, 2, 0),
        ("beta", "gamma"): (6, 2, 0),
    }
    rate = summary.win_rate("alpha", "gamma")
    assert rate.value == pytest.approx(0.75) and rate.low is not None
    assert summary.win_rate("gamma", "alpha").value == pytest.approx(0.0)
    key = "pairwise_preference[alpha vs beta]"
    assert result.aggregates[key]["mean"] == pytest.approx((6 + 0.5 * 2) / 8)
    row = result.rows[0]["evaluations"]["pref[alpha vs beta]"]["results"][0]
    assert row["metadata"]["order_flip"] is True and row["metadata"]["winner"] is None
    assert result.to_dict()["pairwise"]["pref"]["ranking"][0]["system"] == "alpha"


def test_systems_from_an_outputs_mapping(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_responder)
    result = evaluate(_rows(), {"pref": _sync(fake_openai)}, systems=list(QUALITY), progress=False)
    assert len(fake_openai.chat_requests) == 8 * 3 * 2  # rows x pairs x both orders
    _check(result)


async def test_async_judge_with_aevaluate(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_responder)
    result = await aevaluate(
        _rows(), {"pref": _async(fake_openai)}, systems=list(QUALITY), progress=False
    )
    _check(result)


def test_one_column_per_system_and_resume(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.set_responder(_responder)
    rows = [
        {
            "id": r["id"],
            "inputs": r["inputs"],
            **{f"answer_{k}": v for k, v in r["outputs"].items()},
        }
        for r in _rows()
    ]
    systems = {name: f"answer_{name}" for name in QUALITY}
    out = tmp_path / "pairs.jsonl"
    first = evaluate(
        rows, {"pref": _sync(fake_openai)}, systems=systems, output=out, progress=False
    )
    _check(first)
    again = evaluate(
        rows, {"pref": _sync(fake_openai)}, systems=systems, output=out, progress=False
    )
    assert len(fake_openai.chat_requests) == 48, "the rerun resumed every comparison"
    _check(again)


def test_report_shows_ranking_and_win_rate_matrix(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_responder(lambda body: {"json": {"reasoning": "x", "preference": "A"}})
    rows = [{"inputs": "q", "outputs": {"<b>x</b>": "1", "y": "2"}}] * 3
    result = evaluate(rows, [_sync(fake_openai)], systems=["<b>x</b>", "y"], progress=False)
    html = result.report_html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Bradley–Terry ranking" in html and 'class="winrates"' in html
    assert "Order-flip rate: 1.000" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_errors_stay_on_their_rows(fake_openai: FakeOpenAIServer) -> None:
    def not_pairwise(*, inputs: Any, outputs: Any) -> dict[str, Any]:
        return {"key": "score", "score": 1.0}

    rows = [
        {"inputs": "q", "outputs": {"a": "1", "b": "2"}},
        {"inputs": "q", "outputs": {"a": "1"}},
    ]
    result = evaluate(rows, [not_pairwise], systems=["a", "b"], progress=False)
    first, second = (r["evaluations"]["not_pairwise[a vs b]"] for r in result.rows)
    assert first["status"] == "error" and "not a pairwise evaluator" in first["error"]["message"]
    assert second["status"] == "error" and "no output of system 'b'" in second["error"]["message"]
    summary = result.pairwise["not_pairwise"]
    assert summary.errors == 2 and summary.comparisons == 0 and summary.ranking is None
    assert "no comparison finished" in summary.notes[0]
    assert result.aggregates == {}, "an error never becomes a score"


@pytest.mark.parametrize(
    ("systems", "error", "words"),
    [
        (["only"], ValueError, "at least two systems"),
        ([], ValueError, "at least two systems"),
        ("ab", TypeError, "list of system names"),
        (["a", "a"], ValueError, "named once"),
        (["a", 3], TypeError, "non-empty strings"),
        ({"a": "col_a", "b": ""}, TypeError, "row field of system 'b'"),
        (42, TypeError, "list of system names"),
    ],
)
def test_bad_systems_fail_before_any_call(
    fake_openai: FakeOpenAIServer, systems: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=re.escape(words)):
        evaluate(_rows(), [_sync(fake_openai)], systems=systems, progress=False)
    assert fake_openai.chat_requests == []


def test_mapping_outputs_to_a_field_conflicts_with_systems() -> None:
    from openevals.evaluation import EvaluatorSpec

    spec = EvaluatorSpec(lambda **kw: 1, name="x", fields={"outputs": "outputs.a"})
    with pytest.raises(ValueError, match="outputs come from the systems"):
        evaluate(_rows(), [spec], systems=["alpha", "beta"], progress=False)
