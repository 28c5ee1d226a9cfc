"""``samples=n``: the OpenAI backend asks once with ``n``, others make n calls; votes and means."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openevals._judge.samples import aggregate_scores
from openevals._judge.schema import default_score_schema
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.pairwise import create_pairwise_llm_as_judge
from openevals.rag.llm_metrics import create_async_faithfulness_evaluator
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)
from openevals.trajectory.llm import create_trajectory_llm_as_judge

BOOL = default_score_schema(continuous=False, choices=None, use_reasoning=True)
CHOICES = default_score_schema(continuous=False, choices=[1, 2, 3], use_reasoning=True)
CONT = default_score_schema(continuous=True, choices=None, use_reasoning=True)


def _answers(server: FakeOpenAIServer, *scores: Any) -> None:
    for i, score in enumerate(scores):
        server.queue_chat(json={"reasoning": f"r{i}", "score": score})


def _judge(kind: str, server: FakeOpenAIServer, **kw: Any) -> Any:
    if kind == "openai":
        return create_llm_as_judge(prompt="{outputs}", judge=openai_client(server), model="m", **kw)
    return create_llm_as_judge(prompt="{outputs}", judge=chat_model(server), **kw)


def test_openai_backend_asks_once_with_n(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, True, False, True)
    result = _judge("openai", fake_openai, samples=3)(outputs="x")
    assert len(fake_openai.chat_requests) == 1
    assert fake_openai.last_chat_body["n"] == 3
    assert result["score"] is True and result["comment"] == "r0"
    assert result["metadata"]["samples"] == [True, False, True]
    assert result["metadata"]["agreement"] == pytest.approx(2 / 3)
    assert "tie" not in result["metadata"] and result["metadata"]["usage"]["total_tokens"] > 0


def test_langchain_backend_makes_n_calls(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, False, True, False)
    result = _judge("langchain", fake_openai, samples=3)(outputs="x")
    assert len(fake_openai.chat_requests) == 3
    assert all("n" not in body for body in fake_openai.chat_requests)
    assert result["score"] is False and result["comment"] == "r0"
    assert result["metadata"]["samples"] == [False, True, False]


async def test_async_samples_run_concurrently(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(json={"reasoning": "slow", "score": True}, delay=0.3)
    judge = create_async_llm_as_judge(prompt="{outputs}", judge=chat_model(fake_openai), samples=4)
    import time

    start = time.monotonic()
    result = await judge(outputs="x")
    assert time.monotonic() - start < 1.0  # 4 x 0.3 s sequentially
    assert result["metadata"]["samples"] == [True] * 4
    assert result["metadata"]["agreement"] == 1.0


async def test_async_openai_client_uses_n(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, 1, 3, 3)
    judge = create_async_llm_as_judge(
        prompt="{outputs}",
        judge=async_openai_client(fake_openai),
        model="m",
        choices=[1, 2, 3],
        samples=3,
    )
    result = await judge(outputs="x")
    assert fake_openai.last_chat_body["n"] == 3
    assert result["score"] == 3.0 and result["comment"] == "r1"


def test_boolean_tie_fails(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, True, False)
    result = _judge("openai", fake_openai, samples=2)(outputs="x")
    assert result["score"] is False
    assert result["metadata"]["tie"] is True and result["metadata"]["agreement"] == 0.5
    assert result["comment"] == "r1"  # the reasoning of a sample that agrees with the result


def test_continuous_mean_and_std(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, 0.2, 0.4, 0.9)
    result = _judge("openai", fake_openai, samples=3, continuous=True)(outputs="x")
    assert result["score"] == pytest.approx(0.5)
    assert result["metadata"]["std"] == pytest.approx(0.2943920288775949)
    assert result["metadata"]["samples"] == [0.2, 0.4, 0.9]


def test_server_that_ignores_n_is_asked_again(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.max_choices = 1
    _answers(fake_openai, True, True, False)
    result = _judge("openai", fake_openai, samples=3)(outputs="x")
    assert [b.get("n") for b in fake_openai.chat_requests] == [3, 2, None]
    assert result["metadata"]["samples"] == [True, True, False]


def test_one_bad_sample_is_repaired_alone(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "a", "score": True})
    fake_openai.queue_chat(json={"reasoning": "b", "score": "maybe"})
    fake_openai.queue_chat(json={"reasoning": "c", "score": False})
    result = _judge("openai", fake_openai, samples=2)(outputs="x")
    assert len(fake_openai.chat_requests) == 2
    repair = fake_openai.chat_requests[1]
    assert "n" not in repair and "cannot be used" in str(repair["messages"][-1])
    assert result["metadata"]["samples"] == [True, False]


def test_samples_one_sends_todays_request(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, True)
    result = _judge("openai", fake_openai)(outputs="x")
    body = fake_openai.last_chat_body
    assert not {"n", "logprobs", "top_logprobs"} & set(body)
    assert result["comment"] == "r0" and set(result["metadata"]) == {"usage"}


def test_trajectory_judge_samples(fake_openai: FakeOpenAIServer) -> None:
    _answers(fake_openai, False, False, True)
    judge = create_trajectory_llm_as_judge(judge=openai_client(fake_openai), model="m", samples=3)
    result = judge(outputs=[{"role": "user", "content": "hi"}])
    assert result["score"] is False and result["metadata"]["agreement"] == pytest.approx(2 / 3)


def test_pairwise_majority_per_order(fake_openai: FakeOpenAIServer) -> None:
    for preference in ("A", "A", "B", "B", "B", "tie"):  # given order, then swapped order
        fake_openai.queue_chat(json={"reasoning": preference, "preference": preference})
    judge = create_pairwise_llm_as_judge(judge=openai_client(fake_openai), model="m", samples=3)
    result = judge(inputs="q", outputs=["one", "two"])
    assert [b["n"] for b in fake_openai.chat_requests] == [3, 3]
    # given order prefers A (output 0); swapped order prefers B, which is output 0 again
    assert result["scores"] == {0: 1.0, 1: 0.0}
    assert result["metadata"]["samples"] == [["A", "A", "B"], ["B", "B", "tie"]]


async def test_rag_metric_samples_average(fake_openai: FakeOpenAIServer) -> None:
    for supported in (True, False):
        fake_openai.queue_chat(
            json={"statements": [{"statement": "s", "reason": "r", "supported": supported}]}
        )
    metric = create_async_faithfulness_evaluator(
        judge=async_openai_client(fake_openai), model="m", samples=2
    )
    result = await metric(outputs="s", context="ctx")
    assert result["score"] == 0.5
    assert result["metadata"]["samples"] == [1.0, 0.0] and result["metadata"]["std"] == 0.5


@given(st.lists(st.booleans(), min_size=1, max_size=9))
def test_boolean_vote_properties(votes: list[bool]) -> None:
    score, _, meta = aggregate_scores(BOOL, votes, ["r"] * len(votes), mean=False)
    trues = sum(votes)
    assert score is (trues > len(votes) - trues)
    assert meta["agreement"] == votes.count(score) / len(votes)
    assert meta.get("tie", False) is (2 * trues == len(votes))


@given(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=1, max_size=9))
def test_choice_vote_is_a_most_frequent_choice(votes: list[float]) -> None:
    score, _, _ = aggregate_scores(CHOICES, votes, ["r"] * len(votes), mean=False)
    top = max(votes.count(v) for v in votes)
    assert votes.count(score) == top
    assert score == min(v for v in votes if votes.count(v) == top)


def test_mean_aggregation() -> None:
    score, comment, meta = aggregate_scores(CONT, [0.0, 1.0], ["a", "b"], mean=False)
    assert (score, comment, meta) == (0.5, "a", {"samples": [0.0, 1.0], "std": 0.5})
