"""Every judge request is the OpenAI SDK's own ``chat.completions.create``: the same request the
SDK sends by itself, the SDK's exception classes with ``Retry-After`` honoured, the judge's
``timeout=`` on a server that never answers, and HTTPS through the SDK's public ``http_client``.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import socketserver
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from openevals._judge.core import RetryPolicy
from openevals._judge.errors import JudgeTimeoutError, is_transient, retry_after_seconds
from openevals._judge.shell import judge_core
from openevals.llm import JudgeConnectionError, create_async_llm_as_judge, create_llm_as_judge
from openevals.testing import FakeOpenAIServer, RecordedRequest

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nCorrect? é ✓"
# Headers that differ from one request to the next by design.
VOLATILE = {"content-length", "x-stainless-retry-count", "x-stainless-read-timeout"}


def chat_records(server: FakeOpenAIServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.path.split("?")[0].endswith("/chat/completions")]


def _judge(use_async: bool, **options: Any) -> Any:
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    return factory(prompt=PROMPT, **options)


def _run(evaluator: Any, **kwargs: Any) -> Any:
    out = evaluator(inputs="2+2", outputs="4", **kwargs)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


def _sdk_create(use_async: bool, body: dict[str, Any], **client: Any) -> Any:
    """The same request, made by the SDK on its own (the judge's body as create() arguments)."""
    if use_async:

        async def call() -> Any:
            async with openai.AsyncOpenAI(max_retries=0, **client) as sdk:
                return await sdk.chat.completions.create(**body)

        return asyncio.run(call())
    with openai.OpenAI(max_retries=0, **client) as sdk:
        return sdk.chat.completions.create(**body)


# ------------------------------------------------------------------ the request


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("owned", [True, False], ids=["model_string", "callers_client"])
def test_the_judge_sends_what_the_sdks_create_sends(
    server: FakeOpenAIServer, use_async: bool, owned: bool
) -> None:
    client_options = {"base_url": server.base_url, "api_key": "test-key"}
    if owned:
        judge = _judge(use_async, model="openai:gpt-test")
    else:
        cls = openai.AsyncOpenAI if use_async else openai.OpenAI
        judge = _judge(use_async, judge=cls(max_retries=0, **client_options), model="gpt-test")
    assert _run(judge)["score"] is True
    _sdk_create(use_async, server.chat_requests[0], **client_options)
    ours, theirs = chat_records(server)
    assert ours.raw == theirs.raw  # byte for byte, non-ASCII text included
    assert ours.path == theirs.path and ours.query == theirs.query
    for name in ("authorization", "content-type", "accept", "x-stainless-async"):
        assert ours.headers.get(name) == theirs.headers.get(name), name
    # The SDK's per-request headers are there (a hand-made transport used to drop them).
    assert ours.headers["x-stainless-retry-count"] == "0"
    if not owned:  # a caller's client: every header is the SDK's own
        assert {k: v for k, v in ours.headers.items() if k not in VOLATILE} == {
            k: v for k, v in theirs.headers.items() if k not in VOLATILE
        }


# ------------------------------------------------------------------ failures: the SDK's own


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (404, openai.NotFoundError),
        (422, openai.UnprocessableEntityError),
        (429, openai.RateLimitError),
        (418, openai.APIStatusError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
@pytest.mark.parametrize("use_async", [False, True])
def test_http_errors_are_the_sdks_exceptions(
    server: FakeOpenAIServer, use_async: bool, status: int, cls: type[Exception]
) -> None:
    server.set_default_chat(status=status, headers={"x-request-id": "req_42"})
    judge = _judge(use_async, model="openai:gpt-test", max_retries=0)
    with pytest.raises(cls) as info:
        _run(judge)
    error = info.value
    assert type(error) is cls and error.status_code == status  # type: ignore[attr-defined]
    assert error.request_id == "req_42"  # type: ignore[attr-defined]
    assert is_transient(error) == (status in (429, 500, 503))


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("owned", [True, False], ids=["model_string", "callers_client"])
def test_retry_after_is_honoured(server: FakeOpenAIServer, use_async: bool, owned: bool) -> None:
    server.queue_chat(status=429, headers={"Retry-After": "0.3"})
    if owned:
        judge = _judge(use_async, model="openai:gpt-test")
    else:
        cls = openai.AsyncOpenAI if use_async else openai.OpenAI
        client = cls(base_url=server.base_url, api_key="k", max_retries=0)
        judge = _judge(use_async, judge=client, model="gpt-test")
    # Without the server's hint the judge would wait at most a millisecond.
    judge_core(judge).retry = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=5.0)
    assert _run(judge)["score"] is True
    first, second = chat_records(server)
    assert second.time - first.time >= 0.28


def test_retry_after_is_read_from_the_sdks_error(server: FakeOpenAIServer) -> None:
    server.queue_chat(status=429, headers={"Retry-After": "2"})
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "x"}]
        )
    assert retry_after_seconds(info.value) == 2.0


# ------------------------------------------------------------------ timeout=


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("owned", [True, False], ids=["model_string", "callers_client"])
def test_a_server_that_never_answers_is_a_judge_timeout(
    server: FakeOpenAIServer, use_async: bool, owned: bool
) -> None:
    server.set_default_chat(hang=True)
    if owned:
        judge = _judge(use_async, model="openai:gpt-test", timeout=0.3, max_retries=0)
    else:
        cls = openai.AsyncOpenAI if use_async else openai.OpenAI
        client = cls(base_url=server.base_url, api_key="k", max_retries=0)  # 600 s of its own
        judge = _judge(use_async, judge=client, model="gpt-test", timeout=0.3, max_retries=0)
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError) as info:
        _run(judge)
    assert time.monotonic() - started < 2.0
    assert info.value.timeout == 0.3 and info.value.attempts == 1
    assert isinstance(info.value.__cause__, openai.APITimeoutError)
    assert "0.3 s" in str(info.value)


def test_timeout_is_checked_at_creation() -> None:
    for bad, error in ((0, ValueError), (-1, ValueError), (float("inf"), ValueError)):
        with pytest.raises(error, match="`timeout` must be a finite number of seconds > 0"):
            create_llm_as_judge(prompt=PROMPT, model="openai:gpt-test", timeout=bad)
    for wrong in ("30", True, [1]):
        with pytest.raises(TypeError, match="`timeout` must be a number of seconds"):
            create_llm_as_judge(prompt=PROMPT, model="openai:gpt-test", timeout=wrong)  # type: ignore[arg-type]


def test_a_langchain_judge_keeps_its_own_timeout(server: FakeOpenAIServer) -> None:
    from openevals.testing import chat_model

    with pytest.raises(ValueError, match=r"set it on the model \(e.g. ChatOpenAI\(timeout="):
        create_llm_as_judge(prompt=PROMPT, judge=chat_model(server), timeout=5)


# ------------------------------------------------------------------ HTTPS


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = [
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", str(key), "-out", str(cert),
    ]  # fmt: skip
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as exc:  # pragma: no cover
        pytest.skip(f"openssl cannot make a test certificate here: {exc}")
    return cert, key


@contextlib.contextmanager
def tls_front(server: FakeOpenAIServer, cert: Path, key: Path) -> Iterator[str]:
    """A TLS endpoint on 127.0.0.1 that forwards each connection to the plain fake server."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    class Pipe(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                outer = context.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                return  # a client that refused our certificate
            with outer, socket.create_connection(("127.0.0.1", server.port)) as inner:
                ends = {outer: inner, inner: outer}
                while True:
                    ready = [outer] if outer.pending() else []
                    ready = ready or select.select(list(ends), [], [], 5)[0]
                    if not ready:
                        return
                    for sock in ready:
                        data = sock.recv(65536)
                        if not data:
                            return
                        ends[sock].sendall(data)

    front = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Pipe)
    front.daemon_threads = True
    thread = threading.Thread(target=front.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{front.server_address[1]}/v1"
    finally:
        front.shutdown()
        front.server_close()


@pytest.mark.parametrize("use_async", [False, True])
def test_https_with_the_callers_trust_store(
    server: FakeOpenAIServer, certificate: tuple[Path, Path], use_async: bool
) -> None:
    cert, key = certificate
    trusted = ssl.create_default_context(cafile=str(cert))
    with tls_front(server, cert, key) as url:
        if use_async:
            http: Any = openai.DefaultAioHttpClient(verify=trusted)
            client: Any = openai.AsyncOpenAI(
                base_url=url, api_key="k", max_retries=0, http_client=http
            )
        else:
            http = openai.DefaultHttpxClient(verify=trusted)
            client = openai.OpenAI(base_url=url, api_key="k", max_retries=0, http_client=http)
        judge = _judge(use_async, judge=client, model="gpt-test", max_retries=0)
        if use_async:

            async def judged() -> Any:
                async with client:
                    return await judge(inputs="2+2", outputs="4")

            assert asyncio.run(judged())["score"] is True
        else:
            assert _run(judge)["score"] is True
        assert len(server.chat_requests) == 1
        # The default trust store does not know the certificate: the SDK refuses the server.
        cls = openai.AsyncOpenAI if use_async else openai.OpenAI
        untrusting = cls(base_url=url, api_key="k", max_retries=0)
        judge = _judge(use_async, judge=untrusting, model="gpt-test", max_retries=0)
        # (a refused connection is the judge's one documented connection error, issue 35)
        with pytest.raises(JudgeConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            _run(judge)
        assert len(server.chat_requests) == 1


# ------------------------------------------------------------------ no private SDK internals

# Private names of the OpenAI SDK's clients, responses and transports that a hand-made transport
# or a request shortcut would need (the judge used to read several of them).
PRIVATE_SDK_NAMES = (
    "_make_status_error_from_response",
    "_make_status_error",
    "_api_key_provider",
    "_provider",
    "_client",
    "_post",
    "_build_request",
    "_build_headers",
    "_custom_auth",
    "_platform",
    "_options",
    "_strict_response_validation",
    "_process_response",
    "_should_retry",
    "_idempotency_header",
)


def private_sdk_uses(source: str) -> list[str]:
    """Uses of a private SDK name in ``source``: ``obj._name`` (an object's own ``self._name``
    aside) or ``getattr(obj, "_name")``-style strings."""
    import re

    names = "|".join(PRIVATE_SDK_NAMES)
    attribute = re.compile(rf"(?<![\w])(?!self\.)[\w\]\)]+\.({names})\b")
    quoted = re.compile(rf"[\"']({names})[\"']")
    return [m.group(0) for pattern in (attribute, quoted) for m in pattern.finditer(source)]


def test_the_package_reads_no_private_sdk_attribute() -> None:
    package = Path(__file__).resolve().parents[2] / "openevals"
    found = {
        str(path.relative_to(package)): uses
        for path in sorted(package.rglob("*.py"))
        if (uses := private_sdk_uses(path.read_text(encoding="utf-8")))
    }
    assert found == {}
    assert not (package / "_judge" / "wire.py").exists()


def test_the_private_name_check_finds_what_it_looks_for() -> None:
    bad = (
        "errors = template._make_status_error_from_response\n"
        'getattr(client, "_api_key_provider", None)\n'
        "transport = client._client\n"
    )
    assert private_sdk_uses(bad) == [
        "template._make_status_error_from_response",
        "client._client",
        '"_api_key_provider"',
    ]
    assert private_sdk_uses("self._client = None\nreturn self._provider\n") == []
