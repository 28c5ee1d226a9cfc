"""Helpers to run one judge test through every client kind, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openevals._judge.shell import attach_core, judge_core
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

_LOOPS: list[asyncio.AbstractEventLoop] = []

KINDS = ("openai-sync", "openai-async", "langchain-sync", "langchain-async")


def make_judge(kind: str, server: FakeOpenAIServer, **options: Any) -> Callable[..., Any]:
    """Build an evaluator of ``kind`` and return a *sync* callable that runs it."""
    if kind.startswith("openai"):
        client = async_openai_client(server) if kind.endswith("async") else openai_client(server)
        options = {"judge": client, "model": "gpt-test", **options}
    else:
        options = {"judge": chat_model(server), **options}
    if kind.endswith("async"):
        evaluator = create_async_llm_as_judge(**options)
        # One loop per judge: async HTTP clients keep connections bound to the loop they ran on.
        loop = asyncio.new_event_loop()
        _LOOPS.append(loop)

        def run_async(**kwargs: Any) -> Any:
            return loop.run_until_complete(evaluator(**kwargs))

        attach_core(run_async, judge_core(evaluator))
        return run_async
    return create_llm_as_judge(**options)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> Iterator[str]:
    yield str(request.param)
    while _LOOPS:
        _LOOPS.pop().close()


def user_text(body: dict[str, Any]) -> str:
    """All text of the user messages of a recorded chat request."""
    parts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(b.get("text", "") for b in content if b.get("type") == "text")
    return "\n".join(parts)
