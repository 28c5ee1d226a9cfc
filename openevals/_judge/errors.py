"""What can go wrong when a judge talks to a model, and how each failure is classified.

Every error the judge raises about the *judge* (rather than about the caller's arguments, which get
``TypeError``/``ValueError`` naming the parameter) derives from :class:`JudgeError`:

* :class:`JudgeOutputError` - the model answered, but the answer could not be used (no JSON object,
  wrong fields, over the size cap), even after one repair request;
* :class:`JudgeServerError` - the server's reply was not a usable chat completion (body not JSON,
  no ``choices``, no message, no content and no tool call, a bare string); retried like a 5xx;
* :class:`JudgeTimeoutError` - every attempt ran past the client's timeout; carries that timeout;
* :class:`JudgeConnectionError` - every attempt lost its connection before an answer arrived (the
  server reset or closed it, or refused it).

The helpers below decide whether a failure is worth retrying (:func:`is_transient`) or means the
server rejected the way structure was requested (:func:`is_unsupported`).
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

from openevals._repr import show

_SNIPPET = 500


def snippet(text: Any, limit: int = _SNIPPET) -> str:
    """``repr`` of the first ``limit`` characters of ``text`` (with a note of the full length)."""
    if not isinstance(text, str):  # shown bounded, whatever its depth or size
        return repr(show(text, limit))
    value = text
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value):,} characters in all)"


class JudgeError(Exception):
    """Base class of the errors a judge raises when the model or its server fails it."""


class JudgeLogprobsError(JudgeError, ValueError):
    """``score_weighting="logprobs"`` was asked for, but the model's reply has no usable token
    log-probabilities (the provider does not return them, or not for the score token)."""


class JudgeOutputError(JudgeError, ValueError):
    """The judge's answer could not be used, even after a repair attempt.

    ``raw`` holds the model's last raw answer text (the message shows a truncated copy).
    """

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class JudgeServerError(JudgeError, RuntimeError):
    """The model server sent a reply that is not a usable chat completion.

    ``reason`` says what was wrong, ``body`` holds a truncated copy of what arrived, and
    ``attempts`` how many requests were made before giving up (the judge retries these replies
    like a 5xx error, up to ``max_retries`` times).
    """

    def __init__(self, reason: str, *, body: Any = None, attempts: int = 1) -> None:
        self.reason = reason
        self.body = None if body is None else snippet(body)  # a repr, truncated
        self.attempts = attempts
        super().__init__(self._text())

    def _text(self) -> str:
        tries = f" (after {self.attempts} attempts)" if self.attempts > 1 else ""
        shown = f" Received: {self.body}" if self.body is not None else ""
        return (
            f"the model server sent a malformed reply{tries}: {self.reason}. This is a fault of "
            f"the server or of a proxy in front of it, not of the evaluated data.{shown}"
        )

    def with_attempts(self, attempts: int) -> JudgeServerError:
        """A copy that reports ``attempts`` requests (raised when the retries are used up)."""
        error = copy.copy(self)
        error.attempts = attempts
        error.args = (error._text(),)
        return error


class JudgeTimeoutError(JudgeError, TimeoutError):
    """Every attempt to reach the model ran past the client's timeout.

    ``timeout`` is the timeout in seconds the client was configured with (``None`` when unknown)
    and ``attempts`` the number of requests made. The original error is the ``__cause__``.
    """

    def __init__(self, *, timeout: float | None, attempts: int, model: str | None) -> None:
        self.timeout = timeout
        self.attempts = attempts
        self.model = model
        limit = f"{timeout:g} s" if timeout is not None else "the client's"
        who = f" {show(model)}" if model else ""
        super().__init__(
            f"the judge model{who} did not answer within the timeout ({limit}) in {attempts} "
            f"attempt{'s' if attempts != 1 else ''}; raise the timeout on your client (e.g. "
            "OpenAI(timeout=...) or ChatOpenAI(timeout=...)), or check the server"
        )


class JudgeConnectionError(JudgeError, ConnectionError):
    """Every attempt to reach the model lost its connection before an answer arrived: the
    server (or a proxy in front of it) reset or closed the connection, or refused it.

    ``attempts`` is the number of requests made, ``model`` the model name and ``reason`` what
    the client library reported last. The client's own error is the ``__cause__``.
    """

    def __init__(self, *, reason: str, attempts: int, model: str | None) -> None:
        self.reason = reason
        self.attempts = attempts
        self.model = model
        who = f" {show(model)}" if model else ""
        super().__init__(
            f"could not reach the judge model{who}: the connection was refused, reset or closed "
            f"before an answer, in {attempts} attempt{'s' if attempts != 1 else ''} ({reason}); "
            "check that the server at the client's base URL is running and reachable (a proxy "
            "in front of it may be closing connections)"
        )


# How far an error's explicit causes (``raise ... from ...``) are followed.
_CAUSE_DEPTH = 16
_TIMEOUT_NAME = "Timeout"
# Names of client-library errors about a connection that went away or never opened (httpx's
# ConnectError and RemoteProtocolError, aiohttp's ServerDisconnectedError and
# ClientConnectionError, requests' ConnectionError); OSError's ConnectionError is checked by type.
_CONNECTION_NAMES = ("ConnectError", "ConnectionError", "RemoteProtocolError", "Disconnected")


def _kind(exc: BaseException) -> str | None:
    """``"timeout"``, ``"connection"`` or None, from one error's own class."""
    names = [cls.__name__ for cls in type(exc).__mro__]
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) or any(
        _TIMEOUT_NAME in name for name in names
    ):
        return "timeout"
    if isinstance(exc, ConnectionError) or any(
        word in name for name in names for word in _CONNECTION_NAMES
    ):
        return "connection"
    return None


def _failure(exc: BaseException) -> tuple[str | None, BaseException]:
    """What a failed request ran into, decided by the innermost error of its explicit cause
    chain that says (client libraries wrap one another: an aiohttp disconnect can arrive as an
    httpx ``ConnectTimeout`` and then as the SDK's ``APITimeoutError``), and that error."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and len(chain) < _CAUSE_DEPTH and all(link is not c for c in chain):
        chain.append(link)
        link = link.__cause__
    for error in reversed(chain):
        kind = _kind(error)
        if kind is not None:
            return kind, error
    return None, exc


def is_timeout(exc: BaseException) -> bool:
    """A request that ran out of time (any client library's timeout error), and not a
    connection the server dropped that a library reported as a timeout."""
    return _failure(exc)[0] == "timeout"


def is_connection_failure(exc: BaseException) -> bool:
    """A request whose connection was reset, closed before a reply, or refused."""
    return _failure(exc)[0] == "connection"


def connection_reason(exc: BaseException) -> str:
    """The client library's own words for a lost connection (its class name and message)."""
    error = _failure(exc)[1]
    text = str(error) or "no details"
    return f"{type(error).__name__}: {show(text, 200)}"


def timeout_seconds(value: Any) -> float | None:
    """Seconds from a client's ``timeout`` setting (a number or an ``httpx.Timeout``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, tuple) and value:
        return timeout_seconds(value[-1])
    read = getattr(value, "read", None)
    if isinstance(read, (int, float)) and not isinstance(read, bool):
        return float(read)
    return None


# A 500 is usually transient; only these words mark it as a rejection of the request's shape.
_UNSUPPORTED_WORDS_ON_500 = (
    "response_format",
    "json_schema",
    "json_object",
    "tool_choice",
    "grammar",
    "not supported",
    "unsupported",
)
_UNSUPPORTED_WORDS = (
    *_UNSUPPORTED_WORDS_ON_500,
    "json schema",
    "tools",
    "tool call",
    "function",
    "not implemented",
    "schema",
)
_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
_TRANSIENT_NAMES = (
    "Timeout",
    "RateLimit",
    "APIConnection",
    "ConnectError",
    "ConnectionError",
    "ServiceUnavailable",
    "InternalServerError",
    "RemoteProtocolError",
    "ReadError",
)


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _error_text(exc: BaseException) -> str:
    parts = [str(exc)]
    body = getattr(exc, "body", None)
    if body is not None:
        parts.append(json.dumps(body, default=str) if not isinstance(body, str) else body)
    return " ".join(parts).lower()


def is_unsupported(exc: BaseException) -> bool:
    """Did the server reject the *way* we asked for structure (rather than fail transiently)?"""
    if isinstance(exc, NotImplementedError):
        return True
    status = _status_of(exc)
    if status not in (400, 415, 422, 500, 501):
        return False
    text = _error_text(exc)
    words = _UNSUPPORTED_WORDS if status != 500 else _UNSUPPORTED_WORDS_ON_500
    return any(word in text for word in words)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: rate limits, 5xx, timeouts, dropped connections."""
    status = _status_of(exc)
    if status is not None:
        return status in _TRANSIENT_STATUS
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    return any(name in cls.__name__ for cls in type(exc).__mro__ for name in _TRANSIENT_NAMES)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` (or ``retry-after-ms``) hint, in seconds, if present."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        return max(0.0, float(value))
    except (TypeError, ValueError):
        from email.utils import parsedate_to_datetime

        try:
            import time

            when = parsedate_to_datetime(str(headers.get("retry-after")))
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None
