"""The judge's own HTTP path (``openevals._judge.wire``) and the ``post`` path for a caller's client:
the same request as the SDK would send, the SDK's exception classes for every failure, and the SDK
itself wherever its request building does something the lean path does not."""

from __future__ import annotations

import asyncio
import socket
from typing import Any
from unittest import mock

import openai
import pytest

from openevals._judge.backends import _create_is_untouched
from openevals._judge.clients import owned_async_client
from openevals._judge.errors import (
    JudgeServerError,
    JudgeTimeoutError,
    is_transient,
    is_unsupported,
    retry_after_seconds,
)
from openevals._judge.shell import judge_core
from openevals._judge.wire import WireClient, wire_eligible
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import MALFORMED_REPLIES, FakeOpenAIServer, RecordedRequest

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nCorrect?"
PAYLOAD = {"model": "gpt-test", "messages": [{"role": "user", "content": "Is 4 right? é ✓"}]}


def template(server: FakeOpenAIServer, **options: Any) -> openai.AsyncOpenAI:
    options.setdefault("api_key", "sk-test")
    return openai.AsyncOpenAI(base_url=server.base_url, max_retries=0, **options)


async def wire_call(client: WireClient, payload: Any = PAYLOAD) -> Any:
    try:
        return await client.chat(payload)
    finally:
        await client.close()


async def sdk_call(server: FakeOpenAIServer, payload: Any = PAYLOAD) -> Any:
    async with template(server) as sdk:
        return await sdk.post("/chat/completions", body=payload, cast_to=object)


def chat_records(server: FakeOpenAIServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.path.split("?")[0].endswith("/chat/completions")]


# ------------------------------------------------------------------ the request


async def test_sends_what_the_sdk_sends(server: FakeOpenAIServer) -> None:
    options = {
        "organization": "org-1",
        "project": "proj-1",
        "default_headers": {"X-Team": "evals"},
        "default_query": {"tag": "judge"},
    }
    reply = await wire_call(WireClient(template(server, **options), 4))
    async with template(server, **options) as sdk:
        expected = await sdk.post("/chat/completions", body=PAYLOAD, cast_to=object)
    assert reply.pop("id") != expected.pop("id")  # the fake numbers its replies
    reply.pop("created"), expected.pop("created")  # and stamps them with the second
    assert reply == expected and reply["choices"][0]["message"]["content"]
    ours, theirs = chat_records(server)
    assert ours.body == theirs.body == PAYLOAD  # non-ASCII text survives the encoding
    assert ours.path == theirs.path and ours.query == theirs.query == {"tag": ["judge"]}
    for name in ("authorization", "openai-organization", "openai-project", "x-team"):
        assert ours.headers[name] == theirs.headers[name], name
    assert ours.headers["authorization"] == "Bearer sk-test"
    assert ours.headers["content-type"] == "application/json"
    assert "openai-organization" in ours.headers and "user-agent" in ours.headers


async def test_an_unset_organization_sends_no_header(server: FakeOpenAIServer) -> None:
    await wire_call(WireClient(template(server), 2))
    assert "openai-organization" not in chat_records(server)[0].headers


async def test_keeps_its_connections_alive(server: FakeOpenAIServer) -> None:
    client = WireClient(template(server), 3)
    try:
        for _ in range(3):
            await asyncio.gather(*(client.chat(PAYLOAD) for _ in range(3)))
    finally:
        await client.close()
    assert client.is_closed()
    assert len(server.chat_requests) == 9 and server.connections_opened <= 3


@pytest.mark.parametrize("size", [0, -1])
async def test_a_pool_needs_a_connection(server: FakeOpenAIServer, size: int) -> None:
    with pytest.raises(ValueError, match="`size` must be at least 1"):
        WireClient(template(server), size)


# ------------------------------------------------------------------ failures: the SDK's exceptions


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (404, openai.NotFoundError),
        (409, openai.ConflictError),
        (422, openai.UnprocessableEntityError),
        (429, openai.RateLimitError),
        (418, openai.APIStatusError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
async def test_http_errors_raise_what_the_sdk_raises(
    server: FakeOpenAIServer, status: int, cls: type[Exception]
) -> None:
    headers = {"Retry-After": "2", "x-request-id": "req_42"}
    server.queue_chat(status=status, headers=headers)
    server.queue_chat(status=status, headers=headers)
    with pytest.raises(cls) as ours:
        await wire_call(WireClient(template(server), 1))
    with pytest.raises(cls) as theirs:
        await sdk_call(server)
    mine, sdk = ours.value, theirs.value
    assert type(mine) is type(sdk)
    assert str(mine) == str(sdk) and mine.body == sdk.body  # type: ignore[attr-defined]
    assert mine.status_code == status and mine.request_id == "req_42"  # type: ignore[attr-defined]
    assert retry_after_seconds(mine) == retry_after_seconds(sdk) == 2.0
    assert is_transient(mine) == is_transient(sdk) == (status in (409, 429, 500, 503))


async def test_a_non_json_error_body_is_the_message(server: FakeOpenAIServer) -> None:
    for _ in range(2):
        server.queue_chat(status=502, body=b"bad gateway", headers={"Content-Type": "text/plain"})
    with pytest.raises(openai.InternalServerError) as ours:
        await wire_call(WireClient(template(server), 1))
    with pytest.raises(openai.InternalServerError) as theirs:
        await sdk_call(server)
    assert str(ours.value) == str(theirs.value)
    assert ours.value.body == theirs.value.body == "bad gateway"


async def test_a_rejected_response_format_is_recognised(server: FakeOpenAIServer) -> None:
    server.queue_chat(status=400, body={"error": {"message": "json_schema is not supported"}})
    with pytest.raises(openai.BadRequestError) as info:
        await wire_call(WireClient(template(server), 1))
    assert is_unsupported(info.value)
    assert info.value.body == {"message": "json_schema is not supported"}


async def test_a_timeout_is_the_sdks_timeout_error(server: FakeOpenAIServer) -> None:
    server.latency = 2.0
    client = WireClient(template(server, timeout=0.1), 1)
    with pytest.raises(openai.APITimeoutError) as info:
        await wire_call(client)
    assert is_transient(info.value)


async def test_a_refused_connection_is_the_sdks_connection_error() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sdk = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.APIConnectionError) as info:
        await wire_call(WireClient(sdk, 1))
    assert is_transient(info.value) and "Connection error" in str(info.value)


@pytest.mark.parametrize("kind", ["text_body", "html_body"])
async def test_a_text_reply_is_returned_as_text_like_the_sdk(
    server: FakeOpenAIServer, kind: str
) -> None:
    server.queue_chat(**MALFORMED_REPLIES[kind])
    server.queue_chat(**MALFORMED_REPLIES[kind])
    ours = await wire_call(WireClient(template(server), 1))
    assert isinstance(ours, str) and ours == await sdk_call(server)


# ------------------------------------------------------------------ through the judge


async def test_owned_judge_retries_a_rate_limit_then_answers(server: FakeOpenAIServer) -> None:
    server.queue_chat(status=429, headers={"retry-after-ms": "1"})
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    result = await judge(inputs="2+2", outputs="4")
    assert result["score"] is True and len(server.chat_requests) == 2
    assert isinstance(judge_core(judge).backend._loop_client(), WireClient)


async def test_owned_judge_steps_down_when_the_schema_is_rejected(
    server: FakeOpenAIServer,
) -> None:
    server.queue_chat(status=400, body={"error": {"message": "response_format not supported"}})
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    assert (await judge(inputs="2+2", outputs="4"))["score"] is True
    first, second = server.chat_requests
    assert first["response_format"]["type"] == "json_schema"
    assert "tools" in second  # the next rung


async def test_owned_judge_gives_up_with_the_sdks_error(server: FakeOpenAIServer) -> None:
    server.set_default_chat(status=401, body={"error": {"message": "bad key"}})
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    with pytest.raises(openai.AuthenticationError, match="bad key"):
        await judge(inputs="2+2", outputs="4")
    assert len(server.chat_requests) == 1  # not transient: no retry


async def test_owned_judge_timeouts_become_a_judge_timeout_error(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.latency = 2.0
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test", max_retries=1)
    backend = judge_core(judge).backend
    monkeypatch.setattr(
        backend._async_clients,
        "_factory",
        lambda size: WireClient(template(server, timeout=0.1), size),
    )
    with pytest.raises(JudgeTimeoutError) as info:
        await judge(inputs="2+2", outputs="4")
    assert isinstance(info.value.__cause__, openai.APITimeoutError)
    assert len(server.chat_requests) == 2


async def test_owned_judge_reports_an_undecodable_body(server: FakeOpenAIServer) -> None:
    server.set_default_chat(**MALFORMED_REPLIES["not_json"])
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test", max_retries=0)
    with pytest.raises(JudgeServerError, match="not valid JSON"):
        await judge(inputs="2+2", outputs="4")


# ------------------------------------------------------------------ who gets the lean path


def test_only_a_plain_async_client_with_a_static_key_is_eligible(
    server: FakeOpenAIServer,
) -> None:
    assert wire_eligible(template(server))
    azure = openai.AsyncAzureOpenAI(
        api_key="k", api_version="2024-06-01", azure_endpoint=server.url, max_retries=0
    )

    async def key() -> str:
        return "sk-rotated"

    not_eligible = [
        azure,
        openai.OpenAI(api_key="k"),  # sync
        openai.AsyncOpenAI(api_key=key),  # a key provider
        object(),
    ]
    for client in not_eligible:
        assert not wire_eligible(client), type(client).__name__
    copy = owned_async_client(azure, 3)
    assert type(copy) is openai.AsyncAzureOpenAI  # the SDK builds Azure's URLs itself


@pytest.mark.parametrize("use_async", [False, True])
def test_a_callers_untouched_client_posts_the_same_request(
    server: FakeOpenAIServer, use_async: bool
) -> None:
    cls = openai.AsyncOpenAI if use_async else openai.OpenAI
    client: Any = cls(base_url=server.base_url, api_key="k", max_retries=3)
    seen: list[Any] = []
    original = cls.post

    def post(self: Any, path: str, **kwargs: Any) -> Any:
        seen.append(kwargs.get("cast_to"))
        return original(self, path, **kwargs)

    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt=PROMPT, judge=client, model="gpt-test")

    def both() -> Any:
        result = judge(inputs="2+2", outputs="4")
        # The same client and request through create() (a post with the response model).
        return result, client.chat.completions.create(**server.chat_requests[0])

    async def both_async() -> Any:
        result = await judge(inputs="2+2", outputs="4")
        return result, await client.chat.completions.create(**server.chat_requests[0])

    with mock.patch.object(cls, "post", post):
        result, _ = asyncio.run(both_async()) if use_async else both()
    assert result["score"] is True
    assert seen == [object]  # the judge's request: a post (create() posts through its resource)
    ours, theirs = chat_records(server)
    assert ours.body == theirs.body and ours.path == theirs.path
    assert client.max_retries == 3  # the caller's client is untouched


def test_a_patched_or_wrapped_create_is_called_not_bypassed() -> None:
    from langsmith.wrappers import wrap_openai

    assert _create_is_untouched(openai.OpenAI(api_key="k"))
    assert _create_is_untouched(openai.AsyncOpenAI(api_key="k"))
    assert not _create_is_untouched(wrap_openai(openai.OpenAI(api_key="k")))
    client = openai.OpenAI(api_key="k")
    completions = type(client.chat.completions)
    with mock.patch.object(completions, "create"):
        assert not _create_is_untouched(client)

    def replacement(self: Any, **kwargs: Any) -> Any:
        raise AssertionError

    with mock.patch.object(completions, "create", replacement):
        assert not _create_is_untouched(client)
    assert _create_is_untouched(client)


async def test_a_langchain_proxy_setting_keeps_the_sdks_transport(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_PROXY", "http://127.0.0.1:9")  # LangChain's own proxy option
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    client = judge_core(judge).backend._async_clients._factory(2)  # type: ignore[union-attr]
    try:
        assert type(client) is openai.AsyncOpenAI
    finally:
        await client.close()
    monkeypatch.delenv("OPENAI_PROXY")
    judge = create_async_llm_as_judge(prompt=PROMPT, model="openai:gpt-test")
    client = judge_core(judge).backend._async_clients._factory(2)  # type: ignore[union-attr]
    try:
        assert type(client) is WireClient
    finally:
        await client.close()


def test_a_query_the_sdk_would_encode_its_own_way_keeps_the_sdk() -> None:
    assert wire_eligible(openai.AsyncOpenAI(api_key="k", default_query={"v": "1", "n": 2}))
    for value in (True, None, ["a", "b"], {"nested": "x"}):
        client = openai.AsyncOpenAI(api_key="k", default_query={"v": value})
        assert not wire_eligible(client), value


async def test_the_proxy_comes_from_the_environment_like_the_sdk(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    client = WireClient(template(server), 1)
    assert client.proxy is None and not client._session.trust_env  # no lookups per request
    await wire_call(client)
    # An HTTP proxy in the environment: requests go to it (the fake server plays the proxy and
    # receives the absolute URL of a host that does not resolve), unless NO_PROXY names the host.
    monkeypatch.setenv("HTTP_PROXY", server.url)
    sdk = openai.AsyncOpenAI(base_url="http://judge.invalid/v1", api_key="k", max_retries=0)
    client = WireClient(sdk, 1)
    assert client.proxy == server.url
    await wire_call(client)  # the fake answers the proxied request as a chat completion
    assert server.requests[-1].headers["host"] == "judge.invalid"
    monkeypatch.setenv("NO_PROXY", "judge.invalid")
    assert WireClient(sdk, 1).proxy is None
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("NO_PROXY")
    assert not wire_eligible(sdk)  # SOCKS: the SDK's own transport
