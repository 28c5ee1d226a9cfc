"""Pydantic results on every judge path, and multimodal blocks per provider (issue 12, items 3-4)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from openevals._judge.cache import active_cache
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

ANSWER = {"equality_justification": "Same words.", "are_equal": True}
PNG = "iVBORw0KGgo="


class Equality(BaseModel):
    equality_justification: str
    are_equal: bool


class EqualityDict(TypedDict):
    equality_justification: str
    are_equal: bool


class RecordingChatModel(BaseChatModel):
    """A non-OpenAI LangChain chat model that records the messages it receives."""

    answer: str = '{"reasoning": "Looks right.", "score": true}'
    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording-fake"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.answer))])


PATHS = ("model-string", "chat-openai", "openai-client", "generic-langchain")


def _judge(
    path: str, server: FakeOpenAIServer, use_async: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> Any:
    if path == "model-string":
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        options: dict[str, Any] = {"model": "openai:gpt-test"}
    elif path == "chat-openai":
        options = {"judge": chat_model(server)}
    elif path == "openai-client":
        client = async_openai_client(server) if use_async else openai_client(server)
        options = {"judge": client, "model": "gpt-test"}
    else:
        import json

        options = {"judge": RecordingChatModel(answer=json.dumps(ANSWER))}
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    evaluator = factory(prompt="Equal? {inputs} / {outputs}", **options, **kw)

    def run(**call: Any) -> Any:
        out = evaluator(**call)
        return asyncio.run(out) if use_async else out

    return run


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("path", PATHS)
def test_pydantic_schema_returns_a_model_instance(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, path: str, use_async: bool
) -> None:
    fake_openai.queue_chat(json=ANSWER)
    judge = _judge(path, fake_openai, use_async, monkeypatch, output_schema=Equality)
    result = judge(inputs="a", outputs="a")
    assert isinstance(result, Equality)
    assert result.are_equal is True
    assert result.equality_justification == "Same words."


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("schema", [EqualityDict, Equality.model_json_schema()])
def test_typeddict_and_json_schemas_stay_dicts_for_model_strings(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, schema: Any, use_async: bool
) -> None:
    fake_openai.queue_chat(json=ANSWER)
    judge = _judge("model-string", fake_openai, use_async, monkeypatch, output_schema=schema)
    result = judge(inputs="a", outputs="a")
    assert type(result) is dict and result == ANSWER


def test_pydantic_instance_also_from_a_cached_answer(fake_openai: FakeOpenAIServer) -> None:
    class Store(dict[str, Any]):
        def set(self, key: str, value: Any) -> None:
            self[key] = value

    store = Store()
    token = active_cache.set(store)
    try:
        fake_openai.queue_chat(json=ANSWER)
        judge = create_llm_as_judge(
            prompt="{outputs}",
            judge=openai_client(fake_openai),
            model="gpt-test",
            output_schema=Equality,
        )
        first, second = judge(outputs="a"), judge(outputs="a")
    finally:
        active_cache.reset(token)
    assert len(fake_openai.chat_requests) == 1  # the second came from the cache
    assert isinstance(first, Equality) and isinstance(second, Equality) and first == second


# --------------------------------------------------------------------------- multimodal blocks

ATTACHMENTS = [
    {"mime_type": "image/png", "data": PNG},
    "https://example.com/cat.jpg",
    {"mime_type": "image/jpeg", "data": f"data:image/jpeg;base64,{PNG}"},
    {"mime_type": "application/pdf", "data": "JVBERi0=", "name": "report.pdf"},
    {"mime_type": "audio/wav", "data": "UklGRg=="},
    {"mime_type": "audio/mpeg", "data": "SUQz"},
]
STANDARD_BLOCKS = [
    {"type": "image", "base64": PNG, "mime_type": "image/png"},
    {"type": "image", "url": "https://example.com/cat.jpg"},
    {"type": "image", "base64": PNG, "mime_type": "image/jpeg"},
    {
        "type": "file",
        "base64": "JVBERi0=",
        "mime_type": "application/pdf",
        "extras": {"filename": "report.pdf"},
    },
    {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
    {"type": "audio", "base64": "SUQz", "mime_type": "audio/mp3"},
]


@pytest.mark.parametrize("use_async", [False, True])
def test_generic_langchain_model_gets_standard_content_blocks(use_async: bool) -> None:
    model = RecordingChatModel()
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Describe: {outputs} {attachments}", judge=model)
    attachments = copy.deepcopy(ATTACHMENTS)
    out = judge(outputs="the files", attachments=attachments)
    result = asyncio.run(out) if use_async else out
    assert result["score"] is True
    assert attachments == ATTACHMENTS  # the caller's attachments are not modified
    (messages,) = model.received
    content = messages[-1].content
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": "Describe: the files "}
    assert content[1 : 1 + len(STANDARD_BLOCKS)] == STANDARD_BLOCKS
    assert all(b.get("type") != "image_url" for b in content if isinstance(b, dict))


@pytest.mark.parametrize("use_async", [False, True])
def test_chat_openai_keeps_openai_format_blocks(
    fake_openai: FakeOpenAIServer, use_async: bool
) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Describe: {outputs} {attachments}", judge=chat_model(fake_openai))
    out = judge(outputs="x", attachments=ATTACHMENTS[:2])
    assert (asyncio.run(out) if use_async else out)["score"] is True
    content = fake_openai.last_chat_body["messages"][-1]["content"]
    kinds = [b["type"] for b in content]
    assert kinds.count("image_url") == 2
    assert content[1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
