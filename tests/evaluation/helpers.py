"""Helpers for batch-evaluation tests: judges pointed at the fake OpenAI server."""

from __future__ import annotations

from typing import Any

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"
FAST_RETRY = RetryPolicy(max_retries=1, initial_delay=0.001, max_delay=0.01)
JUDGE_KINDS = ("openai-sync", "openai-async", "langchain-async")


def make_judge(
    kind: str, server: FakeOpenAIServer, *, feedback_key: str = "correct", retry: Any = FAST_RETRY
) -> Any:
    """A judge of ``kind`` talking to ``server`` with a fast retry policy."""
    if kind == "openai-sync":
        judge = create_llm_as_judge(
            prompt=PROMPT, feedback_key=feedback_key, judge=openai_client(server), model="gpt-test"
        )
    elif kind == "openai-async":
        judge = create_async_llm_as_judge(
            prompt=PROMPT,
            feedback_key=feedback_key,
            judge=async_openai_client(server),
            model="gpt-test",
        )
    elif kind == "langchain-async":
        judge = create_async_llm_as_judge(
            prompt=PROMPT, feedback_key=feedback_key, judge=chat_model(server)
        )
    else:  # pragma: no cover - test bug
        raise ValueError(kind)
    judge_core(judge).retry = retry
    return judge


def qa_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "inputs": {"question": f"What is {i} + {i}?"},
            "outputs": str(2 * i),
            "topic": "even" if i % 2 == 0 else "odd",
        }
        for i in range(n)
    ]
