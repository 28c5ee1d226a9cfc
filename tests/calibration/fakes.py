"""Fake judges for calibration tests: scripted through the fake OpenAI server, or pure Python."""

from __future__ import annotations

import json
import re
from typing import Any

from openai import AsyncOpenAI, OpenAI

from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nGrade the answer."


def row_tag(body: dict[str, Any]) -> str:
    """The ``[rowN]`` tag of the graded answer: the one after ``Answer:`` in the prompt (few-shot
    examples render their outputs inside ``<outputs>`` blocks, never after ``Answer:``)."""
    text = json.dumps(body["messages"])
    found = re.search(r"Answer: (\[row\d+\])", text)
    assert found, text
    return found.group(1)


def sync_judge(server: FakeOpenAIServer, **kw: Any) -> Any:
    client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return create_llm_as_judge(prompt=PROMPT, judge=client, model="gpt-test", max_retries=0, **kw)


def async_judge(server: FakeOpenAIServer, **kw: Any) -> Any:
    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return create_async_llm_as_judge(
        prompt=PROMPT, judge=client, model="gpt-test", max_retries=0, **kw
    )


def scripted(scores: dict[str, Any]) -> Any:
    """A responder answering each row's request with its scripted score."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        tag = row_tag(body)
        return {"json": {"reasoning": f"judge on {tag} <b>", "score": scores[tag]}}

    return respond
