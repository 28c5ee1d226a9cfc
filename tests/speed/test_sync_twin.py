"""A sync judge that owns its client (``create_llm_as_judge(model="openai:...")``) carries an async
twin (``EvaluatorInfo.twin``); a batch run awaits the twin on its event loop instead of holding a
worker thread per call. Everything else stays on the thread path."""

from __future__ import annotations

import functools
from typing import Any

import openai
import pytest

from openevals._contract import EvaluatorInfo, async_twin_of, info_of
from openevals._judge.shell import judge_core
from openevals.evaluation import aevaluate, evaluate
from openevals.exact import exact_match
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nReference: {reference_outputs}\nCorrect?"


def _no_sync_calls(judge: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the batch run used the sync judge path")

    monkeypatch.setattr(judge_core(judge), "ask_sync", refuse)


def test_a_sync_judge_from_a_model_string_has_an_async_twin(server: FakeOpenAIServer) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, feedback_key="correct", model="openai:gpt-test")
    info = info_of(judge)
    assert info is not None and not info.is_async and info.twin is not None
    twin_info = info_of(info.twin)
    assert twin_info is not None and twin_info.is_async and twin_info.twin is None
    assert twin_info.feedback_keys == info.feedback_keys == ("correct",)
    assert judge_core(info.twin) is judge_core(judge)  # one core, one cache of resolved clients
    assert info == twin_info.__class__(**{**info.__dict__, "twin": None})  # twin not compared


def test_judges_that_must_keep_their_thread_have_no_twin(server: FakeOpenAIServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="k")

    def prompt(**kwargs: Any) -> list[dict[str, str]]:  # a caller's code: may block
        return [{"role": "user", "content": f"Is {kwargs['outputs']} right?"}]

    no_twin = [
        create_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test"),  # caller's client
        create_llm_as_judge(prompt=prompt, model="openai:gpt-test"),  # callable prompt
        create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test"),  # already async
    ]
    for judge in no_twin:
        info = info_of(judge)
        assert info is not None and info.twin is None
        assert async_twin_of(judge) is None
    assert async_twin_of(exact_match) is None and async_twin_of(lambda **kw: 1) is None


@pytest.mark.parametrize("use_async", [False, True])
def test_a_batch_run_awaits_the_twin(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, use_async: bool
) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, feedback_key="correct", model="openai:gpt-test")
    expected = judge(inputs="q", outputs="a", reference_outputs="a")
    _no_sync_calls(judge, monkeypatch)
    rows = [
        {"inputs": f"q{i}", "outputs": "a", "reference_outputs": "a", "id": str(i)}
        for i in range(12)
    ]
    run = aevaluate if use_async else evaluate
    result = run(rows, [judge], concurrency=4, progress=False)
    if use_async:
        import asyncio

        result = asyncio.run(result)  # type: ignore[arg-type]
    assert result.summary["pairs"]["failed"] == 0
    results = [ev["results"][0] for row in result.rows for ev in row["evaluations"].values()]
    assert [r["score"] for r in results] == [expected["score"]] * 12
    assert [r["key"] for r in results] == ["correct"] * 12
    assert server.peak_in_flight <= 4


def test_partial_arguments_reach_the_twin(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    _no_sync_calls(judge, monkeypatch)
    bound = functools.partial(judge, reference_outputs="REF-42")
    result = evaluate([{"inputs": "q", "outputs": "a"}], [bound], progress=False)
    assert result.summary["pairs"]["failed"] == 0
    assert "REF-42" in server.last_chat_body["messages"][-1]["content"]


async def test_async_twin_of_binds_partials_in_order() -> None:
    seen: list[dict[str, Any]] = []

    async def twin(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return {"key": "k", "score": 1}

    def sync(**kwargs: Any) -> Any:
        raise AssertionError

    sync.openevals_info = EvaluatorInfo(run_name="k", twin=twin)  # type: ignore[attr-defined]
    wrapped = functools.partial(functools.partial(sync, a=1, b=2), b=3)
    found = async_twin_of(wrapped)
    assert found is not None
    await found(c=4)
    assert seen == [{"a": 1, "b": 3, "c": 4}]


@pytest.mark.parametrize(
    "bad",
    [
        {"twin": "not callable"},
        {"twin": (lambda **kw: None), "is_async": True},
    ],
)
def test_a_twin_is_an_async_callable_of_a_sync_evaluator(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"EvaluatorInfo\.twin"):
        EvaluatorInfo(run_name="k", **bad)
    assert EvaluatorInfo(run_name="k", twin=lambda **kw: None).as_async().twin is None
