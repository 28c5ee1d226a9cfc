"""create_llm_as_judge / create_async_llm_as_judge against the fake OpenAI server.

Every behaviour test runs four ways: openai.OpenAI, openai.AsyncOpenAI, ChatOpenAI sync, ChatOpenAI
async (the ``kind`` fixture).
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel
from typing_extensions import TypedDict

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.llm import JudgeOutputError, create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer, chat_model, openai_client
from tests.llm.judge_helpers import make_judge, user_text

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nReference: {reference_outputs}"


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a recorded request asked for (response_format or forced tool)."""
    fmt = body.get("response_format")
    if fmt and fmt.get("type") == "json_schema":
        return dict(fmt["json_schema"]["schema"])
    if body.get("tools"):
        return dict(body["tools"][0]["function"]["parameters"])
    raise AssertionError(f"no schema in request: {body}")


# --------------------------------------------------------------------------- request shape


def test_formats_variables_and_returns_result(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "The answer matches.", "score": True})
    judge = make_judge(kind, fake_openai, prompt=PROMPT, feedback_key="correctness")
    result = judge(inputs={"q": "2+2?"}, outputs="4", reference_outputs="four")
    assert result["key"] == "correctness"
    assert result["score"] is True
    assert result["comment"] == "The answer matches."
    body = fake_openai.last_chat_body
    text = user_text(body)
    assert 'Question: {\n  "q": "2+2?"\n}' in text
    assert "Answer: 4" in text and "Reference: four" in text
    schema = schema_of(body)
    assert list(schema["properties"]) == ["reasoning", "score"]
    assert schema["properties"]["score"]["type"] == "boolean"
    assert schema["required"] == ["reasoning", "score"]


def test_system_prepended_and_few_shots_appended(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": False})
    examples = [
        {"inputs": "What color is the sky?", "outputs": "Red.", "reasoning": "Wrong.", "score": 0},
        {"inputs": "2+2", "outputs": "4", "score": 1},
    ]
    judge = make_judge(
        kind,
        fake_openai,
        prompt="Judge {outputs}",
        system="You are strict.",
        few_shot_examples=examples,
    )
    judge(outputs="x")
    messages = fake_openai.last_chat_body["messages"]
    assert messages[0] == {"role": "system", "content": "You are strict."}
    last_user = [m for m in messages if m["role"] == "user"][-1]
    content = last_user["content"]
    assert content.startswith("Judge x")
    assert "<inputs>\nWhat color is the sky?\n</inputs>" in content
    assert "<reasoning>\nWrong.\n</reasoning>" in content
    assert content.index("What color is the sky?") < content.index("<inputs>\n2+2")
    assert "<score>1</score>" in content


def test_message_lists_render_as_transcripts(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = make_judge(kind, fake_openai, prompt="Conversation:\n{outputs}")
    outputs = [
        {"role": "user", "content": "hi"},
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}]),
        {"role": "tool", "content": "found", "tool_call_id": "c1"},
        {"role": "assistant", "content": "done"},
    ]
    snapshot = copy.deepcopy(outputs)
    judge(outputs=outputs)
    text = user_text(fake_openai.last_chat_body)
    assert "<user>\nhi\n</user>" in text
    assert "<name>search</name>" in text and '{"q": "x"}' in text
    assert "<tool_result id=c1>" in text
    assert outputs == snapshot


def test_extra_variables_render_as_json_not_repr(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = make_judge(kind, fake_openai, prompt="{outputs} with context {context}")
    judge(outputs="x", context={"doc": "It is early evening.", "flag": True})
    text = user_text(fake_openai.last_chat_body)
    assert '"flag": true' in text and "'doc'" not in text


def test_use_reasoning_false(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": True})
    judge = make_judge(kind, fake_openai, prompt="{outputs}", use_reasoning=False)
    result = judge(outputs="x")
    assert result["score"] is True and result["comment"] is None
    assert list(schema_of(fake_openai.last_chat_body)["properties"]) == ["score"]


# --------------------------------------------------------------------------- score kinds


def test_continuous(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "mostly", "score": 0.75})
    judge = make_judge(kind, fake_openai, prompt="{outputs}", continuous=True)
    assert judge(outputs="x")["score"] == 0.75
    assert schema_of(fake_openai.last_chat_body)["properties"]["score"]["type"] == "number"


def test_choices_readme_example(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(
        json={"reasoning": "The provided answer mentioned doodads but was incorrect.", "score": 0.5}
    )
    judge = make_judge(kind, fake_openai, prompt=PROMPT, choices=[0.0, 0.5, 1.0])
    result = judge(
        inputs="What is the current price of doodads?",
        outputs="The price of doodads is $10.",
        reference_outputs="The price of doodads is $15.",
    )
    assert result["key"] == "score" and result["score"] == 0.5
    assert result["comment"] == "The provided answer mentioned doodads but was incorrect."
    assert schema_of(fake_openai.last_chat_body)["properties"]["score"]["enum"] == [0.0, 0.5, 1.0]


@pytest.mark.parametrize(
    ("options", "bad", "good"),
    [
        ({"choices": [0.0, 1.0]}, 0.5, 1.0),
        ({"continuous": True}, 1.5, 0.25),
        ({}, "maybe", True),
    ],
)
def test_out_of_range_score_is_repaired_once(
    kind: str, fake_openai: FakeOpenAIServer, options: dict[str, Any], bad: Any, good: Any
) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": bad})
    fake_openai.queue_chat(json={"reasoning": "r2", "score": good})
    judge = make_judge(kind, fake_openai, prompt="{outputs}", **options)
    result = judge(outputs="x")
    assert result["score"] == good and result["comment"] == "r2"
    assert len(fake_openai.chat_requests) == 2
    repair = fake_openai.chat_requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and json.dumps(bad) in repair[-2]["content"]
    assert "cannot be used" in repair[-1]["content"]


def test_bad_answer_twice_raises_with_raw_answer(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "verdict": True})
    fake_openai.queue_chat(json={"reasoning": "r", "verdict": "still no score"})
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    with pytest.raises(JudgeOutputError, match="no 'score' field") as info:
        judge(outputs="x")
    assert "still no score" in str(info.value)
    assert info.value.raw is not None and "still no score" in info.value.raw
    assert len(fake_openai.chat_requests) == 2


def test_missing_reasoning_is_repaired(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": True})
    fake_openai.queue_chat(json={"reasoning": "now with reasons", "score": True})
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    assert judge(outputs="x")["comment"] == "now with reasons"


def test_prose_around_json_is_parsed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(
        'Sure! Here is my evaluation:\n```json\n{"reasoning": "fine", "score": true}\n```\nBye.'
    )
    judge = create_llm_as_judge(
        prompt="{outputs}", judge=openai_client(fake_openai), model="gpt-test"
    )
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 1


def test_token_usage_in_metadata(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(
        json={"reasoning": "r", "score": True},
        usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    )
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    meta = judge(outputs="x")["metadata"]
    assert meta == {"usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}}


# --------------------------------------------------------------------------- output schemas


class EqualityResult(TypedDict):
    equality_justification: str
    are_equal: bool


class EqualityModel(BaseModel):
    equality_justification: str
    are_equal: bool


JSON_SCHEMA = {
    "type": "object",
    "title": "equality",
    "properties": {
        "equality_justification": {"type": "string"},
        "are_equal": {"type": "boolean"},
    },
    "required": ["equality_justification", "are_equal"],
}
OPENAI_FORMAT = {"name": "equality", "strict": True, "schema": copy.deepcopy(JSON_SCHEMA)}


@pytest.mark.parametrize("schema", [EqualityResult, EqualityModel, JSON_SCHEMA, OPENAI_FORMAT])
def test_output_schema_returns_structured_dict(
    kind: str, fake_openai: FakeOpenAIServer, schema: Any
) -> None:
    answer = {"equality_justification": "Same text.", "are_equal": True}
    fake_openai.queue_chat(json=answer)
    snapshot = copy.deepcopy(schema) if isinstance(schema, dict) else None
    judge = make_judge(
        kind,
        fake_openai,
        prompt="Are the following two values equal? {inputs} {outputs}",
        output_schema=schema,
    )
    text = "The rain in Spain falls mainly on the plain."
    result = judge(inputs=text, outputs=text)
    if schema is EqualityModel:  # a Pydantic schema gives an instance of it (as 0.2.2 does)
        assert isinstance(result, EqualityModel) and result.are_equal is True
        result = result.model_dump()
    else:
        assert type(result) is dict
    assert result == answer
    sent = schema_of(fake_openai.last_chat_body)
    assert set(sent["properties"]) == {"equality_justification", "are_equal"}
    if snapshot is not None:
        assert schema == snapshot  # the caller's schema is never modified (public bug B8a)


def test_output_schema_answer_missing_field_raises(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"are_equal": True})
    fake_openai.queue_chat(json={"are_equal": True})
    judge = create_llm_as_judge(
        prompt="{outputs}", judge=chat_model(fake_openai), output_schema=EqualityResult
    )
    with pytest.raises(JudgeOutputError):
        judge(outputs="x")


def test_structured_prompt_schema_and_conflict(fake_openai: FakeOpenAIServer) -> None:
    from langchain_core.prompts.structured import StructuredPrompt

    prompt = StructuredPrompt([("human", "Compare {inputs} and {outputs}")], schema_=JSON_SCHEMA)
    with pytest.raises(ValueError, match="StructuredPrompt"):
        create_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai), output_schema=JSON_SCHEMA)
    answer = {"equality_justification": "differ", "are_equal": False}
    fake_openai.queue_chat(json=answer)
    judge = create_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai))
    assert judge(inputs="a", outputs="b") == answer


# --------------------------------------------------------------------------- prompt kinds


def test_mustache_chat_prompt_template_readme_example(
    kind: str, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.queue_chat(json={"reasoning": "same", "score": True})
    prompt = ChatPromptTemplate(
        [
            ("system", "You are an expert at determining if two objects are equal."),
            ("human", "Are these two equal? {{inputs}} {{outputs}}"),
        ],
        template_format="mustache",
    )
    judge = make_judge(kind, fake_openai, prompt=prompt, feedback_key="equality")
    result = judge(inputs={"a": 1, "b": 2}, outputs={"a": 1, "b": 2})
    assert result["key"] == "equality" and result["score"] is True
    messages = fake_openai.last_chat_body["messages"]
    assert messages[0]["role"] == "system"
    assert "Are these two equal?" in messages[1]["content"]


def test_fstring_chat_prompt_template(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    prompt = ChatPromptTemplate.from_messages([("human", "Judge {outputs} given {context}")])
    judge = create_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai))
    judge(outputs={"x": 1}, context="ctx")
    assert '"x": 1' in user_text(fake_openai.last_chat_body)
    with pytest.raises(ValueError, match="'context'"):
        judge(outputs="x")


def test_callable_prompt_gets_raw_values(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    seen: dict[str, Any] = {}

    def prompt(**kwargs: Any) -> list[dict[str, Any]]:
        seen.update(kwargs)
        return [{"role": "user", "content": f"Is {kwargs['outputs']['v']} positive?"}]

    judge = make_judge(kind, fake_openai, prompt=prompt)
    judge(outputs={"v": 3}, extra_var="e")
    assert seen == {
        "inputs": None,
        "outputs": {"v": 3},
        "reference_outputs": None,
        "extra_var": "e",
    }
    assert user_text(fake_openai.last_chat_body) == "Is 3 positive?"


def test_async_callable_prompt(fake_openai: FakeOpenAIServer) -> None:
    async def prompt(**kwargs: Any) -> list[Any]:
        return [HumanMessage(content=f"Rate {kwargs['outputs']}")]

    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_async_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai))
    assert asyncio.run(judge(outputs="x"))["score"] is True
    assert user_text(fake_openai.last_chat_body) == "Rate x"
    with pytest.raises(TypeError, match="create_async_llm_as_judge"):
        create_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai))


# --------------------------------------------------------------------------- attachments


def _content_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    assert isinstance(content, list), content
    return list(content)


def test_attachment_url_goes_where_placeholder_is(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": False})
    judge = make_judge(kind, fake_openai, prompt="Before {inputs}\n{attachments}\nAfter {outputs}")
    judge(inputs="in", outputs="out", attachments="https://example.com/image.jpg")
    blocks = _content_blocks(fake_openai.last_chat_body)
    assert [b["type"] for b in blocks] == ["text", "image_url", "text"]
    assert blocks[0]["text"].startswith("Before in")
    assert blocks[1]["image_url"]["url"] == "https://example.com/image.jpg"
    assert blocks[2]["text"].strip() == "After out"


def test_attachment_kinds_openai_client(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_llm_as_judge(
        prompt="Check {attachments}", judge=openai_client(fake_openai), model="gpt-test"
    )
    judge(
        attachments=[
            {"mime_type": "image/png", "data": "data:image/png;base64,iVBORw0KGgo="},
            {"mime_type": "audio/mpeg", "data": "data:audio/mpeg;base64,SUQz"},
            {"mime_type": "application/pdf", "data": "JVBERi0=", "name": "doc.pdf"},
        ]
    )
    blocks = _content_blocks(fake_openai.last_chat_body)
    assert blocks[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    assert blocks[2] == {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}}
    assert blocks[3]["type"] == "file" and blocks[3]["file"]["filename"] == "doc.pdf"


@pytest.mark.parametrize(
    "attachment",
    [
        {"mime_type": "video/mp4", "data": "AAAA"},
        "https://example.com/report.pdf",
        42,
        {"url": "https://example.com/x.png"},
    ],
)
def test_bad_attachments_raise(fake_openai: FakeOpenAIServer, attachment: Any) -> None:
    judge = create_llm_as_judge(prompt="{attachments}", judge=chat_model(fake_openai))
    with pytest.raises(ValueError):
        judge(attachments=attachment)
    assert fake_openai.chat_requests == []


# --------------------------------------------------------------------------- resilience


def _fast(judge: Any, max_retries: int = 3) -> None:
    judge_core(judge).retry = RetryPolicy(
        max_retries=max_retries, initial_delay=0.001, max_delay=0.01
    )


def test_429_with_retry_after_is_retried(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=429, headers={"Retry-After": "0"})
    fake_openai.queue_chat(status=429, headers={"Retry-After": "0"})
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 3


def test_retry_after_is_honoured(fake_openai: FakeOpenAIServer) -> None:
    import time

    fake_openai.queue_chat(status=429, headers={"Retry-After": "0.3"})
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_llm_as_judge(prompt="{outputs}", judge=chat_model(fake_openai))
    start = time.perf_counter()
    judge(outputs="x")
    assert time.perf_counter() - start >= 0.3


def test_5xx_retries_stop_at_max_retries(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(status=503)
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    _fast(judge, max_retries=2)
    with pytest.raises(Exception) as info:
        judge(outputs="x")
    assert getattr(info.value, "status_code", None) == 503
    assert len(fake_openai.chat_requests) == 3


def test_max_retries_zero_and_non_transient_errors(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=500)
    judge = create_llm_as_judge(prompt="{outputs}", judge=chat_model(fake_openai), max_retries=0)
    with pytest.raises(Exception, match=r"500|Internal"):
        judge(outputs="x")
    assert len(fake_openai.chat_requests) == 1
    fake_openai.reset()
    fake_openai.queue_chat(status=401)
    judge = create_llm_as_judge(prompt="{outputs}", judge=chat_model(fake_openai))
    with pytest.raises(Exception, match=r"401|uthentication"):
        judge(outputs="x")
    assert len(fake_openai.chat_requests) == 1


def test_timeout_is_retried(fake_openai: FakeOpenAIServer) -> None:
    import openai

    fake_openai.queue_chat(hang=True)
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="k", timeout=0.3, max_retries=0)
    judge = create_llm_as_judge(prompt="{outputs}", judge=client, model="gpt-test")
    _fast(judge)
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 2


def test_malformed_body_is_retried_then_raises(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(body=b"{not json")
    judge = create_llm_as_judge(prompt="{outputs}", judge=openai_client(fake_openai), model="m")
    _fast(judge, max_retries=1)
    with pytest.raises(Exception):  # noqa: B017 - any client error, never a score
        judge(outputs="x")


# --------------------------------------------------------------------------- structured-output ladder


@pytest.mark.parametrize(
    ("reject_formats", "reject_tools", "expected_rung"),
    [
        ({"json_schema"}, False, "tool"),
        ({"json_schema"}, True, "json_object"),
        ({"json_schema", "json_object"}, True, "text"),
    ],
)
def test_degrades_and_remembers_the_working_rung(
    kind: str,
    fake_openai: FakeOpenAIServer,
    reject_formats: set[str],
    reject_tools: bool,
    expected_rung: str,
) -> None:
    fake_openai.reject_response_format = set(reject_formats)
    fake_openai.reject_tools = reject_tools
    fake_openai.set_default_chat(json={"reasoning": "fine", "score": True})
    judge = make_judge(kind, fake_openai, prompt="{outputs}")
    assert judge(outputs="x")["score"] is True
    first_call_requests = len(fake_openai.chat_requests)
    assert judge(outputs="y")["score"] is True
    assert len(fake_openai.chat_requests) == first_call_requests + 1  # remembered
    last = fake_openai.last_chat_body
    fmt = (last.get("response_format") or {}).get("type")
    if expected_rung == "tool":
        assert last.get("tools") and fmt is None
    elif expected_rung == "json_object":
        assert fmt == "json_object" and not last.get("tools")
    else:
        assert fmt is None and not last.get("tools")
        assert "JSON schema" in user_text(last)


# --------------------------------------------------------------------------- errors and validation


def test_missing_variable_names_it(fake_openai: FakeOpenAIServer) -> None:
    judge = create_llm_as_judge(prompt=PROMPT, judge=chat_model(fake_openai))
    with pytest.raises(ValueError, match="'reference_outputs'"):
        judge(inputs="a", outputs="b")
    with pytest.raises(ValueError, match="'attachments'"):
        create_llm_as_judge(prompt="{attachments}", judge=chat_model(fake_openai))(outputs="x")
    assert fake_openai.chat_requests == []


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"continuous": True, "choices": [0.0, 1.0]}, ValueError, "mutually exclusive"),
        ({"choices": []}, ValueError, "choices"),
        ({"choices": ["a"]}, TypeError, "choices"),
        ({"judge": None, "model": None}, ValueError, "model"),
        ({"model": 3}, TypeError, "model"),
        ({"judge": object()}, TypeError, "judge"),
        ({"prompt": 42}, TypeError, "prompt"),
        ({"prompt": "{}"}, ValueError, "positional"),
        ({"few_shot_examples": [{"inputs": "a"}]}, ValueError, "score"),
        ({"max_retries": -1}, ValueError, "max_retries"),
        ({"feedback_key": ""}, ValueError, "feedback_key"),
    ],
)
def test_bad_options_fail_at_creation(options: dict[str, Any], error: type, match: str) -> None:
    base: dict[str, Any] = {"prompt": "{outputs}", "model": "openai:gpt-test"}
    base.update(options)
    with pytest.raises(error, match=match):
        create_llm_as_judge(**base)


def test_openai_client_needs_model_and_async_client_needs_async_factory(
    fake_openai: FakeOpenAIServer,
) -> None:
    import openai

    with pytest.raises(ValueError, match="model"):
        create_llm_as_judge(prompt="{outputs}", judge=openai_client(fake_openai))
    with pytest.raises(TypeError, match="create_async_llm_as_judge"):
        create_llm_as_judge(
            prompt="{outputs}",
            judge=openai.AsyncOpenAI(base_url=fake_openai.base_url, api_key="k"),
            model="m",
        )


def test_sync_openai_client_works_in_async_factory(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_async_llm_as_judge(
        prompt="{outputs}", judge=openai_client(fake_openai), model="openai:gpt-test"
    )
    assert asyncio.run(judge(outputs="x"))["score"] is True
    assert fake_openai.last_chat_body["model"] == "gpt-test"


def test_inputs_are_not_mutated(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    inputs = {"messages": [HumanMessage(content="hi")]}
    outputs = {"answer": ["a", {"b": 1}]}
    attachments = [{"mime_type": "image/png", "data": "iVBORw0KGgo="}]
    before = (
        inputs["messages"][0].model_dump(),
        copy.deepcopy(outputs),
        copy.deepcopy(attachments),
    )
    judge = make_judge(kind, fake_openai, prompt="{inputs} {outputs} {attachments}")
    judge(inputs=inputs, outputs=outputs, attachments=attachments)
    assert isinstance(inputs["messages"][0], HumanMessage)
    assert (inputs["messages"][0].model_dump(), outputs, attachments) == before


@pytest.mark.usefixtures("openai_env")
def test_model_string_uses_openai_base_url(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_llm_as_judge(prompt="{outputs}", model="openai:gpt-test-mini")
    assert judge(outputs="x")["score"] is True
    body = fake_openai.last_chat_body
    assert body["model"] == "gpt-test-mini"
    assert "temperature" not in body  # reasoning models reject sampling parameters


def test_other_providers_need_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from openevals.models import resolve_chat_model

    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
    with pytest.raises(ImportError, match="pip install langchain"):
        resolve_chat_model("anthropic:claude-3-5-sonnet-latest")


def test_structured_output_kwargs_forwarded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    judge = create_llm_as_judge(
        prompt="{outputs}",
        judge=chat_model(fake_openai),
        structured_output_kwargs={"method": "function_calling"},
    )
    assert judge(outputs="x")["score"] is True
    body = fake_openai.last_chat_body
    assert body.get("tools") and "response_format" not in body


async def test_async_concurrency(fake_openai: FakeOpenAIServer) -> None:
    import time

    fake_openai.latency = 0.2
    fake_openai.set_default_chat(json={"reasoning": "r", "score": True})
    judge = create_async_llm_as_judge(prompt="{outputs}", judge=chat_model(fake_openai))
    start = time.perf_counter()
    results = await asyncio.gather(*(judge(outputs=str(i)) for i in range(20)))
    assert all(r["score"] is True for r in results)
    # Sequential calls would take 20 x 0.2 s = 4 s; concurrent ones overlap (loose bound).
    assert time.perf_counter() - start < 2.5


def test_model_without_structured_output_support_falls_back_to_text() -> None:
    """A LangChain chat model lacking with_structured_output and bind_tools still works."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(
        responses=['Thinking... {"reasoning": "plain text path", "score": true}']
    )
    judge = create_llm_as_judge(prompt="{outputs}", judge=model)
    result = judge(outputs="x")
    assert result["score"] is True and result["comment"] == "plain text path"
    core = judge_core(judge)
    assert core.rungs[core._rung_start] == "text"


@pytest.mark.usefixtures("openai_env")
def test_model_string_async_judge_survives_new_event_loops(fake_openai: FakeOpenAIServer) -> None:
    """`asyncio.run(judge(...))` twice: each loop gets its own connection pool."""
    fake_openai.set_default_chat(json={"reasoning": "r", "score": True})
    judge = create_async_llm_as_judge(prompt="{outputs}", model="openai:gpt-test")
    for i in range(3):
        assert asyncio.run(judge(outputs=str(i)))["score"] is True
    assert len(fake_openai.chat_requests) == 3


def test_retries_do_not_multiply_with_a_users_chat_openai(fake_openai: FakeOpenAIServer) -> None:
    """A default ChatOpenAI retries by itself (max_retries=2); the judge's policy must win."""
    from langchain_openai import ChatOpenAI

    fake_openai.set_default_chat(status=503)
    model = ChatOpenAI(base_url=fake_openai.base_url, api_key="test-key", model="gpt-test")
    judge = create_llm_as_judge(prompt="{outputs}", judge=model)
    _fast(judge, max_retries=3)
    with pytest.raises(Exception) as info:
        judge(outputs="x")
    assert getattr(info.value, "status_code", None) == 503
    assert len(fake_openai.chat_requests) == 4  # 1 + 3 retries, not 3 x 3
    assert model.root_client.max_retries == 2  # the caller's model is untouched


def test_optional_fields_of_a_json_schema_stay_optional(fake_openai: FakeOpenAIServer) -> None:
    schema = {
        "type": "object",
        "title": "verdict",
        "properties": {"label": {"type": "string"}, "note": {"type": "string"}},
        "required": ["label"],
    }
    fake_openai.queue_chat(json={"label": "ok"})  # a lenient server may leave out `note`
    judge = create_llm_as_judge(
        prompt="{outputs}", judge=chat_model(fake_openai), output_schema=schema
    )
    assert judge(outputs="x") == {"label": "ok"}
    assert len(fake_openai.chat_requests) == 1
    assert schema["required"] == ["label"]  # the caller's schema is unchanged


def test_nested_fields_are_validated_and_repaired(fake_openai: FakeOpenAIServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdict": {
                "type": "object",
                "properties": {"score": {"type": "boolean"}, "why": {"type": "string"}},
                "required": ["score", "why"],
            }
        },
        "required": ["verdict"],
    }
    fake_openai.queue_chat(json={"verdict": {"score": "yes", "why": "r"}})
    fake_openai.queue_chat(json={"verdict": {"score": True, "why": "r"}})
    judge = create_llm_as_judge(
        prompt="{outputs}", judge=chat_model(fake_openai), output_schema=schema
    )
    assert judge(outputs="x") == {"verdict": {"score": True, "why": "r"}}
    repair = fake_openai.chat_requests[1]["messages"][-1]["content"]
    assert "the answer.verdict.score" in repair


def test_chat_prompt_template_with_attachments_placeholder(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": False})
    prompt = ChatPromptTemplate.from_messages([("human", "Review {inputs}. {attachments}")])
    judge = create_llm_as_judge(prompt=prompt, judge=chat_model(fake_openai))
    assert judge(inputs="this image", attachments="https://example.com/cat.png")["score"] is False
    blocks = _content_blocks(fake_openai.last_chat_body)
    assert blocks[0]["type"] == "text" and "Review this image." in blocks[0]["text"]
    assert blocks[-1] == {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    with pytest.raises(ValueError, match="'attachments'"):
        judge(inputs="this image")


# --------------------------------------------------------------------------- errors name the variable


@pytest.mark.parametrize("variable", ["inputs", "outputs", "reference_outputs", "context"])
def test_unrenderable_values_name_their_prompt_variable(
    fake_openai: FakeOpenAIServer, variable: str
) -> None:
    """issue 43: "cannot render a set value" and "`value` contains itself" named no variable."""
    prompt = "Q {inputs} A {outputs} R {reference_outputs} C {context}"
    judge = create_llm_as_judge(prompt=prompt, judge=openai_client(fake_openai), model="m")
    values: dict[str, Any] = {v: "x" for v in ("inputs", "outputs", "reference_outputs", "context")}
    with pytest.raises(TypeError, match=rf"cannot render `{variable}` \(a set\) into the prompt"):
        judge(**{**values, variable: {1, 2}})
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError, match=rf"`{variable}` contains itself"):
        judge(**{**values, variable: cyclic})
    assert fake_openai.chat_requests == []  # refused before any model call
