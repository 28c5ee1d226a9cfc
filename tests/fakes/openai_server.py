"""A fake OpenAI-compatible HTTP server for tests.

It is a real HTTP/1.1 server (stdlib ``ThreadingHTTPServer``, keep-alive, one thread per
connection) bound to ``127.0.0.1`` on a free port, so the official ``openai`` client and
``langchain_openai`` talk to it exactly as they would to the real API. Nothing leaves the machine.

Endpoints: ``POST /v1/chat/completions`` (also ``stream: true``, as server-sent events),
``POST /v1/embeddings``, ``GET /v1/models`` and ``GET /v1/models/{id}``.

Typical use::

    with FakeOpenAIServer() as server:
        server.queue_chat(json={"score": True, "reasoning": "fine"})
        client = openai_client(server)
        ...
        assert server.last_chat_body["model"] == "gpt-test"

Chat replies are chosen per request in this order: the FIFO queue (``queue_chat``), then the
responder (``set_responder``) if it returns something, then the default (``set_default_chat``,
initially the text ``"ok"``). Requests rejected by ``reject_response_format`` / ``reject_tools``
are recorded but do not consume a queued reply. ``MALFORMED_REPLIES`` names status-200 replies
that are not usable chat completions (body not JSON, no choices, no message, ...) for fault tests:
``server.queue_malformed("empty_choices")``.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import itertools
import json as _json
import math
import random
import re
import socket
import socketserver
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    import openai
    from langchain_openai import ChatOpenAI

__all__ = [
    "DEFAULT_MODELS",
    "MALFORMED_REPLIES",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "async_openai_client",
    "chat_model",
    "openai_client",
]

DEFAULT_MODELS: tuple[str, ...] = ("gpt-test", "gpt-test-mini", "text-embedding-test")
_TEST_KEY = "test-key"

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
}
_FORCING_TOOL_CHOICES = frozenset({"required", "any"})
_NON_FORCING_TOOL_CHOICES = frozenset({"auto", "none"})


def _completion_body(**choice: Any) -> dict[str, Any]:
    """A chat-completion body whose only choice is ``choice`` (no choice when it is empty)."""
    return {
        "id": "chatcmpl-malformed",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop", **choice}] if choice else [],
    }


#: Status-200 replies that are not usable chat completions, by name: keyword arguments for
#: ``queue_chat`` / ``set_default_chat`` (or use ``queue_malformed(kind)``).
MALFORMED_REPLIES: dict[str, dict[str, Any]] = {
    "not_json": {"body": b'{"id": "chatcmpl-1", "choices": [{'},
    "empty_body": {"body": b""},
    "html_body": {
        "body": b"<html><body>502 Bad Gateway</body></html>",
        "headers": {"Content-Type": "text/html"},
    },
    "text_body": {"body": b"upstream overloaded", "headers": {"Content-Type": "text/plain"}},
    "json_string": {"body": '"just a string"'},
    "json_list": {"body": [1, 2, 3]},
    "json_number": {"body": b"42"},
    "deep_json_body": {"body": b"[" * 5000 + b"]" * 5000},
    "empty_choices": {"body": _completion_body()},
    "no_choices_key": {"body": {"id": "chatcmpl-2", "object": "chat.completion"}},
    "no_message": {"body": _completion_body(finish_reason="stop")},
    "null_message": {"body": _completion_body(message=None)},
    "string_message": {"body": _completion_body(message="hello")},
    "null_content": {"body": _completion_body(message={"role": "assistant", "content": None})},
    "empty_content": {"body": _completion_body(message={"role": "assistant", "content": ""})},
    "number_content": {"body": _completion_body(message={"role": "assistant", "content": 7})},
}


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as the server received it.

    ``headers`` has lower-case names; ``body`` is the parsed JSON body (``None`` when the body is
    empty or not JSON); ``raw`` the exact bytes; ``time`` a ``time.monotonic()`` stamp taken when
    the request was read, so differences between records measure client-side spacing (retries,
    concurrency).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    time: float
    query: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """A scripted answer to one request. Build it with the keyword arguments of ``queue_chat``.

    Exactly one kind of payload applies: an error (``status`` >= 400, optional ``body``), a raw
    body (``status`` 200 and ``body``), or an assistant message (``content`` and/or
    ``tool_calls``, or ``json``). ``delay`` / ``hang`` / ``headers`` / ``usage`` /
    ``finish_reason`` refine it.
    """

    content: str | None = None
    json: Any = None
    tool_calls: tuple[Mapping[str, Any], ...] | None = None
    status: int = 200
    headers: Mapping[str, str] | None = None
    delay: float = 0.0
    body: bytes | str | Mapping[str, Any] | list[Any] | None = None
    hang: bool = False
    usage: Mapping[str, int] | None = None
    finish_reason: str | None = None
    reset: bool = False  # drop the connection with a TCP reset instead of answering

    def __post_init__(self) -> None:
        if self.content is not None and not isinstance(self.content, str):
            raise TypeError(
                f"Reply `content` must be a str or None; got {type(self.content).__name__}"
            )
        if self.json is not None and (self.content is not None or self.tool_calls is not None):
            raise ValueError(
                "Reply `json` cannot be combined with `content` or `tool_calls`; `json` already "
                "decides whether the answer is text or a tool call"
            )
        if self.tool_calls is not None:
            for i, call in enumerate(self.tool_calls):
                if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                    raise TypeError(
                        f"Reply `tool_calls[{i}]` must be a mapping with a str 'name' and "
                        f"'arguments' (dict or JSON string); got {call!r}"
                    )
                args = call.get("arguments", {})
                if not isinstance(args, (str, Mapping)):
                    raise TypeError(
                        f"Reply `tool_calls[{i}]['arguments']` must be a dict or a str; got "
                        f"{type(args).__name__}"
                    )
        if isinstance(self.status, bool) or not isinstance(self.status, int):
            raise TypeError(f"Reply `status` must be an int HTTP status; got {self.status!r}")
        if not 200 <= self.status <= 599:
            raise ValueError(f"Reply `status` must be between 200 and 599; got {self.status}")
        if isinstance(self.delay, bool) or not isinstance(self.delay, (int, float)):
            raise TypeError(f"Reply `delay` must be a number of seconds; got {self.delay!r}")
        if not (self.delay >= 0 and math.isfinite(self.delay)):
            raise ValueError(f"Reply `delay` must be a finite number >= 0; got {self.delay}")
        if self.body is not None and not isinstance(self.body, (bytes, str, Mapping, list)):
            raise TypeError(
                f"Reply `body` must be bytes, str, dict or list; got {type(self.body).__name__}"
            )
        if self.status >= 400 and (
            self.content is not None or self.json is not None or self.tool_calls is not None
        ):
            raise ValueError(
                f"Reply with error `status` {self.status} cannot carry `content`, `json` or "
                "`tool_calls`; use `body` for the error payload"
            )
        if (
            self.body is not None
            and self.status < 400
            and (self.content is not None or self.json is not None or self.tool_calls is not None)
        ):
            raise ValueError(
                "Reply `body` replaces the whole response; do not combine it with `content`, "
                "`json` or `tool_calls`"
            )


def make_reply(
    content: str | None = None,
    *,
    json: Any = None,
    tool_calls: Iterable[Mapping[str, Any]] | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    delay: float = 0.0,
    body: bytes | str | Mapping[str, Any] | list[Any] | None = None,
    hang: bool = False,
    usage: Mapping[str, int] | None = None,
    finish_reason: str | None = None,
    reset: bool = False,
) -> Reply:
    """Build a validated :class:`Reply`, copying caller-owned containers."""
    if isinstance(tool_calls, (str, bytes, Mapping)):
        raise TypeError(
            "`tool_calls` must be a list of {'name': ..., 'arguments': ...} mappings; got "
            f"{type(tool_calls).__name__}"
        )
    if json is not None:
        try:
            json = _json.loads(_json.dumps(json))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`json` must be JSON-serialisable; got {json!r} ({exc})") from None
    return Reply(
        content=content,
        json=json,
        tool_calls=tuple(copy.deepcopy(list(tool_calls))) if tool_calls is not None else None,
        status=status,
        headers=dict(headers) if headers is not None else None,
        delay=delay,
        body=copy.deepcopy(body),
        hang=hang,
        usage=dict(usage) if usage is not None else None,
        finish_reason=finish_reason,
        reset=reset,
    )


Responder = Callable[[dict[str, Any]], "Reply | Mapping[str, Any] | str | None"]


def _word_count(text: str) -> int:
    return len(text.split())


def _message_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return " ".join(parts)
    return str(content)


def _hash_unit_vector(key: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest(), "big")
    rng = random.Random(seed)
    while True:
        vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        norm = math.sqrt(sum(x * x for x in vec))
        if norm > 1e-12:
            return [x / norm for x in vec]


def _error_payload(status: int, message: str, *, code: str | None = None) -> dict[str, Any]:
    err_type = _ERROR_TYPES.get(
        status, "server_error" if status >= 500 else "invalid_request_error"
    )
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


class _Outcome:
    """What the handler must write: status, headers, body bytes (or nothing if ``hang``)."""

    __slots__ = ("body", "delay", "hang", "headers", "reset", "status")

    def __init__(
        self,
        status: int,
        body: bytes,
        *,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
        hang: bool = False,
        reset: bool = False,
    ) -> None:
        self.reset = reset
        self.status = status
        self.body = body
        self.headers: dict[str, str] = {"Content-Type": "application/json"}
        if headers:
            self.headers.update(headers)
        self.delay = delay
        self.hang = hang


def _json_outcome(status: int, payload: Any, **kw: Any) -> _Outcome:
    return _Outcome(status, _json.dumps(payload).encode("utf-8"), **kw)


def _error_outcome(status: int, message: str, *, code: str | None = None) -> _Outcome:
    return _json_outcome(status, _error_payload(status, message, code=code))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def __init__(self, fake: FakeOpenAIServer) -> None:
        self.fake = fake
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind would call socket.getfqdn(), a reverse DNS lookup that can
        # stall on machines without a resolver; the name is never needed here.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
            self.fake.connections_opened += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def close_all_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
            self._conns.clear()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                conn.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline()
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        raw = self._read_body()
        fake = self.server.fake
        # In-flight limit (``limit_in_flight``): over it, a chat request gets 429 at once.
        admitted = fake._enter_flight(self.path)
        if admitted is False:
            self._reply(fake._over_limit_outcome(), None, 0.0)
            return
        left = [not admitted]

        def leave() -> None:  # once, when the answer goes out (or the request ends without one)
            if not left[0]:
                left[0] = True
                fake._leave_flight()

        try:
            outcome, release = fake._dispatch(self.command, self.path, self.headers.items(), raw)
            self._reply(outcome, release, fake.latency + outcome.delay, leave)
        finally:
            leave()

    def _reply(
        self,
        outcome: _Outcome,
        release: threading.Event | None,
        wait: float,
        answering: Callable[[], None] | None = None,
    ) -> None:
        if wait > 0 and release is not None and release.wait(wait):
            self.close_connection = True
            return
        if outcome.hang and release is not None:
            release.wait()
            self.close_connection = True
            return
        if outcome.reset:  # SO_LINGER 0: closing the socket sends RST, not FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if answering is not None:  # the client may send its next request as soon as it reads
            answering()
        try:
            self.send_response(outcome.status)
            for name, value in outcome.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(outcome.body)))
            self.end_headers()
            self.wfile.write(outcome.body)
        except OSError:
            self.close_connection = True

    do_GET = _handle
    do_POST = _handle
    do_PUT = _handle
    do_DELETE = _handle
    do_PATCH = _handle


class FakeOpenAIServer:
    """Fake OpenAI REST server on ``127.0.0.1:<free port>``; see the module docstring.

    Attributes you may set directly: ``latency`` (seconds added to every request),
    ``reject_response_format`` (set of ``response_format.type`` values answered with HTTP 500),
    ``reject_tools`` (answer requests carrying ``tools`` with HTTP 500), ``embedding_dim``.

    Sampling (``n``) and log-probabilities: a request with ``n`` > 1 gets ``n`` choices, each
    consuming the next reply (queue, responder, default); ``max_choices`` caps that (a server that
    ignores ``n``: set it to 1). A request with ``logprobs: true`` gets ``logprobs.content`` per
    choice (see :meth:`queue_logprobs`) unless ``omit_logprobs`` is set (a server that returns
    none).
    """

    max_choices: int | None = None
    omit_logprobs: bool = False

    def __init__(
        self,
        *,
        embedding_dim: int = 32,
        models: Sequence[str] = DEFAULT_MODELS,
        start: bool = True,
    ) -> None:
        _check_dim(embedding_dim, "embedding_dim")
        if isinstance(models, str) or not all(isinstance(m, str) for m in models):
            raise TypeError(f"`models` must be a sequence of str model ids; got {models!r}")
        self._initial_embedding_dim = embedding_dim
        self.models: tuple[str, ...] = tuple(models)
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._chat_queue: deque[Reply] = deque()
        self._embedding_queue: deque[Reply] = deque()
        self._embedding_overrides: dict[str, list[float]] = {}
        self._responder: Responder | None = None
        self._default_chat = make_reply("ok")
        self._release = threading.Event()
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self.latency: float = 0.0
        self.reject_response_format: set[str] = set()
        self.reject_tools: bool = False
        self.embedding_dim: int = embedding_dim
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._init_flight_counters()
        if start:
            self.start()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeOpenAIServer:
        """Bind a free port and serve in a daemon thread (idempotent)."""
        if self._httpd is not None:
            return self
        self._release = threading.Event()
        self._httpd = _bind_unique(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"fake-openai-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake delayed/hung handlers, close every connection, free the port."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._release.set()
        httpd.shutdown()
        httpd.close_all_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Root URL without the API prefix, e.g. ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to clients: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    def reset(self) -> None:
        """Forget records, queues, scripted embeddings, responder and settings.

        Requests still hanging or delayed from before the reset are released (their connections
        are closed without a reply).
        """
        with self._lock:
            self._requests.clear()
            self._chat_queue.clear()
            self._embedding_queue.clear()
            self._embedding_overrides.clear()
            self._responder = None
            self._default_chat = make_reply("ok")
            self.errors.clear()
            self.latency = 0.0
            self.reject_response_format = set()
            self.reject_tools = False
            self.embedding_dim = self._initial_embedding_dim
            self._reset_sampling()
            self._init_flight_counters()
            old, self._release = self._release, threading.Event()
        old.set()

    # ------------------------------------------------------------------ scripting
    def queue_chat(self, content: str | None = None, **options: Any) -> Reply:
        """Append one reply to the chat FIFO; each chat request consumes one.

        ``options`` are the keyword arguments of :func:`make_reply` (``json``, ``tool_calls``,
        ``status``, ``headers``, ``delay``, ``body``, ``hang``, ``usage``, ``finish_reason``).
        """
        reply = make_reply(content, **options)
        with self._lock:
            self._chat_queue.append(reply)
        return reply

    def queue_malformed(self, kind: str, *, times: int = 1) -> None:
        """Queue ``times`` malformed chat replies of one kind from :data:`MALFORMED_REPLIES`."""
        if kind not in MALFORMED_REPLIES:
            raise ValueError(
                f"unknown malformed reply kind {kind!r}; choose one of {sorted(MALFORMED_REPLIES)}"
            )
        for _ in range(times):
            self.queue_chat(**MALFORMED_REPLIES[kind])

    def set_default_chat(self, content: str | None = None, **options: Any) -> Reply:
        """Set the reply used whenever the queue is empty and no responder answers (``options`` as
        for :meth:`queue_chat`)."""
        reply = make_reply(content, **options)
        with self._lock:
            self._default_chat = reply
        return reply

    def set_responder(self, responder: Responder | None) -> None:
        """Answer chat requests dynamically once the queue is empty.

        ``responder(body)`` gets the parsed request body (a copy) and returns a :class:`Reply`,
        a mapping of ``queue_chat`` keyword arguments, a str (plain text content) or ``None``
        (use the default reply). ``None`` removes the responder. If it raises, the request gets
        HTTP 500 and the exception text is appended to ``server.errors``.
        """
        if responder is not None and not callable(responder):
            raise TypeError(f"`responder` must be callable or None; got {responder!r}")
        with self._lock:
            self._responder = responder

    def queue_embeddings(
        self,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        body: bytes | str | Mapping[str, Any] | list[Any] | None = None,
        delay: float = 0.0,
        hang: bool = False,
        reset: bool = False,
    ) -> Reply:
        """Script the next embeddings request: an error, a raw body, a delay, a hang or a
        connection reset.

        With the defaults (status 200, no body) the request is answered normally after ``delay``.
        """
        reply = make_reply(
            status=status, headers=headers, body=body, delay=delay, hang=hang, reset=reset
        )
        with self._lock:
            self._embedding_queue.append(reply)
        return reply

    def set_embedding(self, text: str, vector: Sequence[float]) -> None:
        """Return exactly ``vector`` whenever ``text`` is embedded (e.g. a zero vector)."""
        if not isinstance(text, str):
            raise TypeError(f"`text` must be a str; got {type(text).__name__}")
        if isinstance(vector, (str, bytes)) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in vector
        ):
            raise TypeError(f"`vector` must be a sequence of finite numbers; got {vector!r}")
        with self._lock:
            self._embedding_overrides[text] = [float(x) for x in vector]

    def embedding_for(self, text: str, *, dim: int | None = None) -> list[float]:
        """The vector the server returns for ``text`` (scripted, else the hashed unit vector)."""
        with self._lock:
            override = self._embedding_overrides.get(text)
            size = self.embedding_dim if dim is None else dim
        _check_dim(size, "dim" if dim is not None else "embedding_dim")
        if override is not None:
            return list(override)
        return _hash_unit_vector(text, size)

    # ------------------------------------------------------------------ records
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since start/reset, in arrival order (a snapshot copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Any]:
        """Parsed bodies of the ``POST /v1/chat/completions`` requests, in arrival order."""
        return [r.body for r in self.requests if _route(r.method, r.path) == "chat"]

    @property
    def embedding_requests(self) -> list[Any]:
        """Parsed bodies of the ``POST /v1/embeddings`` requests, in arrival order."""
        return [r.body for r in self.requests if _route(r.method, r.path) == "embeddings"]

    @property
    def last_chat_body(self) -> Any:
        """Body of the most recent chat-completions request; ``LookupError`` if none came."""
        bodies = self.chat_requests
        if not bodies:
            raise LookupError("the fake OpenAI server has received no chat completion request")
        return bodies[-1]

    @property
    def pending_chat(self) -> int:
        """Number of queued chat replies not consumed yet."""
        with self._lock:
            return len(self._chat_queue)

    def wait_for_requests(self, count: int, *, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests have arrived (``TimeoutError`` otherwise)."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.requests
            if len(records) >= count:
                return records
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"expected {count} request(s) within {timeout}s; got {len(records)}"
                )
            time.sleep(0.005)

    # ------------------------------------------------------------------ in-flight limit
    def _init_flight_counters(self) -> None:
        #: TCP connections accepted since start/reset (keep-alive clients reuse theirs).
        self.connections_opened = 0
        #: Chat requests being served right now, and the most there ever were at once.
        self.in_flight = 0
        self.peak_in_flight = 0
        #: Chat requests answered 429 because ``max_in_flight`` were already being served.
        self.rejected_in_flight = 0
        self.max_in_flight: int | None = None
        self.in_flight_retry_after: float | None = None

    def limit_in_flight(self, limit: int | None, *, retry_after: float | None = 0.05) -> None:
        """Answer chat requests with HTTP 429 while ``limit`` others are being served (``None``
        lifts the limit), like a provider's concurrency limit. ``retry_after`` seconds go out
        as ``Retry-After`` and ``retry-after-ms`` headers (``None``: no hint)."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"`limit` must be an int or None; got {limit!r}")
        if limit is not None and limit < 1:
            raise ValueError(f"`limit` must be >= 1; got {limit}")
        with self._lock:
            self.max_in_flight = limit
            self.in_flight_retry_after = retry_after

    def _enter_flight(self, target: str) -> bool | None:
        """``None`` for requests the limit ignores, ``True`` when admitted, ``False`` when over."""
        if _route("POST", urlsplit(target).path) != "chat":
            return None
        with self._lock:
            if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
                self.rejected_in_flight += 1
                return False
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return True

    def _leave_flight(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _over_limit_outcome(self) -> _Outcome:
        outcome = _error_outcome(
            429, "Too many requests in flight for this key.", code="rate_limit_exceeded"
        )
        after = self.in_flight_retry_after
        if after is not None:
            outcome.headers["Retry-After"] = f"{math.ceil(after)}"
            outcome.headers["retry-after-ms"] = f"{after * 1000:g}"
        return outcome

    # ------------------------------------------------------------------ request handling
    def _dispatch(
        self, method: str, target: str, header_items: Iterable[tuple[str, str]], raw: bytes
    ) -> tuple[_Outcome, threading.Event]:
        split = urlsplit(target)
        path = split.path
        headers: dict[str, str] = {}
        for name, value in header_items:
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = _json.loads(raw)
            except ValueError:
                bad_json = True
        record = RecordedRequest(
            method=method,
            path=path,
            headers=headers,
            body=body,
            raw=raw,
            time=time.monotonic(),
            query=parse_qs(split.query),
        )
        with self._lock:
            self._requests.append(record)
            release = self._release
        try:
            outcome = self._route_request(method, path, body, bad_json)
        except Exception as exc:  # a bug in a responder or here: report it, never hang
            message = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self.errors.append(message)
            outcome = _error_outcome(500, f"fake server error: {message}")
        outcome.headers.setdefault("x-request-id", f"req_fake_{next(self._ids)}")
        return outcome, release

    def _route_request(self, method: str, path: str, body: Any, bad_json: bool) -> _Outcome:
        route = _route(method, path)
        if route is None:
            return _error_outcome(
                404,
                f"Unknown endpoint {method} {path}. The fake serves POST /v1/chat/completions, "
                "POST /v1/embeddings, GET /v1/models and GET /v1/models/{id}.",
                code="unknown_url",
            )
        if route == "models":
            return _json_outcome(
                200, {"object": "list", "data": [self._model_obj(m) for m in self.models]}
            )
        if route == "model":
            model_id = path.rsplit("/", 1)[-1]
            if model_id not in self.models:
                return _error_outcome(
                    404, f"The model '{model_id}' does not exist", code="model_not_found"
                )
            return _json_outcome(200, self._model_obj(model_id))
        if bad_json or not isinstance(body, dict):
            return _error_outcome(400, "Request body must be a JSON object.")
        if route == "chat":
            return self._chat(body)
        return self._embeddings(body)

    @staticmethod
    def _model_obj(model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": 1700000000, "owned_by": "fake"}

    def _chat(self, body: dict[str, Any]) -> _Outcome:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error_outcome(400, "'messages' must be a non-empty array.")
        if not isinstance(body.get("model"), str):
            return _error_outcome(400, "'model' must be a string.")
        fmt = body.get("response_format")
        fmt_type = fmt.get("type") if isinstance(fmt, Mapping) else None
        with self._lock:
            rejected_formats = set(self.reject_response_format)
            reject_tools = self.reject_tools
        if fmt_type is not None and fmt_type in rejected_formats:
            return _error_outcome(
                500,
                f"response_format type '{fmt_type}' is not supported by this server: failed to "
                "validate the request against a JSON schema grammar",
                code="unsupported_response_format",
            )
        if reject_tools and body.get("tools"):
            return _error_outcome(
                500,
                "tools are not supported by this server: failed to validate the request",
                code="unsupported_tools",
            )
        reply = self._next_chat_reply(body)
        if reply.reset:
            return _Outcome(200, b"", reset=True)
        if reply.hang:
            return _Outcome(200, b"", hang=True)
        if reply.status >= 400 or reply.body is not None:
            return _raw_outcome(reply)
        try:
            message, finish = self._assistant_message(reply, body)
        except _AmbiguousToolError as exc:
            return _error_outcome(500, str(exc))
        prompt_tokens = sum(
            _word_count(_message_text(m.get("content"))) for m in messages if isinstance(m, Mapping)
        )
        completion_tokens = _word_count(message.get("content") or "") + sum(
            _word_count(tc["function"]["arguments"]) for tc in message.get("tool_calls", [])
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if reply.usage:
            usage.update(reply.usage)
            if "total_tokens" not in reply.usage:
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        completion_id = f"chatcmpl-fake{next(self._ids)}"
        created = int(time.time())
        if body.get("stream"):
            return self._stream_outcome(completion_id, created, body, message, finish, usage, reply)
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": body["model"],
            "system_fingerprint": "fp_fake",
            "choices": self._choices(body, message, finish, usage),
            "usage": usage,
        }
        return _json_outcome(200, payload, headers=reply.headers, delay=reply.delay)

    # ------------------------------------------------------------------ n and logprobs
    def queue_logprobs(self, alternatives: Mapping[str, float]) -> None:
        """Script the token probabilities of the next choice that asks for ``logprobs``.

        ``alternatives`` maps token texts (e.g. ``{"true": 0.8, "false": 0.2}``) to probabilities.
        In that choice, the last token whose text (stripped) is one of the keys gets them as its
        ``top_logprobs`` (keeping the token's leading whitespace) and its own probability as its
        ``logprob``. Every other token, and every choice without a scripted entry, has logprob
        0.0 and itself as its only alternative.
        """
        if not isinstance(alternatives, Mapping) or not alternatives:
            raise TypeError("`alternatives` must be a non-empty mapping of token -> probability")
        for token, p in alternatives.items():
            if not isinstance(token, str) or not isinstance(p, (int, float)) or not 0 < p <= 1:
                raise ValueError(f"bad alternative {token!r}: {p!r}; probabilities are in (0, 1]")
        with self._lock:
            self._logprob_queue().append(dict(alternatives))

    def _logprob_queue(self) -> deque[dict[str, float]]:
        queue: deque[dict[str, float]] | None = getattr(self, "_logprobs_scripts", None)
        if queue is None:
            queue = self._logprobs_scripts = deque()
        return queue

    def _reset_sampling(self) -> None:
        self._logprob_queue().clear()
        self.max_choices = None
        self.omit_logprobs = False

    def _choices(
        self, body: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, int]
    ) -> list[dict[str, Any]]:
        """The ``choices`` of a completion: the first reply's message, then one per extra ``n``."""
        n = body.get("n")
        count = n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1
        if self.max_choices is not None:
            count = max(1, min(count, self.max_choices))
        choices = [(message, finish)]
        while len(choices) < count:
            reply = self._next_chat_reply(body)
            if reply.status >= 400 or reply.body is not None or reply.hang:
                continue  # errors and raw bodies answer whole requests, not one choice
            extra, extra_finish = self._assistant_message(reply, body)
            usage["completion_tokens"] += _word_count(extra.get("content") or "")
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            choices.append((extra, extra_finish))
        return [
            {
                "index": i,
                "message": m,
                "logprobs": self._logprobs(body, m),
                "finish_reason": f,
            }
            for i, (m, f) in enumerate(choices)
        ]

    def _logprobs(self, body: dict[str, Any], message: dict[str, Any]) -> Any:
        if not body.get("logprobs") or self.omit_logprobs:
            return None
        content = message.get("content")
        if not isinstance(content, str) or not content:
            return {"content": None}  # tool calls carry no token log-probabilities
        with self._lock:
            queue = self._logprob_queue()
            script = queue.popleft() if queue else None
        tokens = re.findall(r"\s*[A-Za-z_]+|\s*\d+|\s*[^\sA-Za-z_\d]|\s+", content)
        entries = [
            {"token": t, "logprob": 0.0, "bytes": list(t.encode()), "top_logprobs": []}
            for t in tokens
        ]
        for entry in entries:
            entry["top_logprobs"] = [
                {"token": entry["token"], "logprob": 0.0, "bytes": entry["bytes"]}
            ]
        if script:
            hits = [i for i, t in enumerate(tokens) if t.strip() in script]
            if hits:
                entry = entries[hits[-1]]
                space = entry["token"][: len(entry["token"]) - len(entry["token"].lstrip())]
                entry["logprob"] = math.log(script[entry["token"].strip()])
                entry["top_logprobs"] = [
                    {
                        "token": space + t,
                        "logprob": math.log(p),
                        "bytes": list((space + t).encode()),
                    }
                    for t, p in sorted(script.items(), key=lambda kv: -kv[1])
                ]
        return {"content": entries, "refusal": None}

    def _next_chat_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._chat_queue:
                return self._chat_queue.popleft()
            responder = self._responder
            default = self._default_chat
        if responder is not None:
            answer = responder(_json.loads(_json.dumps(body)))
            if isinstance(answer, Reply):
                return answer
            if isinstance(answer, str):
                return make_reply(answer)
            if isinstance(answer, Mapping):
                return make_reply(**answer)
            if answer is not None:
                raise TypeError(
                    "responder must return a Reply, a mapping of queue_chat arguments, a str or "
                    f"None; got {type(answer).__name__}"
                )
        return default

    def _assistant_message(self, reply: Reply, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        calls: list[dict[str, Any]] = []
        content: str | None = reply.content
        if reply.json is not None:
            target = _forced_tool(body)
            if target is None:
                content = _json.dumps(reply.json)
            else:
                calls.append(self._tool_call({"name": target, "arguments": reply.json}))
        for call in reply.tool_calls or ():
            calls.append(self._tool_call(call))
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        elif content is None:
            message["content"] = ""
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        return message, finish

    def _tool_call(self, call: Mapping[str, Any]) -> dict[str, Any]:
        args = call.get("arguments", {})
        return {
            "id": call.get("id") or f"call_fake{next(self._ids)}",
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": args if isinstance(args, str) else _json.dumps(args),
            },
        }

    def _stream_outcome(
        self,
        completion_id: str,
        created: int,
        body: dict[str, Any],
        message: dict[str, Any],
        finish: str,
        usage: dict[str, int],
        reply: Reply,
    ) -> _Outcome:
        base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": body["model"],
            "system_fingerprint": "fp_fake",
        }

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        for piece in re.findall(r"\s*\S+\s*|\s+", message.get("content") or ""):
            events.append(chunk({"content": piece}))
        for index, call in enumerate(message.get("tool_calls", [])):
            events.append(chunk({"tool_calls": [{"index": index, **call}]}))
        events.append(chunk({}, finish))
        options = body.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage"):
            events.append({**base, "choices": [], "usage": usage})
        data = "".join(f"data: {_json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        merged = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if reply.headers:
            merged.update(reply.headers)
        return _Outcome(200, data.encode("utf-8"), headers=merged, delay=reply.delay)

    def _embeddings(self, body: dict[str, Any]) -> _Outcome:
        with self._lock:
            scripted = self._embedding_queue.popleft() if self._embedding_queue else None
        if scripted is not None:
            if scripted.reset:
                return _Outcome(200, b"", reset=True)
            if scripted.hang:
                return _Outcome(200, b"", hang=True)
            if scripted.status >= 400 or scripted.body is not None:
                return _raw_outcome(scripted)
        texts = _embedding_inputs(body.get("input"))
        if isinstance(texts, str):
            return _error_outcome(400, texts)
        if not isinstance(body.get("model"), str):
            return _error_outcome(400, "'model' must be a string.")
        dim = body.get("dimensions", self.embedding_dim)
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            return _error_outcome(400, f"'dimensions' must be a positive integer; got {dim!r}")
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            return _error_outcome(
                400, f"'encoding_format' must be 'float' or 'base64'; got {fmt!r}"
            )
        data = []
        for index, text in enumerate(texts):
            vec = self.embedding_for(text, dim=dim)
            encoded: Any = vec
            if fmt == "base64":
                encoded = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(max(1, _word_count(t)) for t in texts)
        payload = {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        if scripted is not None:
            return _json_outcome(200, payload, headers=scripted.headers, delay=scripted.delay)
        return _json_outcome(200, payload)


_used_ports: set[int] = set()
_used_ports_lock = threading.Lock()


def _bind_unique(fake: FakeOpenAIServer) -> _HTTPServer:
    """Bind a port this process has never served on before.

    langchain-openai caches its httpx clients per ``base_url`` for the whole process; an async
    client cached by an earlier test holds connections tied to that test's (closed) event loop.
    A never-reused port gives every server a new ``base_url`` and so a fresh client.
    """
    rejected: list[_HTTPServer] = []
    try:
        while True:
            httpd = _HTTPServer(fake)
            port = int(httpd.server_address[1])
            with _used_ports_lock:
                if port not in _used_ports:
                    _used_ports.add(port)
                    return httpd
            rejected.append(httpd)
    finally:
        for extra in rejected:
            extra.server_close()


def _route(method: str, path: str) -> str | None:
    if method == "POST" and path == "/v1/chat/completions":
        return "chat"
    if method == "POST" and path == "/v1/embeddings":
        return "embeddings"
    if method == "GET" and path == "/v1/models":
        return "models"
    if method == "GET" and path.startswith("/v1/models/") and path.count("/") == 3:
        return "model"
    return None


def _raw_outcome(reply: Reply) -> _Outcome:
    raw = reply.body
    if raw is None:
        raw = _error_payload(
            reply.status,
            f"Scripted error {reply.status} from the fake OpenAI server.",
            code="rate_limit_exceeded" if reply.status == 429 else None,
        )
    if isinstance(raw, bytes):
        data = raw
    elif isinstance(raw, str):
        data = raw.encode("utf-8")
    else:
        data = _json.dumps(raw).encode("utf-8")
    return _Outcome(reply.status, data, headers=reply.headers, delay=reply.delay)


def _tool_names(body: Mapping[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or ():
        if isinstance(tool, Mapping):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
            if isinstance(name, str):
                names.append(name)
    return names


class _AmbiguousToolError(Exception):
    """A ``json=`` reply met a request that forces "some tool" among several."""


def _forced_tool(body: Mapping[str, Any]) -> str | None:
    """Name of the tool a ``json=`` reply must call, ``None`` for a text answer."""
    names = _tool_names(body)
    if not names:
        return None
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else choice.get("name")
        if isinstance(name, str):
            return name
        choice = choice.get("type")
    if isinstance(choice, str) and choice in _FORCING_TOOL_CHOICES:
        if len(names) == 1:
            return names[0]
        raise _AmbiguousToolError(
            f"fake server cannot answer a json= reply: tool_choice {choice!r} with "
            f"{len(names)} tools {names}; script the call explicitly with tool_calls="
        )
    if isinstance(choice, str) and choice not in _NON_FORCING_TOOL_CHOICES and choice in names:
        return choice
    return None


def _embedding_inputs(value: Any) -> list[str] | str:
    """Normalise the ``input`` field to a list of keys; a str result is an error message."""

    def tokens_key(ids: list[Any]) -> str | None:
        if ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return "tokens:" + ",".join(str(i) for i in ids)
        return None

    if isinstance(value, str):
        return [value] if value else "'input' cannot be an empty string."
    if isinstance(value, list) and value:
        if all(isinstance(v, str) for v in value):
            if any(v == "" for v in value):
                return "'input' cannot contain empty strings."
            return list(value)
        single = tokens_key(value)
        if single is not None:
            return [single]
        keys = [tokens_key(v) if isinstance(v, list) else None for v in value]
        if all(k is not None for k in keys):
            return [k for k in keys if k is not None]
    return (
        "'input' must be a non-empty string, a list of strings, a list of token ids or a list of "
        f"token-id lists; got {value!r}"
    )


def _check_dim(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive int; got {value!r}")


# ---------------------------------------------------------------------- client helpers
def openai_client(server: FakeOpenAIServer, **kwargs: Any) -> openai.OpenAI:
    """``openai.OpenAI`` pointed at ``server`` (api_key "test-key", no retries unless given)."""
    import openai

    kwargs.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.base_url, api_key=_TEST_KEY, **kwargs)


def async_openai_client(server: FakeOpenAIServer, **kwargs: Any) -> openai.AsyncOpenAI:
    """``openai.AsyncOpenAI`` pointed at ``server`` (api_key "test-key", no retries unless given)."""
    import openai

    kwargs.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(base_url=server.base_url, api_key=_TEST_KEY, **kwargs)


def chat_model(server: FakeOpenAIServer, model: str = "gpt-test", **kwargs: Any) -> ChatOpenAI:
    """``langchain_openai.ChatOpenAI`` pointed at ``server`` (no retries unless given)."""
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    kwargs.setdefault("max_retries", 0)
    return ChatOpenAI(base_url=server.base_url, api_key=SecretStr(_TEST_KEY), model=model, **kwargs)
