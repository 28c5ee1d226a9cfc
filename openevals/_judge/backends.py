"""How the judge talks to a model: an OpenAI-style client or a LangChain chat model.

Each backend knows the *rungs* of structured output it can try, from the strictest to the most
lenient, and splits a call into pure ``prepare``/``read`` steps around the only I/O (``send`` /
``asend``). OpenAI-compatible servers differ in what they accept (llama.cpp rejects ``json_schema``
response formats but takes forced tool calls and ``json_object``), so the core walks down the rungs
when a server says a rung is unsupported.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import inspect
import json
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openevals._judge.answers import extract_json_object
from openevals._judge.prompting import append_text_to_last_user
from openevals._judge.schema import SchemaSpec

__all__ = [
    "Answer",
    "Backend",
    "LangChainBackend",
    "OpenAIClientBackend",
    "is_transient",
    "is_unsupported",
    "retry_after_seconds",
]

_UNSUPPORTED_WORDS = (
    "response_format",
    "json_schema",
    "json schema",
    "json_object",
    "tool_choice",
    "tools",
    "tool call",
    "function",
    "grammar",
    "not supported",
    "unsupported",
    "not implemented",
    "schema",
)
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


@dataclass
class Answer:
    """What a model call produced: structured data if any, the raw text, and token usage."""

    data: Any
    text: str
    usage: dict[str, int] | None


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


def _json_instruction(spec: SchemaSpec) -> str:
    return (
        "Reply with one JSON object and nothing else (no prose, no code fences). It must follow "
        "this JSON schema:\n" + json.dumps(spec.schema, indent=2)
    )


def _with_instruction(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``text`` appended to the last user message."""
    out = list(messages)
    if not append_text_to_last_user(out, text):
        out.append({"role": "user", "content": text})
    return out


def _parse_arguments(arguments: Any) -> Any:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return extract_json_object(arguments)
    return None


def _usage_from_openai(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None

    def get(name: str) -> Any:
        return usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)

    prompt, completion, total = get("prompt_tokens"), get("completion_tokens"), get("total_tokens")
    if prompt is None and completion is None:
        return None
    prompt, completion = int(prompt or 0), int(completion or 0)
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": int(total if total is not None else prompt + completion),
    }


class Backend(abc.ABC):
    """Interface shared by the two backends."""

    rungs: tuple[str, ...] = ()
    model_name: str | None = None

    @abc.abstractmethod
    def prepare(self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec) -> Any:
        """The request for one rung (pure)."""

    def cache_params(self) -> dict[str, Any]:
        """Model parameters that change answers (part of the judge-cache key)."""
        return {}

    @abc.abstractmethod
    def send(self, payload: Any) -> Any:
        """Perform the request (blocking): the only I/O of a sync judge."""

    @abc.abstractmethod
    async def asend(self, payload: Any) -> Any:
        """Perform the request (awaiting): the only I/O of an async judge."""

    @abc.abstractmethod
    def read(self, rung: str, response: Any) -> Answer:
        """The structured data, text and usage of a response (pure)."""


class OpenAIClientBackend(Backend):
    """``openai.OpenAI`` / ``AsyncOpenAI`` (or anything with ``.chat.completions.create``)."""

    rungs = ("json_schema", "tool", "json_object", "text")

    def __init__(
        self, client: Any, model: str, *, async_client_factory: Callable[[], Any] | None = None
    ) -> None:
        self.client = _without_retries(client)
        # Async HTTP connections belong to the event loop that opened them. For clients we build
        # ourselves, each running loop gets its own, so `asyncio.run(judge(...))` can be called
        # again and again (a shared pool fails with "Event loop is closed" on the next loop).
        self._async_factory = async_client_factory
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self.model_name = model[len("openai:") :] if model.startswith("openai:") else model
        self.is_async = async_client_factory is None and _is_async_client(self.client)

    def _loop_client(self) -> Any:
        assert self._async_factory is not None
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = self._async_clients[loop] = _without_retries(self._async_factory())
        return client

    def cache_params(self) -> dict[str, Any]:
        return {"class": "openai"}

    @staticmethod
    def _poster(client: Any) -> Any:
        """The official SDK's ``post``: it skips ``create()``'s per-parameter transforms, which
        cost more CPU than the rest of the judge. Other clients go through ``create()``."""
        if type(client).__module__.split(".", 1)[0] == "openai":
            return getattr(client, "post", None)
        return None

    def prepare(self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec) -> Any:
        payload: dict[str, Any] = {"model": self.model_name, "messages": messages}
        if rung == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": spec.openai_json_schema(),
            }
        elif rung == "tool":
            payload["tools"] = [spec.tool()]
            payload["tool_choice"] = {"type": "function", "function": {"name": spec.name}}
        elif rung == "json_object":
            payload["messages"] = _with_instruction(messages, _json_instruction(spec))
            payload["response_format"] = {"type": "json_object", "schema": spec.schema}
        else:
            payload["messages"] = _with_instruction(messages, _json_instruction(spec))
        return payload

    def send(self, payload: Any) -> Any:
        if self.is_async:
            raise TypeError(
                "an async OpenAI client (AsyncOpenAI) was passed as `judge` to a sync evaluator; "
                "use create_async_llm_as_judge, or pass openai.OpenAI()"
            )
        return _traced_llm_call(self.model_name, payload, lambda: self._call(self.client, payload))

    async def asend(self, payload: Any) -> Any:
        if self._async_factory is not None:
            client = self._loop_client()
        elif self.is_async:
            client = self.client
        else:
            return await asyncio.to_thread(self.send, payload)

        async def call() -> Any:
            return await self._call(client, payload)

        return await _atraced_llm_call(self.model_name, payload, call)

    def _call(self, client: Any, payload: Any) -> Any:
        post = self._poster(client)
        if post is not None:
            return post("/chat/completions", body=payload, cast_to=object)
        return client.chat.completions.create(**payload)

    def read(self, rung: str, response: Any) -> Answer:
        if isinstance(response, (str, bytes)):
            raise ValueError(f"the model server returned a non-JSON body: {response[:500]!r}")
        usage = _usage_from_openai(_get(response, "usage"))
        choices = _get(response, "choices") or []
        if not choices:
            return Answer(None, "", usage)
        message = _get(choices[0], "message")
        for call in _get(message, "tool_calls") or []:
            arguments = _get(_get(call, "function"), "arguments")
            if arguments is not None:
                return Answer(_parse_arguments(arguments), str(arguments), usage)
        text = _get(message, "content") or ""
        parsed = _get(message, "parsed")
        if parsed is not None:
            return Answer(parsed, text, usage)
        return Answer(extract_json_object(text) if text else None, text, usage)


def _get(obj: Any, name: str) -> Any:
    """Read a field from an SDK object or from the plain JSON dict of a response."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _without_retries(client: Any) -> Any:
    """Our retry loop is the one that counts; the client's own retries would multiply attempts."""
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client


def _is_async_client(client: Any) -> bool:
    completions = client.chat.completions
    return inspect.iscoroutinefunction(completions.create) or any(
        type(obj).__name__.startswith("Async") for obj in (client, completions)
    )


def _llm_run_options(model_name: str | None, payload: Any) -> dict[str, Any]:
    return {
        "name": "ChatOpenAI",
        "run_type": "llm",
        "metadata": {
            "ls_provider": "openai",
            "ls_model_name": model_name,
            "ls_model_type": "chat",
        },
    }


def _traced_llm_call(model_name: str | None, payload: Any, call: Any) -> Any:
    """Run ``call()``; when LangSmith tracing is on, as an ``llm`` run with the request inputs."""
    from openevals.utils import _tracing_active

    if not _tracing_active():
        return call()
    from langsmith import traceable

    def chat_completion(messages: Any, **params: Any) -> Any:
        return call()

    options = _llm_run_options(model_name, payload)
    return traceable(**options)(chat_completion)(
        payload.get("messages"), **{k: v for k, v in payload.items() if k != "messages"}
    )


async def _atraced_llm_call(model_name: str | None, payload: Any, call: Any) -> Any:
    """Async twin of :func:`_traced_llm_call` (``call`` is an async function)."""
    from openevals.utils import _tracing_active

    if not _tracing_active():
        return await call()
    from langsmith import traceable

    async def chat_completion(messages: Any, **params: Any) -> Any:
        return await call()

    options = _llm_run_options(model_name, payload)
    return await traceable(**options)(chat_completion)(
        payload.get("messages"), **{k: v for k, v in payload.items() if k != "messages"}
    )


def _is_openai_chat_model(model: Any) -> bool:
    module = sys.modules.get("langchain_openai.chat_models.base")
    base = getattr(module, "BaseChatOpenAI", None)
    return base is not None and isinstance(model, base)


def _openai_model_without_retries(model: Any) -> Any:
    """A copy of a ``ChatOpenAI``-style model whose SDK clients do not retry by themselves.

    The judge's own retry policy (``max_retries``) is the one that counts; the SDK's retries would
    multiply with it (3 x 3 attempts). The caller's model object is left untouched.
    """
    root = getattr(model, "root_client", None)
    if not _is_openai_chat_model(model) or not getattr(root, "max_retries", 0):
        return model
    try:
        clone = model.model_copy()
        clone.root_client = _without_retries(model.root_client)
        clone.client = clone.root_client.chat.completions
        clone.root_async_client = _without_retries(model.root_async_client)
        clone.async_client = clone.root_async_client.chat.completions
    except Exception:  # an unusual subclass: keep the model as it is
        return model
    return clone


def _ai_message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content)
    return str(content)


def _usage_from_ai_message(message: Any) -> dict[str, int] | None:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        meta = getattr(message, "response_metadata", None) or {}
        return _usage_from_openai(meta.get("token_usage"))
    return {
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "total_tokens": int(usage.get("total_tokens", 0)),
    }


class LangChainBackend(Backend):
    """A LangChain chat model: its own structured output first, then tool calls, JSON mode, text."""

    def __init__(
        self, model: Any, structured_output_kwargs: Mapping[str, Any] | None = None
    ) -> None:
        self.model = _openai_model_without_retries(model)
        self.kwargs = dict(structured_output_kwargs or {})
        self.openai_like = _is_openai_chat_model(model)
        self.rungs = (
            ("structured", "tool", "json_object", "text")
            if self.openai_like
            else ("structured", "tool", "text")
        )
        name = getattr(model, "model_name", None) or getattr(model, "model", None)
        self.model_name = name if isinstance(name, str) else None
        self._runnables: dict[tuple[str, str, Any], Any] = {}

    def cache_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "class": type(self.model).__name__,
            "structured_output_kwargs": self.kwargs,
        }
        for name in ("temperature", "top_p", "max_tokens", "reasoning_effort", "seed"):
            value = getattr(self.model, name, None)
            if isinstance(value, (int, float, str)):
                params[name] = value
        return params

    def _runnable(self, rung: str, spec: SchemaSpec) -> Any:
        # Keyed by content, not id(spec): per-call specs (JSON rubric keys) are short-lived, and
        # a recycled id would hand back a runnable bound to another schema.
        shape = spec.pydantic_model or json.dumps(spec.schema, sort_keys=True)
        key = (rung, spec.name, shape)
        cached = self._runnables.get(key)
        if cached is not None:
            return cached
        if rung == "structured":
            runnable = self.model.with_structured_output(
                spec.langchain_schema(), include_raw=True, **self.kwargs
            )
        elif rung == "tool":
            runnable = self.model.bind_tools([spec.tool()], tool_choice=spec.name)
        elif rung == "json_object":
            runnable = self.model.bind(
                response_format={"type": "json_object", "schema": copy.deepcopy(spec.schema)}
            )
        else:
            runnable = self.model
        self._runnables[key] = runnable
        return runnable

    def prepare(self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec) -> Any:
        from langchain_core.messages import convert_to_messages

        if rung in ("json_object", "text"):
            messages = _with_instruction(messages, _json_instruction(spec))
        return self._runnable(rung, spec), convert_to_messages(messages)

    def send(self, payload: Any) -> Any:
        runnable, messages = payload
        return runnable.invoke(messages)

    async def asend(self, payload: Any) -> Any:
        runnable, messages = payload
        return await runnable.ainvoke(messages)

    def read(self, rung: str, response: Any) -> Answer:
        if rung == "structured" and isinstance(response, Mapping) and "raw" in response:
            raw = response.get("raw")
            parsed = response.get("parsed")
            usage = _usage_from_ai_message(raw)
            if parsed is not None:
                return Answer(parsed, _raw_text(raw, parsed), usage)
            return self._from_message(raw, usage)
        if rung == "structured" and not hasattr(response, "content"):
            return Answer(response, json.dumps(response, default=str), None)
        return self._from_message(response, _usage_from_ai_message(response))

    @staticmethod
    def _from_message(message: Any, usage: dict[str, int] | None) -> Answer:
        for call in getattr(message, "tool_calls", None) or []:
            args = call.get("args") if isinstance(call, Mapping) else None
            if args is not None:
                return Answer(dict(args), json.dumps(args, default=str), usage)
        text = _ai_message_text(message)
        return Answer(extract_json_object(text) if text else None, text, usage)


def _raw_text(raw: Any, parsed: Any) -> str:
    text = _ai_message_text(raw) if raw is not None else ""
    if text:
        return text
    if hasattr(parsed, "model_dump_json"):
        return str(parsed.model_dump_json())
    return json.dumps(parsed, default=str)
