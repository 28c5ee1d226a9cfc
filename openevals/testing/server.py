"""A fake OpenAI-compatible HTTP server for tests (yours and ours).

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

import contextlib
import itertools
import math
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from openevals._repr import show
from openevals.testing._endpoints import _Endpoints
from openevals.testing._protocol import (
    _TEST_KEY,
    DEFAULT_MODELS,
    MALFORMED_REPLIES,
    RecordedRequest,
    Reply,
    Responder,
    _check_dim,
    _error_outcome,
    _hash_unit_vector,
    _json_outcome,
    _Outcome,
    _route,
    make_reply,
)

__all__ = ["FakeOpenAIServer", "async_openai_client", "chat_model", "openai_client"]

if TYPE_CHECKING:
    import openai
    from langchain_openai import ChatOpenAI


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
        """The request body; raises ValueError naming what is wrong with its framing."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline()
                try:
                    size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                except ValueError:
                    raise ValueError(f"bad chunk size line {show(size_line)}") from None
                if size < 0:
                    raise ValueError(f"negative chunk size in {show(size_line)}")
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        header = self.headers.get("Content-Length") or "0"
        try:
            length = int(header)
        except ValueError:
            raise ValueError(f"non-numeric Content-Length {show(header)}") from None
        if length < 0:
            raise ValueError(f"negative Content-Length {show(header)}")
        return self.rfile.read(length) if length else b""

    def _bad_request(self, why: str) -> None:
        """Answer 400 (an OpenAI-style error body) and close: the rest of the stream is unframed."""
        error = {"error": {"message": f"malformed request: {why}", "type": "invalid_request_error"}}
        self._reply(_json_outcome(400, error, headers={"Connection": "close"}), None, 0.0)
        self.close_connection = True

    def _handle(self) -> None:
        try:
            raw = self._read_body()
        except ValueError as exc:
            self._bad_request(str(exc))
            return
        fake = self.server.fake
        # In-flight limit (``limit_in_flight``): over it, a chat request gets 429 at once.
        admitted = fake._enter_flight(self.path)
        if admitted is False:
            self._reply(fake._over_limit_outcome(), None, 0.0)
            return
        self._in_flight = bool(admitted)
        try:
            outcome, release = fake._dispatch(self.command, self.path, self.headers.items(), raw)
            self._reply(outcome, release, fake.latency + outcome.delay)
        finally:
            self._leave_flight()

    _in_flight = False

    def _leave_flight(self) -> None:
        """Once per admitted request: when its answer goes out, or when it ends without one."""
        if self._in_flight:
            self._in_flight = False
            self.server.fake._leave_flight()

    def _reply(self, outcome: _Outcome, release: threading.Event | None, wait: float) -> None:
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
        self._leave_flight()  # the client may send its next request as soon as it reads
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


class FakeOpenAIServer(_Endpoints):
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

    def __init__(
        self,
        *,
        embedding_dim: int = 32,
        models: Sequence[str] = DEFAULT_MODELS,
        start: bool = True,
    ) -> None:
        _check_dim(embedding_dim, "embedding_dim")
        if isinstance(models, str) or not all(isinstance(m, str) for m in models):
            raise TypeError(f"`models` must be a sequence of str model ids; got {show(models)}")
        self._initial_embedding_dim = embedding_dim
        self.models: tuple[str, ...] = tuple(models)
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._initial_state()
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
            self._initial_state()
            self.errors.clear()
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
                f"unknown malformed reply kind {show(kind)}; choose one of "
                f"{sorted(MALFORMED_REPLIES)}"
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
            raise TypeError(f"`responder` must be callable or None; got {show(responder)}")
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
            raise TypeError(f"`vector` must be a sequence of finite numbers; got {show(vector)}")
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
    def limit_in_flight(self, limit: int | None, *, retry_after: float | None = 0.05) -> None:
        """Answer chat requests with HTTP 429 while ``limit`` others are being served (``None``
        lifts the limit), like a provider's concurrency limit. ``retry_after`` seconds go out
        as ``Retry-After`` and ``retry-after-ms`` headers (``None``: no hint)."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"`limit` must be an int or None; got {show(limit)}")
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


def openai_client(server: FakeOpenAIServer, **kwargs: Any) -> openai.OpenAI:
    """``openai.OpenAI`` pointed at ``server`` (api_key "test-key" and no retries unless given)."""
    import openai

    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("api_key", _TEST_KEY)
    return openai.OpenAI(base_url=server.base_url, **kwargs)


def async_openai_client(server: FakeOpenAIServer, **kwargs: Any) -> openai.AsyncOpenAI:
    """``openai.AsyncOpenAI`` pointed at ``server`` (api_key "test-key" and no retries unless
    given)."""
    import openai

    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("api_key", _TEST_KEY)
    return openai.AsyncOpenAI(base_url=server.base_url, **kwargs)


def chat_model(server: FakeOpenAIServer, model: str = "gpt-test", **kwargs: Any) -> ChatOpenAI:
    """``langchain_openai.ChatOpenAI`` pointed at ``server`` (no retries unless given)."""
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    kwargs.setdefault("max_retries", 0)
    return ChatOpenAI(base_url=server.base_url, api_key=SecretStr(_TEST_KEY), model=model, **kwargs)
