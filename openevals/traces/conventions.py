"""What a span means, under the conventions instrumentations write.

Three families are read, in this order of preference on each span:

1. **OpenTelemetry GenAI semantic conventions** (current): ``gen_ai.operation.name`` (``chat``,
   ``text_completion``, ``generate_content``, ``execute_tool``, ``invoke_agent``,
   ``create_agent``, ``embeddings``), messages as JSON in ``gen_ai.input.messages`` /
   ``gen_ai.output.messages`` / ``gen_ai.system_instructions`` (role + ``parts`` of type
   ``text``, ``tool_call``, ``tool_call_response``), ``gen_ai.tool.name`` /
   ``gen_ai.tool.call.id`` / ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``,
   ``gen_ai.usage.input_tokens`` / ``output_tokens``, ``gen_ai.request.model`` /
   ``gen_ai.response.model``; and the event form: span events ``gen_ai.system.message``,
   ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and
   ``gen_ai.choice``.
2. **The older attribute form**: ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_calls.K.*``
   / ``.tool_call_id`` and ``gen_ai.completion.N.*``, ``gen_ai.usage.prompt_tokens`` /
   ``completion_tokens``; the ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events.
3. **OpenInference**: ``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``, ``CHAIN``...),
   ``llm.input_messages.N.message.role`` / ``.content`` / ``.contents.M.message_content.text`` /
   ``.tool_calls.K.tool_call.{id,function.name,function.arguments}`` / ``.tool_call_id``,
   ``llm.output_messages...``, ``llm.model_name``, ``llm.token_count.prompt`` /
   ``completion`` / ``total``, ``tool.name``, ``tool.parameters``, ``input.value`` /
   ``output.value`` (JSON when it parses).

Messages come out in the OpenAI chat format: ``{"role", "content"}``, assistant ``tool_calls``
as ``[{"id", "type": "function", "function": {"name", "arguments": <JSON text>}}]``, tool
results as ``{"role": "tool", "tool_call_id", "content"}``. A missing attribute is never an
error: the span simply says less.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from openevals.traces.model import Span

__all__ = [
    "decode",
    "errors_of",
    "langchain_message",
    "llm_messages",
    "model_of",
    "span_io",
    "span_kind",
    "tool_call_of",
    "usage_of",
]

_OPERATIONS = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "invoke_workflow": "chain",
    "embeddings": "embedding",
}
_OPENINFERENCE = {
    "LLM": "llm",
    "TOOL": "tool",
    "AGENT": "agent",
    "CHAIN": "chain",
    "RETRIEVER": "retriever",
    "EMBEDDING": "embedding",
    "RERANKER": "reranker",
    "GUARDRAIL": "guardrail",
    "EVALUATOR": "evaluator",
}
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_LC_ROLES = {
    "human": "user",
    "HumanMessage": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "system": "system",
    "SystemMessage": "system",
    "tool": "tool",
    "ToolMessage": "tool",
}


def decode(value: Any) -> Any:
    """``value`` decoded when it is text holding a JSON object or array, else as it is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                return json.loads(text)
            except (ValueError, RecursionError):
                return value
    return value


def span_kind(span: Span) -> str:
    """``"llm"``, ``"tool"``, ``"agent"``, ``"chain"``, ``"retriever"``, ``"embedding"``... or
    ``""`` when no convention says."""
    attrs = span.attributes
    operation = attrs.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in _OPERATIONS:
        return _OPERATIONS[operation]
    kind = attrs.get("openinference.span.kind")
    if isinstance(kind, str) and kind.upper() in _OPENINFERENCE:
        return _OPENINFERENCE[kind.upper()]
    if "gen_ai.input.messages" in attrs or "gen_ai.prompt.0.role" in attrs:
        return "llm"
    if "gen_ai.tool.name" in attrs:
        return "tool"
    if any(e.name in _EVENT_ROLES or e.name == "gen_ai.choice" for e in span.events):
        return "llm"
    return ""


# --------------------------------------------------------------------------- messages


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _arguments(value: Any) -> str:
    """Tool-call arguments as JSON text (the OpenAI form)."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {
        "id": "" if call_id is None else str(call_id),
        "type": "function",
        "function": {"name": "" if name is None else str(name), "arguments": _arguments(arguments)},
    }


def _message(
    role: Any, content: Any, calls: list[dict[str, Any]] | None = None, call_id: Any = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": str(role or "user"), "content": _text(content)}
    if calls:
        message["tool_calls"] = calls
    if call_id is not None:
        message["tool_call_id"] = str(call_id)
    return message


def _from_parts(raw: Any) -> list[dict[str, Any]]:
    """GenAI semconv messages (``{"role", "parts": [...]}``) as OpenAI messages."""
    raw = decode(raw)
    if not isinstance(raw, list):
        return []
    out: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        role = item.get("role")
        parts = item.get("parts")
        if not isinstance(parts, list):  # already in a chat format
            out.append(_plain_message(item))
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(_text(part.get("content")))
            elif kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                result = part.get("response", part.get("result"))
                out.append(_message("tool", result, call_id=part.get("id")))
            elif kind == "reasoning":
                continue
            elif "content" in part:
                texts.append(_text(part.get("content")))
        if texts or calls or role != "tool":
            out.append(_message(role, "".join(texts), calls))
    return out


def _plain_message(item: Mapping[str, Any]) -> dict[str, Any]:
    """A message already in (roughly) the OpenAI form, tool calls normalised."""
    calls = []
    for call in item.get("tool_calls") or ():
        if not isinstance(call, Mapping):
            continue
        inner = call.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
        calls.append(
            _call(call.get("id"), function.get("name"), function.get("arguments", call.get("args")))
        )
    return _message(item.get("role"), item.get("content"), calls, item.get("tool_call_id"))


def _indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened ``prefix.N.rest`` attributes grouped by ``N`` (in index order)."""
    groups: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key, value in attrs.items():
        if key.startswith(prefix):
            index, _, rest = key[size:].partition(".")
            if index.isdigit():
                groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def _flat_calls(fields: Mapping[str, Any], prefix: str, keys: tuple[str, str, str]) -> list[Any]:
    return [_call(*(call.get(key) for key in keys)) for call in _indexed(fields, prefix)]


def _openinference(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for fields in _indexed(attrs, prefix):
        content = fields.get("message.content")
        if content is None:
            parts = _indexed(fields, "message.contents.")
            content = "".join(
                _text(p.get("message_content.text")) for p in parts if "message_content.text" in p
            )
        calls = _flat_calls(
            fields,
            "message.tool_calls.",
            ("tool_call.id", "tool_call.function.name", "tool_call.function.arguments"),
        )
        out.append(
            _message(fields.get("message.role"), content, calls, fields.get("message.tool_call_id"))
        )
    return out


def _legacy(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for fields in _indexed(attrs, prefix):
        calls = _flat_calls(fields, "tool_calls.", ("id", "name", "arguments"))
        if not calls and "function_call.name" in fields:
            calls = [
                _call(None, fields["function_call.name"], fields.get("function_call.arguments"))
            ]
        role = fields.get("role") or ("assistant" if prefix == "gen_ai.completion." else "user")
        out.append(_message(role, fields.get("content"), calls, fields.get("tool_call_id")))
    return out


def _from_events(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for event in span.events:
        attrs = event.attributes
        role = _EVENT_ROLES.get(event.name)
        if role is not None:
            body = decode(attrs.get("body")) if "content" not in attrs else None
            fields = body if isinstance(body, Mapping) else attrs
            item = {**fields, "role": fields.get("role") or role}
            item["tool_calls"] = decode(fields.get("tool_calls"))
            if role == "tool" and "tool_call_id" not in item:
                item["tool_call_id"] = fields.get("id")
            inputs.append(_plain_message(item))
        elif event.name == "gen_ai.choice":
            message = decode(attrs.get("message"))
            if not isinstance(message, Mapping):
                message = {
                    "content": attrs.get("message.content", attrs.get("content")),
                    "tool_calls": decode(attrs.get("tool_calls")),
                }
            outputs.append(_plain_message({"role": "assistant", **message}))
        elif event.name == "gen_ai.content.prompt":
            inputs.extend(_chat_list(attrs.get("gen_ai.prompt")))
        elif event.name == "gen_ai.content.completion":
            outputs.extend(_chat_list(attrs.get("gen_ai.completion")))
    return inputs, outputs


def _chat_list(raw: Any) -> list[dict[str, Any]]:
    value = decode(raw)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        return []
    return [_plain_message(m) for m in value if isinstance(m, Mapping)]


def llm_messages(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The input and output messages of a model call, as OpenAI messages (empty when the span
    holds none, e.g. content capture was off)."""
    attrs = span.attributes
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        inputs = _from_parts(attrs.get("gen_ai.input.messages"))
        system = _from_parts_system(attrs.get("gen_ai.system_instructions"))
        return system + inputs, _from_parts(attrs.get("gen_ai.output.messages"))
    if (
        "llm.input_messages.0.message.role" in attrs
        or "llm.output_messages.0.message.role" in attrs
    ):
        return _openinference(attrs, "llm.input_messages."), _openinference(
            attrs, "llm.output_messages."
        )
    if "gen_ai.prompt.0.role" in attrs or "gen_ai.completion.0.content" in attrs:
        return _legacy(attrs, "gen_ai.prompt."), _legacy(attrs, "gen_ai.completion.")
    if span.events:
        return _from_events(span)
    return [], []


def _from_parts_system(raw: Any) -> list[dict[str, Any]]:
    value = decode(raw)
    if not isinstance(value, list) or not value:
        return []
    text = "".join(_text(p.get("content")) for p in value if isinstance(p, Mapping))
    return [_message("system", text)]


# --------------------------------------------------------------------------- other facts


def tool_call_of(span: Span) -> dict[str, Any]:
    """A tool span's call: ``{"id", "name", "arguments"}`` (arguments as JSON text) and
    ``result`` (text)."""
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name") or attrs.get("tool.name")
    if not name:
        name = span.name.removeprefix("execute_tool ").strip()
    arguments = attrs.get("gen_ai.tool.call.arguments", attrs.get("tool.parameters"))
    if arguments is None:
        arguments = attrs.get("input.value")
    result = attrs.get("gen_ai.tool.call.result", attrs.get("output.value"))
    call_id = attrs.get("gen_ai.tool.call.id", attrs.get("tool_call.id"))
    decoded = decode(result)
    if isinstance(decoded, Mapping):  # a serialised LangChain ToolMessage
        message = langchain_message(decoded)
        if message is not None and message["role"] == "tool":
            call_id = call_id or message.get("tool_call_id")
            result = message["content"]
    return {"id": call_id, "name": str(name), "arguments": _arguments(arguments), "result": result}


def usage_of(span: Span) -> dict[str, int] | None:
    """Token counts of a model call: ``input_tokens``, ``output_tokens``, ``total_tokens``."""
    attrs = span.attributes
    inputs = _first_int(
        attrs, ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
    )
    outputs = _first_int(
        attrs,
        (
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        ),
    )
    if inputs is None and outputs is None:
        return None
    total = _first_int(attrs, ("llm.token_count.total", "gen_ai.usage.total_tokens"))
    usage = {"input_tokens": inputs or 0, "output_tokens": outputs or 0}
    usage["total_tokens"] = (
        total if total is not None else usage["input_tokens"] + usage["output_tokens"]
    )
    return usage


def _first_int(attrs: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def model_of(span: Span) -> str | None:
    attrs = span.attributes
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def errors_of(span: Span) -> list[dict[str, Any]]:
    """The span's error status and ``exception`` events as ``{"span_id", "name", "type",
    "message"}``."""
    found = [
        (event.attributes.get("exception.type"), event.attributes.get("exception.message"))
        for event in span.events
        if event.name == "exception"
    ]
    if span.status == "ERROR" and not found:
        found.append((span.attributes.get("error.type"), span.status_message))
    return [
        {"span_id": span.span_id, "name": span.name, "type": kind, "message": message}
        for kind, message in found
    ]


def span_io(span: Span) -> tuple[Any, Any]:
    """A span's input and output: OpenInference ``input.value`` / ``output.value`` (JSON
    decoded), else the GenAI messages, else Traceloop's ``traceloop.entity.input`` /
    ``output``; ``None`` where the span says nothing."""
    attrs = span.attributes
    inputs = attrs.get("input.value")
    outputs = attrs.get("output.value")
    if inputs is None and outputs is None:
        if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
            given, answered = llm_messages(span)
            return ({"messages": given} if given else None), (
                {"messages": answered} if answered else None
            )
        inputs = attrs.get("traceloop.entity.input")
        outputs = attrs.get("traceloop.entity.output")
    return decode(inputs), decode(outputs)


def langchain_message(value: Any) -> dict[str, Any] | None:
    """A LangChain message as serialised into spans (``{"type", "data"}``, or the ``lc``
    constructor form), or an OpenAI-style dict, as an OpenAI message; ``None`` otherwise."""
    if not isinstance(value, Mapping):
        return None
    if "data" in value and isinstance(value.get("data"), Mapping):
        kind, fields = value.get("type"), value["data"]
    elif value.get("lc") == 1 and isinstance(value.get("kwargs"), Mapping):
        ident = value.get("id")
        kind = ident[-1] if isinstance(ident, list) and ident else None
        fields = value["kwargs"]
    elif "role" in value:
        return _plain_message(value)
    else:
        return None
    role = _LC_ROLES.get(str(kind))
    if role is None:
        return None
    calls = [
        _call(c.get("id"), c.get("name"), c.get("args"))
        for c in fields.get("tool_calls") or ()
        if isinstance(c, Mapping)
    ]
    return _message(role, fields.get("content"), calls, fields.get("tool_call_id"))
