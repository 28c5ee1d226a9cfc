"""How the judge talks to a model: the backend interface and the OpenAI-client backend.

Each backend knows the *rungs* of structured output it can try, from the strictest to the most
lenient, and splits a call into pure ``prepare``/``read`` steps around the only I/O (``send`` /
``asend``). OpenAI-compatible servers differ in what they accept (llama.cpp rejects ``json_schema``
response formats but takes forced tool calls and ``json_object``), so the core walks down the rungs
when a server says a rung is unsupported. The LangChain backend is in ``langchain_backend``.

Every request goes through the SDK's public ``chat.completions.create``. A caller's own OpenAI
client is used as it is: its transport, headers, timeouts and ``max_retries`` (which then governs
retries of HTTP errors and timeouts, see :attr:`Backend.sdk_retries`). Clients the judge builds
itself (``"openai:..."`` model strings) have no SDK retries and, for async requests, one copy per
event loop on the SDK's aiohttp transport (:mod:`openevals._judge.clients`).
"""

from __future__ import annotations

import abc
import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openevals._contract import is_async_callable
from openevals._judge.answers import extract_json_object
from openevals._judge.clients import LoopClients
from openevals._judge.errors import (
    JudgeServerError,
    timeout_seconds,
)
from openevals._judge.prompting import append_text_to_last_user
from openevals._judge.schema import SchemaSpec
from openevals._repr import show


@dataclass
class Answer:
    """What a model call produced: structured data if any, the raw text, and token usage."""

    data: Any
    text: str
    usage: dict[str, int] | None
    #: The choice's token log-probabilities (``logprobs.content``) when they were asked for.
    logprobs: Any = None


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
        except (ValueError, RecursionError):
            return extract_json_object(arguments)
    return None


def _token_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _usage_from_openai(usage: Any) -> dict[str, int] | None:
    """Token usage of an OpenAI-style ``usage`` object or dict; ``None`` when absent or garbled."""
    if usage is None:
        return None

    def get(name: str) -> int | None:
        raw = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
        return _token_count(raw)

    prompt, completion, total = get("prompt_tokens"), get("completion_tokens"), get("total_tokens")
    if prompt is None and completion is None:
        return None
    prompt, completion = prompt or 0, completion or 0
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": total if total is not None else prompt + completion,
    }


class Backend(abc.ABC):
    """Interface shared by the backends."""

    rungs: tuple[str, ...] = ()
    model_name: str | None = None
    #: Retries the client performs by itself on HTTP errors and timeouts (a caller's own OpenAI
    #: client keeps its ``max_retries``); the judge's retry policy steps aside for those errors.
    sdk_retries: int = 0
    #: The client's timeout in seconds, reported by :class:`JudgeTimeoutError` (None: unknown).
    timeout: float | None = None
    #: One request can return several completions (the ``n`` parameter); else ``samples=n``
    #: makes n requests.
    supports_n: bool = False
    #: Replies can carry token log-probabilities (``score_weighting="logprobs"``).
    supports_logprobs: bool = False

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

    def read_all(self, rung: str, response: Any) -> list[Answer]:
        """Every completion of a response (several when ``n`` was asked for); usage on the first."""
        return [self.read(rung, response)]

    def with_sampling(self, payload: Any, *, n: int, top_logprobs: int | None) -> Any:
        """``payload`` asking for ``n`` completions and/or ``top_logprobs`` alternatives."""
        raise NotImplementedError(f"{type(self).__name__} cannot ask for n or logprobs")


def undecodable_body(exc: BaseException) -> JudgeServerError | None:
    """The server fault behind a client-side decoding failure, or ``None`` for other errors."""
    if isinstance(exc, RecursionError):
        return JudgeServerError("the response body nests JSON too deeply to be decoded")
    if isinstance(exc, json.JSONDecodeError):
        return JudgeServerError(f"the response body is not valid JSON ({exc.msg})", body=exc.doc)
    if isinstance(exc, UnicodeDecodeError):
        return JudgeServerError(
            f"the response body is not UTF-8 text ({exc.reason} at byte {exc.start})",
            body=exc.object[:200],
        )
    return None


_UNDECODABLE = (json.JSONDecodeError, UnicodeDecodeError, RecursionError)


class OpenAIClientBackend(Backend):
    """``openai.OpenAI`` / ``AsyncOpenAI`` (or anything with ``.chat.completions.create``).

    ``owned=True`` marks a client the judge built itself (from a model string): its SDK retries
    are switched off, and async requests use the client ``async_client_factory(pool_size)``
    builds for the running event loop. A caller's client (the default) is never copied or
    reconfigured; a ``timeout`` is then passed with each request (``create(..., timeout=)``).
    """

    rungs = ("json_schema", "tool", "json_object", "text")
    supports_n = True
    supports_logprobs = True

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        async_client_factory: Callable[[int], Any] | None = None,
        owned: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.owned = owned
        self.client = _without_retries(client) if owned else client
        # Async HTTP connections belong to the event loop that opened them. For clients we build
        # ourselves, each running loop gets its own (pool sized to the concurrency in use), so
        # `asyncio.run(judge(...))` can be called again and again (a shared pool fails with
        # "Event loop is closed" on the next loop). See openevals._judge.clients.
        self._async_clients = (
            LoopClients(async_client_factory) if async_client_factory is not None else None
        )
        self.model_name = model[len("openai:") :] if model.startswith("openai:") else model
        self.is_async = async_client_factory is None and is_async_client(self.client)
        retries = getattr(client, "max_retries", 0)
        self.sdk_retries = 0 if owned or not isinstance(retries, int) else max(0, retries)
        self.timeout = (
            timeout if timeout is not None else timeout_seconds(getattr(client, "timeout", None))
        )
        # An owned client carries its timeout already; a caller's gets it with each request.
        self._per_request = {} if owned or timeout is None else {"timeout": timeout}
        # A create() the caller replaced on the client (langsmith's wrap_openai, a patch)
        # records its own llm run, if it traces; the judge adds one only around the SDK's own.
        self._traced_by_caller = not owned and _create_replaced(client)

    def pool_size(self) -> int | None:
        """Connections of the running loop's owned async client (None: not an owned client)."""
        return None if self._async_clients is None else self._async_clients.size()

    def _loop_client(self) -> Any:
        assert self._async_clients is not None
        return self._async_clients.get()

    def cache_params(self) -> dict[str, Any]:
        return {"class": "openai"}

    def prepare(self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec) -> Any:
        payload: dict[str, Any] = {"model": self.model_name, "messages": messages}
        if rung == "plain":
            return payload
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

        def call() -> Any:
            try:
                return self._body(self._create(self.client, payload))
            except _UNDECODABLE as exc:
                raise undecodable_body(exc) from exc  # type: ignore[misc]

        if self._traced_by_caller:
            return call()
        return _traced_llm_call(self.model_name, payload, call)

    async def asend(self, payload: Any) -> Any:
        if self._async_clients is not None:
            client = self._loop_client()
        elif self.is_async:
            client = self.client
        else:
            return await asyncio.to_thread(self.send, payload)

        async def call() -> Any:
            try:
                return self._body(await self._create(client, payload))
            except _UNDECODABLE as exc:
                raise undecodable_body(exc) from exc  # type: ignore[misc]

        if self._traced_by_caller:
            return await call()
        return await _traced_llm_call(self.model_name, payload, call)

    def _create(self, client: Any, payload: Any) -> Any:
        """The SDK's own request, ``chat.completions.create`` (a coroutine for async clients).

        A caller's client gets the request as keyword arguments, so whatever wraps its create()
        sees them, and returns the SDK's response object. An owned client is asked through
        the SDK's public ``with_raw_response`` (the judge reads the JSON itself, see
        :meth:`_body`), with ``model`` and ``messages`` as arguments and the rest of the body as
        ``extra_body``, which the SDK sends as it is: the same request, without the SDK's typed
        walk over an already plain JSON schema and its response model (together about a third
        of create()'s CPU per call).
        """
        if not self.owned:
            return client.chat.completions.create(**payload, **self._per_request)
        rest = {k: v for k, v in payload.items() if k not in ("model", "messages")}
        return client.chat.completions.with_raw_response.create(
            model=payload["model"], messages=payload["messages"], extra_body=rest or None
        )

    def _body(self, response: Any) -> Any:
        """The reply to read: an owned client's raw response decoded like the SDK decodes it
        (JSON when the server says JSON, else the text); a caller's client's reply as it is."""
        if not self.owned:
            return response
        content_type = str(response.headers.get("content-type", ""))
        if not content_type.split(";", 1)[0].strip().endswith("json"):
            return response.text
        return json.loads(response.content)

    def with_sampling(self, payload: Any, *, n: int, top_logprobs: int | None) -> Any:
        out = dict(payload)
        if n > 1:
            out["n"] = n
        if top_logprobs:
            out["logprobs"] = True
            out["top_logprobs"] = top_logprobs
        return out

    def read_all(self, rung: str, response: Any) -> list[Answer]:
        first = self.read(rung, response)
        choices = _get(response, "choices")
        first.logprobs = _get(_get(choices[0], "logprobs"), "content")
        answers = [first]
        for i, choice in enumerate(choices[1:], start=1):
            message = _get(choice, "message")
            if message is None or isinstance(message, (str, bytes, int, float, list)):
                raise JudgeServerError(f"choice {i} has no `message` object", body=response)
            answer = self._answer(message, None, response, choice)
            answer.logprobs = _get(_get(choice, "logprobs"), "content")
            answers.append(answer)
        return answers

    def read(self, rung: str, response: Any) -> Answer:
        message, usage = _completion_message(response)
        if rung == "plain":
            return _plain_answer(_get(message, "content"), usage, response)
        # (_completion_message has checked that ``choices`` is a non-empty list)
        return self._answer(message, usage, response, _get(response, "choices")[0])

    @staticmethod
    def _answer(message: Any, usage: dict[str, int] | None, response: Any, choice: Any) -> Answer:
        for call in _get(message, "tool_calls") or []:
            arguments = _get(_get(call, "function"), "arguments")
            if arguments is not None:
                return Answer(_parse_arguments(arguments), str(arguments), usage)
        text = _get(message, "content")
        parsed = _get(message, "parsed")
        if parsed is not None:
            return Answer(parsed, text if isinstance(text, str) else "", usage)
        if isinstance(text, list):  # content parts from some compatible servers
            text = "".join(str(_get(part, "text") or "") for part in text)
        if isinstance(text, str) and text:
            return Answer(extract_json_object(text), text, usage)
        refusal = _get(message, "refusal")
        if isinstance(refusal, str) and refusal:
            return Answer(None, f"(the model refused) {refusal}", usage)
        if text is not None and not isinstance(text, str):
            raise JudgeServerError(
                f"the message content is a {type(text).__name__}, not text", body=response
            )
        finish = _get(choice, "finish_reason")
        raise JudgeServerError(
            "the message has no content and no tool call"
            + (f" (finish_reason={show(finish)})" if finish else ""),
            body=response,
        )


def _plain_answer(content: Any, usage: dict[str, int] | None, response: Any) -> Answer:
    """The reply's text as the answer itself (the ``plain`` rung, :data:`TEXT_ANSWER`)."""
    if isinstance(content, list):  # content parts from some compatible servers
        content = "".join(str(_get(part, "text") or "") for part in content)
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise JudgeServerError(
            f"the message content is a {type(content).__name__}, not text", body=response
        )
    return Answer(content, content, usage)


def _completion_message(response: Any) -> tuple[Any, dict[str, int] | None]:
    """The first choice's message of a chat completion (SDK object or plain JSON), and usage.

    Raises :class:`JudgeServerError` for anything that is not a chat completion with a message.
    """
    if isinstance(response, (str, bytes)):
        raise JudgeServerError(
            "the body is text, not a chat completion JSON object (wrong content type?)",
            body=response,
        )
    if not isinstance(response, Mapping) and not hasattr(response, "choices"):
        raise JudgeServerError(
            f"the body is a {type(response).__name__}, not a chat completion object",
            body=response,
        )
    choices = _get(response, "choices")
    if not isinstance(choices, list) or not choices:
        raise JudgeServerError("the reply has no `choices`", body=response)
    message = _get(choices[0], "message")
    if message is None or isinstance(message, (str, bytes, int, float, list)):
        raise JudgeServerError("the first choice has no `message` object", body=response)
    return message, _usage_from_openai(_get(response, "usage"))


def _get(obj: Any, name: str) -> Any:
    """Read a field from an SDK object or from the plain JSON dict of a response."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _without_retries(client: Any) -> Any:
    """A copy of a client *the judge built* without SDK retries (the judge's policy counts)."""
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client


def _create_replaced(client: Any) -> bool:
    """Did the caller replace ``client.chat.completions.create`` on the client object itself
    (``langsmith.wrappers.wrap_openai``, a test double)? Then that callable is the caller's own
    record of the call."""
    completions = getattr(getattr(client, "chat", None), "completions", None)
    try:
        return "create" in vars(completions)
    except TypeError:  # no instance dictionary: nothing was replaced on it
        return False


def is_async_client(client: Any) -> bool:
    """Is ``client`` (anything with ``chat.completions.create``) an async OpenAI-style client?"""
    completions = client.chat.completions
    return is_async_callable(completions.create) or any(
        type(obj).__name__.startswith("Async") for obj in (client, completions)
    )


def _traced_llm_call(model_name: str | None, payload: Any, call: Any) -> Any:
    """Run ``call()``; when LangSmith tracing is on, as an ``llm`` run with the request inputs.

    ``call`` may be an async function: then so is the traced run, and the caller awaits it.
    """
    from openevals.utils import _tracing_active

    if not _tracing_active():
        return call()
    from langsmith import traceable

    def chat_completion(messages: Any, **params: Any) -> Any:
        return call()

    async def achat_completion(messages: Any, **params: Any) -> Any:
        return await call()

    run = traceable(
        name="ChatOpenAI",
        run_type="llm",
        metadata={"ls_provider": "openai", "ls_model_name": model_name, "ls_model_type": "chat"},
    )(achat_completion if is_async_callable(call) else chat_completion)
    return run(payload.get("messages"), **{k: v for k, v in payload.items() if k != "messages"})
