"""A caller's own OpenAI client is the object the judge calls (issue 12, item 2).

The judge used to call ``client.with_options(max_retries=0)``, a copy, which lost whatever the caller
had attached to the client: ``langsmith.wrappers.wrap_openai`` tracing, patched methods, hooks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langsmith import Client, tracing_context

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer, async_openai_client, openai_client
from tests.fakes.fake_langsmith import FakeLangSmith

GOOD = {"reasoning": "The answer is right.", "score": True}


@pytest.fixture(scope="module")
def _langsmith() -> Iterator[tuple[FakeLangSmith, Client]]:
    with FakeLangSmith() as server:
        yield server, Client(api_url=server.url, api_key="dummy-key")


@pytest.fixture
def langsmith(_langsmith: tuple[FakeLangSmith, Client]) -> tuple[FakeLangSmith, Client]:
    server, client = _langsmith
    client.flush()
    server.reset()
    return server, client


def _run(evaluator: Any, **kwargs: Any) -> Any:
    out = evaluator(**kwargs)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


@pytest.mark.parametrize("use_async", [False, True])
def test_wrap_openai_client_traces_the_judge_call(
    fake_openai: FakeOpenAIServer, langsmith: tuple[FakeLangSmith, Client], use_async: bool
) -> None:
    from langsmith.wrappers import wrap_openai

    fake_ls, ls_client = langsmith
    fake_openai.queue_chat(json=GOOD)
    raw = async_openai_client(fake_openai) if use_async else openai_client(fake_openai)
    client = wrap_openai(raw, chat_name="my_wrapped_judge_client")
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Rate {outputs}", judge=client, model="gpt-test", feedback_key="q")
    with tracing_context(client=ls_client, enabled=True, project_name="own-client"):
        result = _run(judge, outputs="x")
    ls_client.flush()

    assert result["score"] is True
    runs = fake_ls.posted_runs()
    wrapped = [r for r in runs if r.get("name") == "my_wrapped_judge_client"]
    assert len(wrapped) == 1, [r.get("name") for r in runs]
    (llm_run,) = wrapped
    assert llm_run["run_type"] == "llm"
    assert llm_run["inputs"]["messages"] == [{"role": "user", "content": "Rate x"}]
    # The wrapper's run is the only llm run: the judge adds none of its own on top.
    assert [r for r in runs if r.get("run_type") == "llm"] == [llm_run]
    (judge_run,) = [r for r in runs if r.get("name") == "llm_as_q_judge"]
    assert llm_run["trace_id"] == judge_run["trace_id"]


@pytest.mark.parametrize("use_async", [False, True])
def test_patched_create_is_called(fake_openai: FakeOpenAIServer, use_async: bool) -> None:
    fake_openai.queue_chat(json=GOOD)
    client = async_openai_client(fake_openai) if use_async else openai_client(fake_openai)
    original = client.chat.completions.create
    calls: list[dict[str, Any]] = []

    if use_async:

        async def patched(**kwargs: Any) -> Any:
            calls.append(kwargs)
            return await original(**kwargs)

    else:

        def patched(**kwargs: Any) -> Any:  # type: ignore[misc]
            calls.append(kwargs)
            return original(**kwargs)

    client.chat.completions.create = patched  # type: ignore[method-assign]
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Rate {outputs}", judge=client, model="gpt-test")
    assert _run(judge, outputs="x")["score"] is True
    (call,) = calls
    assert call["model"] == "gpt-test"
    assert call["response_format"]["type"] == "json_schema"
    assert len(fake_openai.chat_requests) == 1
    assert client.max_retries == 0 and client.chat.completions.create is patched  # untouched


@pytest.mark.parametrize("use_async", [False, True])
def test_client_retries_govern_and_do_not_multiply(
    fake_openai: FakeOpenAIServer, use_async: bool
) -> None:
    """With the client's own max_retries=2 the SDK retries (3 requests), not 3 x (1 + 3)."""
    fake_openai.set_default_chat(status=503, headers={"retry-after-ms": "1"})
    make = async_openai_client if use_async else openai_client
    client = make(fake_openai, max_retries=2)
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="{outputs}", judge=client, model="gpt-test", max_retries=3)
    with pytest.raises(Exception) as info:
        _run(judge, outputs="x")
    assert getattr(info.value, "status_code", None) == 503
    assert len(fake_openai.chat_requests) == 3
    assert client.max_retries == 2


@pytest.mark.parametrize("use_async", [False, True])
def test_client_without_retries_gets_the_judges_policy(
    fake_openai: FakeOpenAIServer, use_async: bool
) -> None:
    fake_openai.set_default_chat(status=503, headers={"retry-after-ms": "1"})
    make = async_openai_client if use_async else openai_client
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="{outputs}", judge=make(fake_openai), model="gpt-test", max_retries=2)
    judge_core(judge).retry = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.01)
    with pytest.raises(Exception):  # noqa: B017 - the 503 itself
        _run(judge, outputs="x")
    assert len(fake_openai.chat_requests) == 3


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.usefixtures("openai_env")
def test_model_strings_call_the_sdks_own_create(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, use_async: bool
) -> None:
    """For ``openai:`` strings the judge owns the client and calls its public create()."""
    from openai.resources.chat.completions import AsyncCompletions, Completions

    seen: list[str] = []
    cls: Any = AsyncCompletions if use_async else Completions
    original = cls.create

    def spy(self: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["model"])
        return original(self, **kwargs)

    monkeypatch.setattr(cls, "create", spy)
    fake_openai.queue_chat(json=GOOD)
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="{outputs}", model="openai:gpt-test")
    assert _run(judge, outputs="x")["score"] is True
    assert seen == ["gpt-test"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_plain_client_gets_the_judges_own_llm_run(
    fake_openai: FakeOpenAIServer, langsmith: tuple[FakeLangSmith, Client], use_async: bool
) -> None:
    """The SDK decorates create() itself (``__wrapped__``); that is no tracer, so the judge
    records the model call as its own llm run."""
    fake_ls, ls_client = langsmith
    fake_openai.queue_chat(json=GOOD)
    client = async_openai_client(fake_openai) if use_async else openai_client(fake_openai)
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Rate {outputs}", judge=client, model="gpt-test", feedback_key="q")
    assert not judge_core(judge).backend._traced_by_caller  # type: ignore[attr-defined]
    with tracing_context(client=ls_client, enabled=True, project_name="own-client"):
        result = _run(judge, outputs="x")
    ls_client.flush()
    assert result["score"] is True
    runs = fake_ls.posted_runs()
    (llm_run,) = [r for r in runs if r.get("run_type") == "llm"]
    assert llm_run["inputs"]["messages"] == [{"role": "user", "content": "Rate x"}]
    (judge_run,) = [r for r in runs if r.get("name") == "llm_as_q_judge"]
    assert llm_run["trace_id"] == judge_run["trace_id"]
