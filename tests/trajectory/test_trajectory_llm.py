"""Trajectory LLM-as-judge against the fake OpenAI server."""

from __future__ import annotations

import asyncio
import copy

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from openevals import create_async_trajectory_llm_as_judge, create_trajectory_llm_as_judge
from openevals.prompts import TRAJECTORY_ACCURACY_PROMPT, TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
from openevals.testing import FakeOpenAIServer, chat_model, openai_client
from tests.trajectory.match_helpers import ai, tool, user

OUTPUTS = [
    user("What is the weather in SF?"),
    ai(("get_weather", {"city": "SF"})),
    tool("It's 80 degrees and sunny in SF."),
    ai(content="The weather in SF is 80 degrees and sunny."),
]
REFERENCE = [
    user("What is the weather in SF?"),
    ai(("get_weather", {"city": "San Francisco"})),
    tool("It's 80 degrees and sunny in San Francisco."),
    ai(content="The weather in SF is 80˚ and sunny."),
]


def _user(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def test_readme_no_reference(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "The trajectory is accurate.", "score": True})
    evaluator = create_trajectory_llm_as_judge(
        prompt=TRAJECTORY_ACCURACY_PROMPT, judge=chat_model(fake_openai)
    )
    snapshot = copy.deepcopy(OUTPUTS)
    result = evaluator(outputs=OUTPUTS)
    assert result == {
        "key": "trajectory_accuracy",
        "score": True,
        "comment": "The trajectory is accurate.",
        "metadata": result["metadata"],
    }
    text = _user(fake_openai.last_chat_body)
    assert "<user>\nWhat is the weather in SF?\n</user>" in text
    assert "<name>get_weather</name>" in text and '{"city": "SF"}' in text
    assert "80 degrees and sunny in SF" in text
    assert snapshot == OUTPUTS


def test_readme_with_reference_and_system(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "Consistent with the reference.", "score": True})
    evaluator = create_trajectory_llm_as_judge(
        prompt=TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
        judge=openai_client(fake_openai),
        model="gpt-test",
        system="Be brief.",
        continuous=True,
    )
    fake_openai.reset()
    fake_openai.queue_chat(json={"reasoning": "Consistent with the reference.", "score": 0.9})
    result = evaluator(outputs=OUTPUTS, reference_outputs=REFERENCE)
    assert result["score"] == 0.9
    body = fake_openai.last_chat_body
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert '{"city": "San Francisco"}' in _user(body)


def test_default_prompt_without_reference_renders_empty(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "ok", "score": False})
    evaluator = create_trajectory_llm_as_judge(judge=chat_model(fake_openai))
    assert evaluator(outputs=OUTPUTS)["score"] is False
    assert "<reference_trajectory>\n\n</reference_trajectory>" in _user(fake_openai.last_chat_body)


def test_langchain_messages_and_container(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(json={"reasoning": "ok", "score": True})
    messages = [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"id": 7}, "id": "t1"}]),
        ToolMessage(content="found 7", tool_call_id="t1"),
        AIMessage(content="Here it is."),
    ]
    evaluator = create_async_trajectory_llm_as_judge(
        prompt=TRAJECTORY_ACCURACY_PROMPT, judge=chat_model(fake_openai), feedback_key="acc"
    )
    result = asyncio.run(evaluator(outputs={"messages": messages}))
    assert result["key"] == "acc" and result["score"] is True
    text = _user(fake_openai.last_chat_body)
    assert "<tool_result id=t1>\nfound 7\n</tool_result>" in text
    assert '<arguments>{"id": 7}</arguments>' in text


def test_bad_trajectory_is_rejected(fake_openai: FakeOpenAIServer) -> None:
    evaluator = create_trajectory_llm_as_judge(judge=chat_model(fake_openai))
    with pytest.raises(ValueError, match="outputs"):
        evaluator(outputs=None)
    with pytest.raises((TypeError, ValueError), match="outputs"):
        evaluator(outputs=[{"content": "no role"}])
    assert fake_openai.chat_requests == []
