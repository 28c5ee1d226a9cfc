"""Wire-level pieces of the fake OpenAI server: scripted replies, response bodies, outcomes and
request routing (pure functions; the server itself is in :mod:`openevals.testing.server`)."""

from __future__ import annotations

import copy
import hashlib
import json as _json
import math
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show

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
                        f"'arguments' (dict or JSON string); got {show(call)}"
                    )
                args = call.get("arguments", {})
                if not isinstance(args, (str, Mapping)):
                    raise TypeError(
                        f"Reply `tool_calls[{i}]['arguments']` must be a dict or a str; got "
                        f"{type(args).__name__}"
                    )
        if isinstance(self.status, bool) or not isinstance(self.status, int):
            raise TypeError(f"Reply `status` must be an int HTTP status; got {show(self.status)}")
        if not 200 <= self.status <= 599:
            raise ValueError(f"Reply `status` must be between 200 and 599; got {self.status}")
        if isinstance(self.delay, bool) or not isinstance(self.delay, (int, float)):
            raise TypeError(f"Reply `delay` must be a number of seconds; got {show(self.delay)}")
        if not (self.delay >= 0 and math.isfinite(self.delay)):
            raise ValueError(f"Reply `delay` must be a finite number >= 0; got {self.delay}")
        if self.body is not None and not isinstance(self.body, (bytes, str, Mapping, list)):
            raise TypeError(
                f"Reply `body` must be bytes, str, dict or list; got {type(self.body).__name__}"
            )
        message = self.content is not None or self.json is not None or self.tool_calls is not None
        if self.status >= 400 and message:
            raise ValueError(
                f"Reply with error `status` {self.status} cannot carry `content`, `json` or "
                "`tool_calls`; use `body` for the error payload"
            )
        if self.body is not None and self.status < 400 and message:
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
            raise TypeError(f"`json` must be JSON-serialisable; got {show(json)} ({exc})") from None
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


def _scripted_outcome(reply: Reply) -> _Outcome | None:
    """The whole answer ``reply`` scripts (a reset, a hang, an error or a raw body), else None."""
    if reply.reset:
        return _Outcome(200, b"", reset=True)
    if reply.hang:
        return _Outcome(200, b"", hang=True)
    if reply.status < 400 and reply.body is None:
        return None
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
            f"fake server cannot answer a json= reply: tool_choice {show(choice)} with "
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
        f"token-id lists; got {show(value)}"
    )


def _check_dim(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive int; got {show(value)}")
