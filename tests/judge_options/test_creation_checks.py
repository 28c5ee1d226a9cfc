"""Every judge factory checks its options the same way, when the evaluator is created.

Sync factories refuse an async prompt function and an ``AsyncOpenAI`` client at creation (before,
``create_trajectory_llm_as_judge`` accepted an async prompt and failed only when called, with
"coroutine was never awaited"; the code judge accepted an ``AsyncOpenAI`` client). Async factories
accept both and use them. The shared option checks (``samples``, ``max_retries``, ...) raise the same
error from every factory.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import openai
import pytest

from openevals.code.llm import create_async_code_llm_as_judge, create_code_llm_as_judge
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.pairwise import create_async_pairwise_llm_as_judge, create_pairwise_llm_as_judge
from openevals.rag import llm_metrics
from openevals.testing import FakeOpenAIServer, async_openai_client, openai_client
from openevals.trajectory.llm import (
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)

RAG = ("answer_correctness", "faithfulness", "context_relevance", "answer_relevancy")

SYNC: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "create_llm_as_judge": (create_llm_as_judge, {}),
    "create_trajectory_llm_as_judge": (create_trajectory_llm_as_judge, {}),
    "create_code_llm_as_judge": (create_code_llm_as_judge, {}),
    "create_pairwise_llm_as_judge": (create_pairwise_llm_as_judge, {}),
    **{f"create_{m}_evaluator": (getattr(llm_metrics, f"create_{m}_evaluator"), {}) for m in RAG},
}
ASYNC: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "create_async_llm_as_judge": (create_async_llm_as_judge, {}),
    "create_async_trajectory_llm_as_judge": (create_async_trajectory_llm_as_judge, {}),
    "create_async_code_llm_as_judge": (create_async_code_llm_as_judge, {}),
    "create_async_pairwise_llm_as_judge": (create_async_pairwise_llm_as_judge, {}),
    **{
        f"create_async_{m}_evaluator": (getattr(llm_metrics, f"create_async_{m}_evaluator"), {})
        for m in RAG
    },
}
TWIN = {name: name.replace("create_", "create_async_", 1) for name in SYNC}


async def _async_prompt(**kwargs: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"grade {kwargs.get('outputs')}"}]


class _AsyncCallablePrompt:
    async def __call__(self, **kwargs: Any) -> list[dict[str, Any]]:
        return await _async_prompt(**kwargs)


@pytest.mark.parametrize("name", sorted(SYNC))
@pytest.mark.parametrize(
    "prompt",
    [_async_prompt, _AsyncCallablePrompt(), functools.partial(_AsyncCallablePrompt())],
    ids=["fn", "object", "partial-of-object"],
)
def test_sync_factories_refuse_async_prompts_at_creation(
    name: str, prompt: Any, fake_openai: FakeOpenAIServer
) -> None:
    factory, _ = SYNC[name]
    with pytest.raises(TypeError, match=TWIN[name]) as info:
        factory(prompt=prompt, judge=openai_client(fake_openai), model="gpt-test")
    assert "`prompt` is an async function" in str(info.value)
    assert fake_openai.chat_requests == []


@pytest.mark.parametrize("name", sorted(SYNC))
def test_sync_factories_refuse_async_clients_at_creation(
    name: str, fake_openai: FakeOpenAIServer
) -> None:
    factory, _ = SYNC[name]
    with pytest.raises(TypeError, match="async OpenAI client") as info:
        factory(judge=async_openai_client(fake_openai), model="gpt-test", **_prompt(name))
    assert TWIN[name] in str(info.value)


def _prompt(name: str) -> dict[str, Any]:
    return {"prompt": "{outputs}"} if "code" in name or name.endswith("llm_as_judge") else {}


def test_trajectory_judge_async_prompt_used_to_fail_only_when_called() -> None:
    """The regression this change fixes, stated directly: creation itself raises."""
    with pytest.raises(TypeError, match="create_async_trajectory_llm_as_judge"):
        create_trajectory_llm_as_judge(prompt=_async_prompt, model="openai:gpt-test")


@pytest.mark.parametrize("name", sorted(ASYNC))
def test_async_factories_accept_async_prompts_and_clients(
    name: str, fake_openai: FakeOpenAIServer
) -> None:
    factory, _ = ASYNC[name]
    for judge in (async_openai_client(fake_openai), openai_client(fake_openai)):
        evaluator = factory(prompt=_async_prompt, judge=judge, model="gpt-test")
        assert asyncio.iscoroutinefunction(evaluator) or asyncio.iscoroutinefunction(
            type(evaluator).__call__
        )


async def test_async_prompt_reaches_the_model(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    evaluator = create_async_trajectory_llm_as_judge(
        prompt=_AsyncCallablePrompt(), judge=async_openai_client(fake_openai), model="gpt-test"
    )
    result = await evaluator(outputs=[{"role": "user", "content": "hi"}])
    assert result["score"] is True
    assert fake_openai.last_chat_body["messages"][0]["content"].startswith("grade <user>\nhi")


BAD_OPTIONS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"samples": 0}, ValueError, "`samples` must be between 1 and 128"),
    ({"samples": -2}, ValueError, "`samples` must be between 1 and 128"),
    ({"samples": 1000}, ValueError, "`samples` must be between 1 and 128"),
    ({"samples": True}, TypeError, "`samples` must be an integer"),
    ({"samples": "3"}, TypeError, "`samples` must be an integer"),
    ({"samples": 2.0}, TypeError, "`samples` must be an integer"),
    ({"max_retries": -1}, ValueError, "`max_retries` must be an integer >= 0"),
    ({"system": 3}, TypeError, "`system` must be a string"),
    ({"model": None, "judge": None}, ValueError, "pass `model`"),
    ({"model": 42, "judge": None}, TypeError, "`model` must be a 'provider:model' string"),
    ({"judge": object()}, TypeError, "`judge` must be a LangChain chat model"),
]


@pytest.mark.parametrize("name", sorted({**SYNC, **ASYNC}))
def test_shared_option_checks_in_every_factory(name: str) -> None:
    factory, _ = {**SYNC, **ASYNC}[name]
    client = openai.OpenAI(api_key="k")
    for bad, error, message in BAD_OPTIONS:
        options: dict[str, Any] = {"judge": client, "model": "gpt-test"}
        options.update(_prompt(name.replace("async_", "")))
        options.update(bad)
        with pytest.raises(error, match=message):
            factory(**options)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"choices": []}, "`choices` is empty"),
        ({"choices": "abc"}, "`choices` must be a list of numbers"),
        ({"choices": [1, "x"]}, "`choices` must hold numbers"),
        ({"continuous": True, "choices": [0, 1]}, "mutually exclusive"),
        ({"few_shot_examples": "x"}, "`few_shot_examples` must be a list"),
        ({"few_shot_examples": [{"inputs": "a"}]}, r"few_shot_examples\[0\] has no 'score'"),
        ({"few_shot_examples": ["a"]}, r"few_shot_examples\[0\] must be a dict"),
        ({"structured_output_kwargs": 3}, "`structured_output_kwargs` must be a dict"),
        ({"feedback_key": ""}, "`feedback_key` must be a non-empty string"),
        ({"samples": 3, "output_schema": {"type": "object"}}, "cannot be aggregated"),
        ({"score_weighting": "tokens"}, "`score_weighting` must be None or 'logprobs'"),
    ],
)
@pytest.mark.parametrize("factory", [create_llm_as_judge, create_async_trajectory_llm_as_judge])
def test_score_option_checks(factory: Any, bad: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        factory(prompt="{outputs}", model="openai:gpt-test", **bad)


def test_caller_options_are_not_mutated(fake_openai: FakeOpenAIServer) -> None:
    examples = [{"inputs": "a", "outputs": "b", "score": True}]
    choices = [0.0, 1.0]
    kwargs = {"x": 1}
    create_llm_as_judge(
        prompt="{outputs}",
        model="openai:gpt-test",
        few_shot_examples=examples,
        choices=choices,
        structured_output_kwargs=kwargs,
    )
    assert examples == [{"inputs": "a", "outputs": "b", "score": True}]
    assert choices == [0.0, 1.0] and kwargs == {"x": 1}
