"""The fake OpenAI server, driven by the real ``openai`` and ``langchain_openai`` clients."""

from __future__ import annotations

import asyncio
import http.client
import json
import math
import threading
import time
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langchain_openai import OpenAIEmbeddings
from pydantic import BaseModel

from openevals.testing import (
    DEFAULT_MODELS,
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    async_openai_client,
    chat_model,
    openai_client,
)

MSGS: list[Any] = [
    {"role": "system", "content": "You grade answers."},
    {"role": "user", "content": "Is the sky blue?"},
]


class Grade(BaseModel):
    score: bool
    reasoning: str


def get_weather(city: str) -> str:
    """Look up the weather for a city."""
    return city


def get_time(zone: str) -> str:
    """Look up the time in a zone."""
    return zone


def _norm(vec: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vec))


# ---------------------------------------------------------------------------- plain chat
def test_plain_text_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("The sky is blue.")
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(model="gpt-test-mini", messages=MSGS)
    assert resp.object == "chat.completion"
    assert resp.model == "gpt-test-mini"
    assert resp.id.startswith("chatcmpl-")
    choice = resp.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "The sky is blue."
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert resp.usage is not None
    # whitespace words: "You grade answers." (3) + "Is the sky blue?" (4); reply has 4 words
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (7, 4)
    assert resp.usage.total_tokens == 11


async def test_plain_text_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("first")
    fake_openai.queue_chat("second")
    async with async_openai_client(fake_openai) as client:
        a = await client.chat.completions.create(model="gpt-test", messages=MSGS)
        b = await client.chat.completions.create(model="gpt-test", messages=MSGS)
        c = await client.chat.completions.create(model="gpt-test", messages=MSGS)
    assert [a.choices[0].message.content, b.choices[0].message.content] == ["first", "second"]
    assert c.choices[0].message.content == "ok"  # initial default once the queue is empty
    assert fake_openai.pending_chat == 0


def test_content_parts_are_counted(fake_openai: FakeOpenAIServer) -> None:
    msgs: list[Any] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one two"}, {"type": "text", "text": "three"}],
        }
    ]
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(model="gpt-test", messages=msgs)
    assert resp.usage is not None and resp.usage.prompt_tokens == 3


def test_default_chat_usage_and_finish_reason(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat("always this")
    fake_openai.queue_chat("cut", finish_reason="length", usage={"completion_tokens": 99})
    with openai_client(fake_openai) as client:
        cut = client.chat.completions.create(model="gpt-test", messages=MSGS)
        d1 = client.chat.completions.create(model="gpt-test", messages=MSGS)
        d2 = client.chat.completions.create(model="gpt-test", messages=MSGS)
    assert cut.choices[0].finish_reason == "length"
    assert cut.usage is not None
    assert (cut.usage.completion_tokens, cut.usage.total_tokens) == (99, 7 + 99)
    assert d1.choices[0].message.content == d2.choices[0].message.content == "always this"


def test_langchain_plain_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("hello from the fake")
    msg = chat_model(fake_openai).invoke("hi")
    assert isinstance(msg, AIMessage)
    assert msg.content == "hello from the fake"
    assert msg.response_metadata["model_name"] == "gpt-test"
    assert msg.usage_metadata is not None and msg.usage_metadata["input_tokens"] == 1


async def test_langchain_plain_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("async hello")
    msg = await chat_model(fake_openai, model="gpt-test-mini", temperature=0).ainvoke("hi")
    assert msg.content == "async hello"
    body = fake_openai.last_chat_body
    assert body["model"] == "gpt-test-mini"
    assert body["temperature"] == 0
    assert body["messages"] == [{"role": "user", "content": "hi"}]


# ---------------------------------------------------------------------------- structured output
def test_openai_parse_json_schema_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": True, "reasoning": "it is"})
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.parse(model="gpt-test", messages=MSGS, response_format=Grade)
    assert resp.choices[0].message.parsed == Grade(score=True, reasoning="it is")
    assert fake_openai.last_chat_body["response_format"]["type"] == "json_schema"


async def test_openai_parse_json_schema_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": False, "reasoning": "no"})
    async with async_openai_client(fake_openai) as client:
        resp = await client.chat.completions.parse(
            model="gpt-test", messages=MSGS, response_format=Grade
        )
    assert resp.choices[0].message.parsed == Grade(score=False, reasoning="no")


def test_json_without_structure_request_is_content(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"a": [1, 2]})
    fake_openai.queue_chat(json={"b": None})
    with openai_client(fake_openai) as client:
        plain = client.chat.completions.create(model="gpt-test", messages=MSGS)
        mode = client.chat.completions.create(
            model="gpt-test", messages=MSGS, response_format={"type": "json_object"}
        )
    assert json.loads(plain.choices[0].message.content or "") == {"a": [1, 2]}
    assert json.loads(mode.choices[0].message.content or "") == {"b": None}


def test_structured_output_default_method_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": True, "reasoning": "schema"})
    result = chat_model(fake_openai).with_structured_output(Grade).invoke("grade this")
    assert result == Grade(score=True, reasoning="schema")
    body = fake_openai.last_chat_body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Grade"
    assert "tools" not in body


async def test_structured_output_default_method_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": False, "reasoning": "schema async"})
    result = await chat_model(fake_openai).with_structured_output(Grade).ainvoke("grade this")
    assert result == Grade(score=False, reasoning="schema async")


def test_structured_output_function_calling_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": True, "reasoning": "via tool"})
    model = chat_model(fake_openai).with_structured_output(Grade, method="function_calling")
    assert model.invoke("grade this") == Grade(score=True, reasoning="via tool")
    body = fake_openai.last_chat_body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Grade"}}
    assert "response_format" not in body


async def test_structured_output_function_calling_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"score": False, "reasoning": "via tool async"})
    model = chat_model(fake_openai).with_structured_output(Grade, method="function_calling")
    assert await model.ainvoke("grade this") == Grade(score=False, reasoning="via tool async")


def _tool(name: str) -> Any:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }


def test_json_with_required_single_tool_becomes_tool_call(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"x": 1})
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(
            model="gpt-test", messages=MSGS, tools=[_tool("only")], tool_choice="required"
        )
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    call = choice.message.tool_calls[0]
    assert call.type == "function"
    assert (call.function.name, json.loads(call.function.arguments)) == ("only", {"x": 1})


def test_json_with_auto_tool_choice_is_content(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"x": 1})
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(
            model="gpt-test", messages=MSGS, tools=[_tool("only")], tool_choice="auto"
        )
    assert resp.choices[0].message.tool_calls is None
    assert json.loads(resp.choices[0].message.content or "") == {"x": 1}


def test_json_with_required_and_several_tools_is_an_explained_500(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.queue_chat(json={"x": 1})
    with openai_client(fake_openai) as client, pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(
            model="gpt-test", messages=MSGS, tools=[_tool("a"), _tool("b")], tool_choice="required"
        )
    assert "tool_calls=" in str(info.value)


# ---------------------------------------------------------------------------- tool calls
def test_bind_tools_explicit_calls_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(
        tool_calls=[
            {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_1"},
            {"name": "get_time", "arguments": '{"zone": "CET"}'},
        ]
    )
    msg = chat_model(fake_openai).bind_tools([get_weather, get_time]).invoke("weather and time?")
    assert isinstance(msg, AIMessage)
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"zone": "CET"}),
    ]
    assert msg.tool_calls[0]["id"] == "call_1"
    second_id = msg.tool_calls[1]["id"]
    assert second_id and second_id != "call_1"
    assert msg.response_metadata["finish_reason"] == "tool_calls"
    names = [t["function"]["name"] for t in fake_openai.last_chat_body["tools"]]
    assert names == ["get_weather", "get_time"]


async def test_bind_tools_explicit_calls_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("let me check", tool_calls=[{"name": "get_weather", "arguments": {}}])
    msg = await chat_model(fake_openai).bind_tools([get_weather]).ainvoke("weather?")
    assert msg.content == "let me check"
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [("get_weather", {})]


# ---------------------------------------------------------------------------- embeddings
def test_embeddings_openai_sync(fake_openai: FakeOpenAIServer) -> None:
    with openai_client(fake_openai) as client:
        first = client.embeddings.create(model="text-embedding-test", input=["cat", "dog", "cat"])
        again = client.embeddings.create(model="text-embedding-test", input="cat")
        floats = client.embeddings.create(
            model="text-embedding-test", input="cat", encoding_format="float"
        )
        small = client.embeddings.create(model="text-embedding-test", input="cat", dimensions=8)
    cat, dog, cat2 = (d.embedding for d in first.data)
    assert [d.index for d in first.data] == [0, 1, 2]
    assert len(cat) == 32
    assert cat == cat2 == again.data[0].embedding
    assert cat != dog
    for vec in (cat, dog, floats.data[0].embedding, small.data[0].embedding):
        assert _norm(vec) == pytest.approx(1.0, abs=1e-5)
    # base64 (the client's default) decodes to the float32 rounding of the float vector
    assert cat == pytest.approx(floats.data[0].embedding, abs=1e-6)
    assert floats.data[0].embedding == fake_openai.embedding_for("cat")
    assert len(small.data[0].embedding) == 8
    assert first.model == "text-embedding-test"
    assert first.usage.prompt_tokens == 3


async def test_embeddings_openai_async_tokens_and_zero_vector(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.set_embedding("nothing", [0.0] * 32)
    async with async_openai_client(fake_openai) as client:
        zero = await client.embeddings.create(model="text-embedding-test", input="nothing")
        toks = await client.embeddings.create(model="text-embedding-test", input=[[1, 2], [3]])
        toks2 = await client.embeddings.create(model="text-embedding-test", input=[1, 2])
    assert zero.data[0].embedding == [0.0] * 32
    a, b = (d.embedding for d in toks.data)
    assert a != b
    assert toks2.data[0].embedding == a
    assert _norm(a) == pytest.approx(1.0, abs=1e-5)


def test_embeddings_langchain_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_embedding("blank", [0.0, 0.0, 0.0])
    emb = OpenAIEmbeddings(
        base_url=fake_openai.base_url,
        api_key="test-key",  # type: ignore[arg-type]
        model="text-embedding-test",
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    docs = emb.embed_documents(["alpha", "beta", "blank"])
    query = emb.embed_query("alpha")
    assert docs[0] == query
    assert docs[0] != docs[1]
    assert docs[2] == [0.0, 0.0, 0.0]
    assert _norm(docs[1]) == pytest.approx(1.0, abs=1e-5)
    assert fake_openai.embedding_requests[0]["input"] == ["alpha", "beta", "blank"]


async def test_embeddings_langchain_async(fake_openai: FakeOpenAIServer) -> None:
    emb = OpenAIEmbeddings(
        base_url=fake_openai.base_url,
        api_key="test-key",  # type: ignore[arg-type]
        model="text-embedding-test",
        check_embedding_ctx_length=False,
        model_kwargs={"encoding_format": "float"},
    )
    docs = await emb.aembed_documents(["alpha", "beta"])
    assert docs[0] == fake_openai.embedding_for("alpha")
    assert await emb.aembed_query("beta") == docs[1]


def test_embedding_errors_and_scripting(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_embeddings(status=500)
    fake_openai.queue_embeddings(delay=0.1)
    with openai_client(fake_openai) as client:
        with pytest.raises(openai.InternalServerError):
            client.embeddings.create(model="text-embedding-test", input="x")
        start = time.monotonic()
        ok = client.embeddings.create(model="text-embedding-test", input="x")
        assert time.monotonic() - start >= 0.1
        assert len(ok.data) == 1
        with pytest.raises(openai.BadRequestError, match="empty"):
            client.embeddings.create(model="text-embedding-test", input="")


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1), dim=st.integers(min_value=1, max_value=64))
def test_hashed_embeddings_are_deterministic_unit_vectors(text: str, dim: int) -> None:
    server = FakeOpenAIServer(start=False)
    vec = server.embedding_for(text, dim=dim)
    assert len(vec) == dim
    assert _norm(vec) == pytest.approx(1.0, abs=1e-9)
    assert FakeOpenAIServer(start=False).embedding_for(text, dim=dim) == vec


# ---------------------------------------------------------------------------- records
def test_recorded_requests(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(LookupError, match="no chat completion"):
        _ = fake_openai.last_chat_body
    chat_model(fake_openai, model="gpt-test-mini").invoke("record me")
    with openai_client(fake_openai) as client:
        client.embeddings.create(model="text-embedding-test", input="e")
        client.chat.completions.create(model="gpt-test", messages=MSGS, max_tokens=5)
    recs = fake_openai.requests
    assert [(r.method, r.path) for r in recs] == [
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/embeddings"),
        ("POST", "/v1/chat/completions"),
    ]
    assert all(isinstance(r, RecordedRequest) for r in recs)
    first = recs[0]
    assert first.headers["authorization"] == "Bearer test-key"
    assert first.headers["content-type"] == "application/json"
    assert all(name == name.lower() for name in first.headers)
    assert json.loads(first.raw) == first.body
    assert first.body["model"] == "gpt-test-mini"
    assert first.body["messages"] == [{"role": "user", "content": "record me"}]
    assert recs[0].time <= recs[1].time <= recs[2].time
    assert [b["model"] for b in fake_openai.chat_requests] == ["gpt-test-mini", "gpt-test"]
    assert fake_openai.last_chat_body["messages"] == MSGS
    assert fake_openai.last_chat_body["max_tokens"] == 5
    # records are snapshots: mutating the returned list does not touch the server
    recs.clear()
    assert len(fake_openai.requests) == 3


def test_models_endpoint(fake_openai: FakeOpenAIServer) -> None:
    with openai_client(fake_openai) as client:
        ids = [m.id for m in client.models.list()]
        assert ids == list(DEFAULT_MODELS)
        assert client.models.retrieve("gpt-test").id == "gpt-test"
        with pytest.raises(openai.NotFoundError):
            client.models.retrieve("gpt-nope")


def test_raw_http_keep_alive_unknown_path_and_bad_json(fake_openai: FakeOpenAIServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_openai.port, timeout=5)
    try:
        payload = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]})
        statuses = []
        for path, body in [
            ("/v1/chat/completions", payload),
            ("/v1/nowhere", payload),
            ("/v1/chat/completions", "{broken"),
            ("/v1/chat/completions", json.dumps({"model": "m"})),
            ("/v1/chat/completions", payload),
        ]:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            assert int(resp.headers["Content-Length"]) == len(data)
            statuses.append((resp.status, json.loads(data)))
        sock = conn.sock
    finally:
        conn.close()
    assert sock is not None  # the same connection served all five requests (keep-alive)
    assert [s for s, _ in statuses] == [200, 404, 400, 400, 200]
    assert "POST /v1/nowhere" in statuses[1][1]["error"]["message"]
    assert "messages" in statuses[3][1]["error"]["message"]
    bad = fake_openai.requests[2]
    assert bad.body is None and bad.raw == b"{broken"


def test_chunked_request_bodies_are_read(fake_openai: FakeOpenAIServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_openai.port, timeout=5)
    try:
        for _ in range(2):  # the connection stays usable after a chunked body
            conn.request(
                "POST",
                "/v1/embeddings",
                body=iter([b'{"model": "m", ', b'"input": "hi"}']),
                headers={"Content-Type": "application/json"},
                encode_chunked=True,
            )
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read())["data"]
    finally:
        conn.close()
    assert fake_openai.embedding_requests == [{"model": "m", "input": "hi"}] * 2
    assert fake_openai.requests[0].headers["transfer-encoding"] == "chunked"


# ---------------------------------------------------------------------------- failures
def test_429_retry_after_then_success_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=429, headers={"Retry-After": "0.01"})
    fake_openai.queue_chat(status=429, headers={"Retry-After": "0.01"})
    fake_openai.queue_chat("finally")
    with openai_client(fake_openai, max_retries=2) as client:
        start = time.monotonic()
        resp = client.chat.completions.create(model="gpt-test", messages=MSGS)
        elapsed = time.monotonic() - start
    assert resp.choices[0].message.content == "finally"
    assert len(fake_openai.chat_requests) == 3
    # the client honoured Retry-After instead of its >= 0.375 s exponential backoff
    assert elapsed < 0.35


async def test_429_retry_after_then_success_async_langchain(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=429, headers={"retry-after-ms": "10"})
    fake_openai.queue_chat("after retry")
    msg = await chat_model(fake_openai, max_retries=1).ainvoke("hi")
    assert msg.content == "after retry"
    assert len(fake_openai.requests) == 2


def test_429_without_retries_raises_with_openai_error_body(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=429, headers={"Retry-After": "7"})
    with openai_client(fake_openai) as client, pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="gpt-test", messages=MSGS)
    err = info.value
    assert err.status_code == 429
    assert err.response.headers["retry-after"] == "7"
    assert isinstance(err.body, dict) and "Scripted error 429" in err.body["message"]
    assert len(fake_openai.requests) == 1


async def test_500_sync_and_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=500)
    fake_openai.queue_chat(status=503, body={"error": {"message": "overloaded", "type": "x"}})
    with openai_client(fake_openai) as client, pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-test", messages=MSGS)
    async with async_openai_client(fake_openai) as aclient:
        with pytest.raises(openai.InternalServerError, match="overloaded") as info:
            await aclient.chat.completions.create(model="gpt-test", messages=MSGS)
    assert info.value.status_code == 503


async def test_malformed_body_makes_clients_raise(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(body=b"{not json")
    fake_openai.queue_chat(body="")
    fake_openai.queue_chat(body=b"{not json")
    with openai_client(fake_openai) as client:
        with pytest.raises(ValueError):
            client.chat.completions.create(model="gpt-test", messages=MSGS)
        with pytest.raises(ValueError):
            client.chat.completions.create(model="gpt-test", messages=MSGS)
    with pytest.raises(ValueError):
        await chat_model(fake_openai).ainvoke("hi")
    assert len(fake_openai.requests) == 3


def test_hang_times_out_sync(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(hang=True)
    start = time.monotonic()
    with openai_client(fake_openai, timeout=0.3) as client:
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="gpt-test", messages=MSGS)
        assert 0.25 < time.monotonic() - start < 2.0
        # the hung handler does not block other requests
        after = client.chat.completions.create(model="gpt-test", messages=MSGS)
    assert after.choices[0].message.content == "ok"


async def test_hang_times_out_async(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(hang=True)
    with pytest.raises(openai.APITimeoutError):
        await chat_model(fake_openai, timeout=0.3).ainvoke("hi")
    assert len(fake_openai.requests) == 1


def test_stop_releases_hung_and_delayed_handlers() -> None:
    server = FakeOpenAIServer()
    server.queue_chat(hang=True)
    server.queue_chat("late", delay=30)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            with openai_client(server, timeout=30) as client:
                client.chat.completions.create(model="gpt-test", messages=MSGS)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    server.wait_for_requests(2)
    start = time.monotonic()
    server.stop()
    for t in threads:
        t.join(timeout=5)
    assert time.monotonic() - start < 2.0
    assert not any(t.is_alive() for t in threads)
    assert len(errors) == 2
    assert all(isinstance(e, openai.APIConnectionError) for e in errors)
    assert not server.running
    server.stop()  # idempotent


def test_reply_delay(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("slow", delay=0.15)
    start = time.monotonic()
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(model="gpt-test", messages=MSGS)
    assert resp.choices[0].message.content == "slow"
    assert time.monotonic() - start >= 0.15


async def test_latency_with_concurrency(fake_openai: FakeOpenAIServer) -> None:
    async with async_openai_client(fake_openai) as client:

        async def burst(tag: str) -> float:
            start = time.monotonic()
            results = await asyncio.gather(
                *[
                    client.chat.completions.create(
                        model="gpt-test", messages=[{"role": "user", "content": f"{tag}{i}"}]
                    )
                    for i in range(20)
                ]
            )
            assert [r.choices[0].message.content for r in results] == ["ok"] * 20
            return time.monotonic() - start

        await burst("warm")  # open the 20 keep-alive connections outside the measurement
        fake_openai.reset()
        fake_openai.latency = 0.5
        elapsed = await burst("q")
    # One at a time would take 20 x 0.5 = 10 s; bounds are loose so a busy machine cannot flake.
    assert 0.5 <= elapsed < 3.0, elapsed
    # served concurrently: the last request arrived before the first one's latency was over
    times = [r.time for r in fake_openai.requests]
    assert len(times) == 20
    assert max(times) - min(times) < 0.5
    assert sorted(b["messages"][0]["content"] for b in fake_openai.chat_requests) == sorted(
        f"q{i}" for i in range(20)
    )


async def test_fifty_concurrent_langchain_calls(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.latency = 0.5
    model = chat_model(fake_openai)
    start = time.monotonic()
    msgs = await model.abatch([f"q{i}" for i in range(50)], config={"max_concurrency": 50})
    elapsed = time.monotonic() - start
    assert [m.content for m in msgs] == ["ok"] * 50
    assert elapsed < 5.0, elapsed  # one at a time would take 25 s
    times = [r.time for r in fake_openai.requests]
    assert max(times) - min(times) < 0.5


def test_latency_applies_to_sync_threads(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.latency = 0.4
    model = chat_model(fake_openai)
    start = time.monotonic()
    out = model.batch(["a", "b", "c", "d"], config={"max_concurrency": 4})
    elapsed = time.monotonic() - start
    assert len(out) == 4
    assert 0.4 <= elapsed < 1.5  # one at a time would take 1.6 s


# ---------------------------------------------------------------------------- partial support
async def test_reject_response_format(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.reject_response_format = {"json_schema"}
    fake_openai.queue_chat(json={"score": True, "reasoning": "fallback"})
    model = chat_model(fake_openai)
    with pytest.raises(openai.InternalServerError) as info:
        await model.with_structured_output(Grade).ainvoke("grade")
    assert info.value.status_code == 500
    assert "json_schema" in str(info.value)
    assert fake_openai.pending_chat == 1  # a rejected request does not consume the queue
    # json_object is still accepted, and the function-calling fallback gets the queued reply
    with openai_client(fake_openai) as client:
        ok = client.chat.completions.create(
            model="gpt-test", messages=MSGS, response_format={"type": "json_object"}
        )
    assert json.loads(ok.choices[0].message.content or "") == {
        "score": True,
        "reasoning": "fallback",
    }
    fake_openai.queue_chat(json={"score": False, "reasoning": "tools"})
    result = await model.with_structured_output(Grade, method="function_calling").ainvoke("g")
    assert result == Grade(score=False, reasoning="tools")
    assert len(fake_openai.requests) == 3


def test_reject_tools(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.reject_tools = True
    with pytest.raises(openai.InternalServerError, match="tools"):
        chat_model(fake_openai).bind_tools([get_weather]).invoke("weather?")
    assert chat_model(fake_openai).invoke("no tools").content == "ok"
    assert [bool(b.get("tools")) for b in fake_openai.chat_requests] == [True, False]


# ---------------------------------------------------------------------------- responder, reset
def test_responder(fake_openai: FakeOpenAIServer) -> None:
    seen: list[dict[str, Any]] = []

    def echo(body: dict[str, Any]) -> Reply | dict[str, Any] | str | None:
        seen.append(body)
        text = body["messages"][-1]["content"]
        if text == "json please":
            return {"json": {"echo": True}}
        if text == "default please":
            return None
        if text == "boom":
            raise RuntimeError("responder exploded")
        return f"echo: {text}"

    fake_openai.set_responder(echo)
    fake_openai.queue_chat("queued wins")
    model = chat_model(fake_openai)
    assert model.invoke("x").content == "queued wins"
    assert model.invoke("hello").content == "echo: hello"
    assert json.loads(str(model.invoke("json please").content)) == {"echo": True}
    assert model.invoke("default please").content == "ok"
    with pytest.raises(openai.InternalServerError, match="responder exploded"):
        model.invoke("boom")
    assert fake_openai.errors == ["RuntimeError: responder exploded"]
    assert len(seen) == 4  # the queued reply never reached the responder
    seen[0]["messages"].clear()  # the responder gets a copy
    assert fake_openai.chat_requests[1]["messages"] != []
    fake_openai.set_responder(None)
    assert model.invoke("hello").content == "ok"


def test_reset_clears_everything(fake_openai: FakeOpenAIServer) -> None:
    with openai_client(fake_openai) as client:
        client.models.list()
    fake_openai.queue_chat("queued")
    fake_openai.set_default_chat("custom")
    fake_openai.set_responder(lambda body: "responder")
    fake_openai.set_embedding("t", [0.0])
    fake_openai.queue_embeddings(status=500)
    fake_openai.latency = 0.5
    fake_openai.reject_tools = True
    fake_openai.reject_response_format = {"json_schema"}
    fake_openai.embedding_dim = 4
    assert len(fake_openai.requests) == 1
    fake_openai.reset()
    assert fake_openai.requests == []
    assert fake_openai.pending_chat == 0
    assert (fake_openai.latency, fake_openai.reject_tools) == (0.0, False)
    assert fake_openai.reject_response_format == set()
    assert len(fake_openai.embedding_for("t")) == 32
    with openai_client(fake_openai) as client:
        resp = client.chat.completions.create(model="gpt-test", messages=MSGS, tools=[_tool("a")])
        emb = client.embeddings.create(model="text-embedding-test", input="t")
    assert resp.choices[0].message.content == "ok"
    assert _norm(emb.data[0].embedding) == pytest.approx(1.0, abs=1e-5)


def test_fixtures_give_a_fresh_server(fake_openai: FakeOpenAIServer, fake_openai_url: str) -> None:
    assert fake_openai_url == fake_openai.base_url
    assert fake_openai_url.startswith("http://127.0.0.1:") and fake_openai_url.endswith("/v1")
    assert fake_openai.requests == [] and fake_openai.latency == 0.0


# ---------------------------------------------------------------------------- streaming
async def test_streaming(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat("streamed reply in pieces")
    fake_openai.queue_chat("lang chain stream")
    with openai_client(fake_openai) as client:
        stream = client.chat.completions.create(
            model="gpt-test", messages=MSGS, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed reply in pieces"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4
    parts = [c.content async for c in chat_model(fake_openai).astream("hi")]
    assert "".join(str(p) for p in parts) == "lang chain stream"


# ---------------------------------------------------------------------------- validation
def test_reply_validation_names_the_parameter(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="`json` cannot be combined"):
        fake_openai.queue_chat("x", json={"a": 1})
    with pytest.raises(ValueError, match="`status`"):
        fake_openai.queue_chat(status=99)
    with pytest.raises(ValueError, match="`delay`"):
        fake_openai.queue_chat("x", delay=-1)
    with pytest.raises(TypeError, match="tool_calls"):
        fake_openai.queue_chat(tool_calls=[{"arguments": {}}])
    with pytest.raises(TypeError, match="tool_calls"):
        fake_openai.queue_chat(tool_calls={"name": "x"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="error `status` 500"):
        fake_openai.queue_chat("x", status=500)
    with pytest.raises(TypeError, match="`json` must be JSON-serialisable"):
        fake_openai.queue_chat(json={"a": object()})
    with pytest.raises(TypeError, match="`vector`"):
        fake_openai.set_embedding("t", ["a"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="`responder`"):
        fake_openai.set_responder("nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`embedding_dim`"):
        FakeOpenAIServer(embedding_dim=0, start=False)
    with pytest.raises(ValueError, match="`dim`"):
        fake_openai.embedding_for("t", dim=0)
    assert fake_openai.pending_chat == 0


def test_scripted_inputs_are_copied(fake_openai: FakeOpenAIServer) -> None:
    payload = {"score": True, "reasoning": "orig"}
    calls = [{"name": "get_weather", "arguments": {"city": "Rome"}}]
    vector = [0.0, 1.0]
    fake_openai.queue_chat(json=payload)
    fake_openai.queue_chat(tool_calls=calls)
    fake_openai.set_embedding("v", vector)
    payload["reasoning"] = "mutated"
    calls[0]["name"] = "mutated"
    calls[0]["arguments"]["city"] = "mutated"  # type: ignore[index]
    calls.append({"name": "extra"})
    vector[0] = 9.0
    assert payload == {"score": True, "reasoning": "mutated"}  # we did not touch the caller's
    with openai_client(fake_openai) as client:
        a = client.chat.completions.create(model="gpt-test", messages=MSGS)
        b = client.chat.completions.create(model="gpt-test", messages=MSGS)
    assert json.loads(a.choices[0].message.content or "")["reasoning"] == "orig"
    assert b.choices[0].message.tool_calls is not None
    (call,) = b.choices[0].message.tool_calls
    assert call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Rome"}
    assert fake_openai.embedding_for("v") == [0.0, 1.0]


@pytest.mark.parametrize(
    "head",
    [
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: many\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    ],
    ids=["bad-chunk-size", "non-numeric-length", "negative-length"],
)
def test_badly_framed_request_gets_400_not_a_dropped_connection(
    fake_openai: FakeOpenAIServer, head: bytes
) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", fake_openai.port), timeout=5) as sock:
        sock.sendall(head)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    status, _, rest = reply.partition(b"\r\n")
    assert status == b"HTTP/1.1 400 Bad Request"
    body = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert body["error"]["type"] == "invalid_request_error"
    assert "malformed request" in body["error"]["message"]
    # The server goes on serving.
    fake_openai.queue_chat("still here")
    client = openai_client(fake_openai)
    reply_text = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply_text.choices[0].message.content == "still here"
