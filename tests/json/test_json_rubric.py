"""JSON match with a rubric: LLM-graded keys through the fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from openevals.json import (
    SYSTEM_PROMPT,
    USER_PROMPT,
    create_async_json_match_evaluator,
    create_json_match_evaluator,
)
from openevals.testing import FakeOpenAIServer, chat_model, openai_client

OUTPUTS = [
    {"a": "Mango, Bananas", "b": 2},
    {"a": "Apples", "b": 2, "c": [1, 2, 3]},
]
REFERENCE = [
    {"a": "Bananas, Mango", "b": 2, "d": "Not in outputs"},
    {"a": "Apples, Strawberries", "b": 2},
]
RUBRIC = {"a": "Does the answer mention all the fruits in the reference answer?"}


def _grade_by_content(body: dict[str, Any]) -> dict[str, Any]:
    """Scripted judge: 'a' passes only when the produced value mentions Mango."""
    user = body["messages"][-1]["content"]
    keys = list(_requested_keys(body))
    return {"json": {key: {"reasoning": f"graded {key}", "score": "Mango" in user} for key in keys}}


def _requested_keys(body: dict[str, Any]) -> list[str]:
    fmt = body.get("response_format")
    schema = fmt["json_schema"]["schema"] if fmt else body["tools"][0]["function"]["parameters"]
    return list(schema["properties"])


def test_readme_rubric_example(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_grade_by_content)
    evaluator = create_json_match_evaluator(
        aggregator="average",
        list_aggregator="all",
        rubric=RUBRIC,
        judge=chat_model(fake_openai),
        use_reasoning=True,
    )
    result = evaluator(outputs=OUTPUTS, reference_outputs=REFERENCE)
    # Element 1: a=1, b=1, d=0 -> 2/3; element 2: a=0, b=1, c=0 -> 1/3; "all" over elements -> 0.
    assert [(r["key"], r["score"]) for r in result] == [("json_match:average", 0)]
    # One structured call per list element, each covering that element's rubric keys.
    assert len(fake_openai.chat_requests) == 2
    for body in fake_openai.chat_requests:
        assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert _requested_keys(body) == ["a"]
        assert (
            "Key: a, Criteria: Does the answer mention all the fruits"
            in body["messages"][1]["content"]
        )


def test_per_key_results_carry_reasoning(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"a": {"reasoning": "mentions both fruits", "score": True}})
    evaluator = create_json_match_evaluator(
        rubric=RUBRIC, judge=openai_client(fake_openai), model="gpt-test"
    )
    result = evaluator(outputs=OUTPUTS[0], reference_outputs=REFERENCE[0])
    by_key = {r["key"]: r for r in result}
    assert by_key["json_match:a"]["score"] == 1
    assert by_key["json_match:a"]["comment"] == "mentions both fruits"
    assert by_key["json_match:b"]["score"] == 1 and by_key["json_match:d"]["score"] == 0
    content = fake_openai.last_chat_body["messages"][1]["content"]
    assert "a: Mango, Bananas" in content and "a: Bananas, Mango" in content


def test_several_rubric_keys_one_call_without_reasoning(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"a": True, "b": False})
    evaluator = create_async_json_match_evaluator(
        rubric={"a": "fruits", "b": "a number"},
        judge=chat_model(fake_openai),
        use_reasoning=False,
        aggregator="average",
    )
    result = asyncio.run(
        evaluator(outputs={"a": "x", "b": 1}, reference_outputs={"a": "y", "b": 1})
    )
    assert result == [
        {"key": "json_match:average", "score": 0.5, "comment": None, "metadata": None}
    ]
    body = fake_openai.last_chat_body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"] == {"a": {"type": "boolean"}, "b": {"type": "boolean"}}
    assert len(fake_openai.chat_requests) == 1


def test_rubric_key_absent_from_outputs_scores_zero_without_a_call(
    fake_openai: FakeOpenAIServer,
) -> None:
    evaluator = create_json_match_evaluator(rubric={"z": "anything"}, judge=chat_model(fake_openai))
    result = evaluator(outputs={"a": 1}, reference_outputs={"a": 1, "z": "ref"})
    assert {r["key"]: r["score"] for r in result} == {"json_match:a": 1, "json_match:z": 0}
    assert fake_openai.chat_requests == []


def test_rubric_validation() -> None:
    with pytest.raises(ValueError, match="judge"):
        create_json_match_evaluator(rubric=RUBRIC)
    with pytest.raises(ValueError, match="rubric"):
        create_json_match_evaluator(model="openai:gpt-test")
    assert "{rubric}" in USER_PROMPT and "{outputs}" in USER_PROMPT
    json.dumps(SYSTEM_PROMPT)


def test_malformed_verdict_gets_one_repair(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"a": {"reasoning": "r", "score": "true"}})
    fake_openai.queue_chat(json={"a": {"reasoning": "fixed", "score": True}})
    evaluator = create_json_match_evaluator(rubric={"a": "fruit?"}, judge=chat_model(fake_openai))
    result = evaluator(outputs={"a": "Mango"}, reference_outputs={"a": "Mango"})
    assert {r["key"]: r["score"] for r in result} == {"json_match:a": 1}
    assert len(fake_openai.chat_requests) == 2


def test_async_openai_client_needs_the_async_factory(fake_openai: FakeOpenAIServer) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=fake_openai.base_url, api_key="k")
    with pytest.raises(TypeError, match="create_async_json_match_evaluator"):
        create_json_match_evaluator(rubric={"a": "x"}, judge=client, model="gpt-test")


def test_different_rubric_key_sets_get_their_own_schema(fake_openai: FakeOpenAIServer) -> None:
    """One LangChain judge, elements with different rubric keys: each request asks for its keys."""
    fake_openai.queue_chat(json={"a": {"reasoning": "r", "score": True}})
    fake_openai.queue_chat(json={"b": {"reasoning": "r", "score": True}})
    evaluator = create_json_match_evaluator(
        rubric={"a": "x", "b": "y"}, judge=chat_model(fake_openai), list_match_mode="ordered"
    )
    evaluator(outputs=[{"a": 1}, {"b": 2}], reference_outputs=[{"a": 1}, {"b": 2}])
    assert [_requested_keys(body) for body in fake_openai.chat_requests] == [["a"], ["b"]]
