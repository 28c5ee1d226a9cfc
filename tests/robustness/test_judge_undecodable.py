"""Issue 29, item 2: a status-200 reply whose body is not UTF-8 is a malformed server reply on
every judge path (a model string or a caller's OpenAI client, sync or async): retried like a
5xx, then :class:`JudgeServerError` naming the fault, never a bare ``UnicodeDecodeError``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.llm import JudgeServerError, create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer, async_openai_client, openai_client

BODIES = (
    b'{"x":"\xff","choices":[]}',  # the reproduction
    b'{"choices":[{"message":{"role":"assistant","content":"caf\xe9"}}]}',  # Latin-1 text
)
PATHS = ("model-sync", "model-async", "client-sync", "client-async")


def _judge(path: str, server: FakeOpenAIServer) -> Any:
    use_async = path.endswith("async")
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    if path.startswith("model"):
        judge = factory(prompt="{outputs}", model="openai:gpt-test", max_retries=2)
    else:
        client = (async_openai_client if use_async else openai_client)(server)
        judge = factory(prompt="{outputs}", judge=client, model="gpt-test", max_retries=2)
    judge_core(judge).retry = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.01)
    return judge


def _run(judge: Any) -> Any:
    out = judge(outputs="x")
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize("body", BODIES, ids=["issue", "latin1"])
@pytest.mark.parametrize("path", PATHS)
def test_a_non_utf8_body_is_retried_then_a_server_error(
    fake_openai: FakeOpenAIServer, path: str, body: bytes
) -> None:
    fake_openai.set_default_chat(body=body, headers={"Content-Type": "application/json"})
    with pytest.raises(JudgeServerError) as info:
        _run(_judge(path, fake_openai))
    error = info.value
    assert "not UTF-8 text" in error.reason and error.attempts == 3
    assert len(fake_openai.chat_requests) == 3  # the first request and two retries
    assert isinstance(error.__cause__, UnicodeDecodeError)


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize("path", PATHS)
def test_a_retry_that_answers_well_scores(fake_openai: FakeOpenAIServer, path: str) -> None:
    fake_openai.queue_chat(body=BODIES[0], headers={"Content-Type": "application/json"})
    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    assert _run(_judge(path, fake_openai))["score"] is True
    assert len(fake_openai.chat_requests) == 2
