"""The fake server's endpoints: chat completions (plain, streamed, tool calls, ``n``, logprobs),
embeddings and models. A mixin of :class:`openevals.testing.server.FakeOpenAIServer`."""

from __future__ import annotations

import base64
import json as _json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from openevals._repr import show
from openevals.testing._protocol import (
    RecordedRequest,
    Reply,
    Responder,
    _AmbiguousToolError,
    _embedding_inputs,
    _error_outcome,
    _forced_tool,
    _json_outcome,
    _message_text,
    _Outcome,
    _route,
    _scripted_outcome,
    _word_count,
    make_reply,
)


class _Endpoints:
    """The state :meth:`FakeOpenAIServer.reset` forgets, and the endpoints that answer from it."""

    # Set by FakeOpenAIServer.__init__ (declared here for the type checker).
    _lock: threading.Lock
    _release: threading.Event
    _ids: Iterator[int]
    _initial_embedding_dim: int
    errors: list[str]
    models: tuple[str, ...]

    def _initial_state(self) -> None:
        """Set that state (at creation, and again on reset)."""
        self._requests: list[RecordedRequest] = []
        self._chat_queue: deque[Reply] = deque()
        self._embedding_queue: deque[Reply] = deque()
        self._embedding_overrides: dict[str, list[float]] = {}
        self._logprobs_scripts: deque[dict[str, float]] = deque()
        self._responder: Responder | None = None
        self._default_chat = make_reply("ok")
        self.latency: float = 0.0
        self.reject_response_format: set[str] = set()
        self.reject_tools: bool = False
        self.embedding_dim: int = self._initial_embedding_dim
        self.max_choices: int | None = None
        self.omit_logprobs = False
        #: TCP connections accepted since start/reset (keep-alive clients reuse theirs).
        self.connections_opened = 0
        #: Chat requests being served right now, and the most there ever were at once.
        self.in_flight = 0
        self.peak_in_flight = 0
        #: Chat requests answered 429 because ``max_in_flight`` were already being served.
        self.rejected_in_flight = 0
        self.max_in_flight: int | None = None
        self.in_flight_retry_after: float | None = None

    def embedding_for(self, text: str, *, dim: int | None = None) -> list[float]:
        raise NotImplementedError  # defined by FakeOpenAIServer

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
        scripted = _scripted_outcome(reply)
        if scripted is not None:
            return scripted
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
        base = {
            "id": f"chatcmpl-fake{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "system_fingerprint": "fp_fake",
        }
        if body.get("stream"):
            return _stream_outcome(base, body, message, finish, usage, reply)
        choices = self._choices(body, message, finish, usage)
        payload = {**base, "choices": choices, "usage": usage}
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
                raise ValueError(
                    f"bad alternative {show(token)}: {show(p)}; probabilities are in (0, 1]"
                )
        with self._lock:
            self._logprobs_scripts.append(dict(alternatives))

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
            queue = self._logprobs_scripts
            script = queue.popleft() if queue else None
        tokens = re.findall(r"\s*[A-Za-z_]+|\s*\d+|\s*[^\sA-Za-z_\d]|\s+", content)
        entries = [{**_token(t), "top_logprobs": [_token(t)]} for t in tokens]
        if script:
            hits = [i for i, t in enumerate(tokens) if t.strip() in script]
            if hits:
                entry = entries[hits[-1]]
                space = entry["token"][: len(entry["token"]) - len(entry["token"].lstrip())]
                entry["logprob"] = math.log(script[entry["token"].strip()])
                entry["top_logprobs"] = [
                    _token(space + t, math.log(p))
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

    def _embeddings(self, body: dict[str, Any]) -> _Outcome:
        with self._lock:
            scripted = self._embedding_queue.popleft() if self._embedding_queue else None
        answer = None if scripted is None else _scripted_outcome(scripted)
        if answer is not None:
            return answer
        texts = _embedding_inputs(body.get("input"))
        if isinstance(texts, str):
            return _error_outcome(400, texts)
        if not isinstance(body.get("model"), str):
            return _error_outcome(400, "'model' must be a string.")
        dim = body.get("dimensions", self.embedding_dim)
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            return _error_outcome(400, f"'dimensions' must be a positive integer; got {show(dim)}")
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            return _error_outcome(
                400, f"'encoding_format' must be 'float' or 'base64'; got {show(fmt)}"
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


def _stream_outcome(
    base: dict[str, Any],
    body: dict[str, Any],
    message: dict[str, Any],
    finish: str,
    usage: dict[str, int],
    reply: Reply,
) -> _Outcome:
    """The completion as server-sent events; ``base``: the fields every chunk carries."""
    base = {**base, "object": "chat.completion.chunk"}

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


def _token(text: str, logprob: float = 0.0) -> dict[str, Any]:
    """One token's entry of ``logprobs.content``."""
    return {"token": text, "logprob": logprob, "bytes": list(text.encode())}
