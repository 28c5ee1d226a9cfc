"""The judge backend for LangChain chat models.

Rungs: the model's own structured output (``with_structured_output``), a forced tool call, JSON
mode (OpenAI models), then plain text with the schema in the prompt. For the structured rung the
judge sends the request LangChain builds but reads the reply itself: LangChain's JSON parsers retry
on ever shorter prefixes of a non-JSON reply, which takes seconds on a long prose answer, while the
judge's reader is linear in the answer's size and capped (:data:`MAX_ANSWER_CHARS`).

Multimodal content goes to OpenAI chat models (``ChatOpenAI`` and its subclasses) in the OpenAI
format, and to every other chat model as LangChain's standard content blocks
(``{"type": "image", "base64": ..., "mime_type": ...}``), which each provider package translates.
"""

from __future__ import annotations

import copy
import json
import sys
import traceback
from collections.abc import Mapping
from typing import Any, NoReturn

from openevals._attachments import to_standard_content
from openevals._judge.answers import MAX_ANSWER_CHARS, extract_json_object
from openevals._judge.backends import (
    Answer,
    Backend,
    _json_instruction,
    _usage_from_openai,
    _with_instruction,
    _without_retries,
    undecodable_body,
)
from openevals._judge.errors import JudgeServerError, timeout_seconds
from openevals._judge.schema import SchemaSpec
from openevals._repr import show

# Where ChatOpenAI reads a reply: an error raised there means the reply was not a chat completion.
_READING_FUNCTIONS = (("langchain_openai", "_create_chat_result"),)
_READING_MODULES = ("openai._response", "openai._legacy_response", "openai.lib._parsing")


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


def _model_timeout(model: Any) -> float | None:
    for source in (model, getattr(model, "root_client", None)):
        for name in ("request_timeout", "timeout", "default_request_timeout"):
            seconds = timeout_seconds(getattr(source, name, None))
            if seconds is not None:
                return seconds
    return None


def _request_part(structured: Any) -> Any:
    """The model call inside a ``with_structured_output(..., include_raw=True)`` chain.

    LangChain builds that chain as ``RunnableParallel(raw=<bound model>) | <parsers>``; the bound
    model carries the request options (response format or forced tool). ``None`` when the chain
    has another shape (then the whole chain runs, parsers included).
    """
    first = getattr(structured, "first", None)
    steps = getattr(first, "steps__", None)
    if isinstance(steps, Mapping) and list(steps) == ["raw"]:
        return steps["raw"]
    return None


def _while_reading_reply(exc: BaseException) -> bool:
    """Was ``exc`` raised while ChatOpenAI / the OpenAI SDK turned the HTTP reply into a result?"""
    walked = traceback.walk_tb(exc.__traceback__)
    frames = [(str(f.f_globals.get("__name__", "")), f.f_code.co_name) for f, _ in walked]
    for module, function in frames:
        if any(module.startswith(m) and function == f for m, f in _READING_FUNCTIONS):
            return True
        if any(module == m or module.startswith(m + ".") for m in _READING_MODULES):
            return True
    # A reply without any choice leaves LangChain's chat model with no generation to return.
    return (
        isinstance(exc, IndexError)
        and bool(frames)
        and frames[-1][0].startswith("langchain_core.language_models")
    )


def _ai_message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) if isinstance(b, Mapping) else str(b) for b in content
        )
    return str(content)


def _usage_from_ai_message(message: Any) -> dict[str, int] | None:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        meta = getattr(message, "response_metadata", None) or {}
        return _usage_from_openai(meta.get("token_usage"))
    return _usage_from_openai(
        {
            "prompt_tokens": usage.get("input_tokens", 0),
            "completion_tokens": usage.get("output_tokens", 0),
            "total_tokens": usage.get("total_tokens"),
        }
    )


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
        self.timeout = _model_timeout(model)
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
        needs = {
            "structured": "with_structured_output",
            "tool": "bind_tools",
            "json_object": "bind",
        }
        if rung in needs and not callable(getattr(self.model, needs[rung], None)):
            # A minimal chat model (invoke / ainvoke only): the core moves on to the next rung.
            raise NotImplementedError(f"{type(self.model).__name__} has no {needs[rung]}()")
        if rung == "structured":
            chain = self.model.with_structured_output(
                spec.langchain_schema(), include_raw=True, **self.kwargs
            )
            runnable = _request_part(chain) or chain
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
        # The OpenAI-style message dicts go to ``invoke`` as they are (LangChain converts them);
        # models mocked in tests written for openevals 0.2.2 read them as dicts.
        if rung in ("json_object", "text"):
            messages = _with_instruction(messages, _json_instruction(spec))
        if not self.openai_like:
            messages = [
                {**m, "content": to_standard_content(m["content"])}
                if isinstance(m.get("content"), list)
                else m
                for m in messages
            ]
        return self._runnable(rung, spec), messages

    def _reraise(self, exc: Exception) -> NoReturn:
        """Raise ``exc`` again, or as a :class:`JudgeServerError` when the server's reply (not
        the request) was at fault."""
        fault = undecodable_body(exc)
        if fault is None and self.openai_like and _while_reading_reply(exc):
            fault = JudgeServerError(
                f"the reply is not a chat completion that {type(self.model).__name__} can "
                f"read ({type(exc).__name__}: {exc})"
            )
        if fault is None:
            raise exc
        raise fault from exc

    def send(self, payload: Any) -> Any:
        runnable, messages = payload
        try:
            return runnable.invoke(messages)
        except Exception as exc:
            self._reraise(exc)

    async def asend(self, payload: Any) -> Any:
        runnable, messages = payload
        try:
            return await runnable.ainvoke(messages)
        except Exception as exc:
            self._reraise(exc)

    def read(self, rung: str, response: Any) -> Answer:
        if rung == "plain":
            text = _ai_message_text(response)
            return Answer(text, text, _usage_from_ai_message(response))
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
            if isinstance(args, Mapping):
                return Answer(dict(args), _dumps(args), usage)
        text = _ai_message_text(message)
        if text:
            return Answer(extract_json_object(text), text, usage)
        for call in getattr(message, "invalid_tool_calls", None) or []:
            args = call.get("args") if isinstance(call, Mapping) else None
            if isinstance(args, str) and args:
                return Answer(extract_json_object(args), args, usage)
        finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
        raise JudgeServerError(
            "the model's reply has no content and no tool call"
            + (f" (finish_reason={show(finish)})" if finish else "")
        )


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, default=str)
    except (ValueError, RecursionError):
        return show(value, MAX_ANSWER_CHARS)


def _raw_text(raw: Any, parsed: Any) -> str:
    text = _ai_message_text(raw) if raw is not None else ""
    if text:
        return text
    if hasattr(parsed, "model_dump_json"):
        return str(parsed.model_dump_json())
    return _dumps(parsed)
