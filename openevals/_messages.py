"""Message normalisation shared by every evaluator that reads chat messages.

Accepts OpenAI-style dicts, LangChain ``BaseMessage`` objects and ``{"messages": [...]}`` containers and
returns fresh OpenAI-style dicts. The caller's objects are never modified. LangChain is imported only
when a LangChain object is actually seen.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from openevals._repr import show

_ROLE_ALIASES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant"}


def is_langchain_message(obj: Any) -> bool:
    """True for LangChain ``BaseMessage`` instances, without importing LangChain."""
    return any(
        cls.__name__ == "BaseMessage" and cls.__module__.startswith("langchain_core")
        for cls in type(obj).__mro__
    )


def _tool_call_to_openai(call: Mapping[str, Any], *, index: int | None = None) -> dict[str, Any]:
    """Return an OpenAI-form tool call (``function.name`` / ``function.arguments``) as a new dict."""
    if "function" in call and isinstance(call["function"], Mapping):
        function = dict(call["function"])
        out: dict[str, Any] = {k: v for k, v in call.items() if k != "function"}
        out.setdefault("type", "function")
        out["function"] = function
        return out
    if "name" in call:
        args = call.get("args", call.get("arguments", {}))
        if isinstance(args, str):
            arguments = args
        else:
            from openevals._structure import encode_json  # any depth, names a cycle

            arguments = encode_json(args, "a tool call's arguments", sort_keys=False)
        return {
            "id": call.get("id") or "",
            "type": "function",
            "function": {"name": call["name"], "arguments": arguments},
        }
    where = f" at position {index}" if index is not None else ""
    raise ValueError(
        f"tool call{where} has neither 'function' (OpenAI form) nor 'name' (LangChain form): "
        f"{show(call)}"
    )


def _from_langchain(message: Any) -> dict[str, Any]:
    from langchain_core.messages import convert_to_openai_messages

    converted = convert_to_openai_messages(message)
    result: dict[str, Any] = dict(converted) if isinstance(converted, Mapping) else {}
    msg_id = getattr(message, "id", None)
    if msg_id is not None:
        result["id"] = msg_id
    return result


def convert_to_openai_message(message: Any) -> dict[str, Any]:
    """Convert one message (OpenAI dict or LangChain message) to a new OpenAI-style dict."""
    if is_langchain_message(message):
        return _from_langchain(message)
    if isinstance(message, Mapping):
        out = dict(message)
        if "role" not in out:
            if "type" in out and "content" in out:
                out["role"] = str(out.pop("type"))
            else:
                raise ValueError(
                    "message dicts need a 'role' key (OpenAI form, e.g. "
                    "{'role': 'user', 'content': 'hi'}); got keys "
                    + show(sorted(map(str, message)))
                )
        role = str(out["role"])
        out["role"] = _ROLE_ALIASES.get(role, role)
        if out.get("content") is None:
            out["content"] = ""
        elif isinstance(out["content"], list):
            # Block lists are copied so callers of this helper can extend them safely (blocks
            # nested deeper than deepcopy can walk are copied by the iterative fold).
            try:
                out["content"] = copy.deepcopy(out["content"])
            except RecursionError:
                out["content"] = jsonable(out["content"], "a message's content")
        tool_calls = out.get("tool_calls")
        if tool_calls:
            out["tool_calls"] = [_tool_call_to_openai(c, index=i) for i, c in enumerate(tool_calls)]
        elif "tool_calls" in out:
            del out["tool_calls"]
        return out
    raise TypeError(
        "expected a chat message as an OpenAI-style dict or a LangChain BaseMessage, got "
        f"{type(message).__name__}"
    )


def normalize_to_openai_messages_list(messages: Any) -> list[dict[str, Any]]:
    """Normalise a message, list of messages or ``{"messages": [...]}`` into OpenAI-style dicts."""
    if messages is None:
        return []
    if (isinstance(messages, Mapping) and "role" in messages) or is_langchain_message(messages):
        return [convert_to_openai_message(messages)]
    if isinstance(messages, Mapping):
        if "messages" not in messages:
            raise ValueError(
                "expected a message dict with 'role', or a container {'messages': [...]}; got a "
                f"dict with keys {show(sorted(messages))}"
            )
        messages = messages["messages"]
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
            raise ValueError(
                "expected {'messages': [...]} to hold a list of messages, got "
                f"{type(messages).__name__}"
            )
    elif not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise TypeError(
            "expected a list of chat messages (OpenAI dicts or LangChain messages), a single "
            f"message, or {{'messages': [...]}}; got {type(messages).__name__}"
        )
    return [convert_to_openai_message(m) for m in messages]


def _jsonable_leaf(value: Any) -> Any:
    if is_langchain_message(value):
        return _from_langchain(value)
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump()
    return value


def _expand_jsonable(value: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
    """The containers :func:`jsonable` descends into: mappings, lists and tuples (a set, like a
    LangChain message, is a leaf)."""
    from openevals._structure import expand_plain

    found = expand_plain(value)
    return None if found is None or found[0] == "set" else found


def _combine_jsonable(tag: Any, _: Any, labels: Sequence[Any] | None, parts: list[Any]) -> Any:
    if tag == "map":
        assert labels is not None
        return dict(zip(labels, parts, strict=True))
    return parts


def jsonable(value: Any, name: str = "value") -> Any:
    """``value`` with LangChain messages (at any depth) as OpenAI dicts and pydantic models as
    dicts, in new containers: mappings become dicts, lists and tuples lists. A value that contains
    itself raises ``ValueError`` naming ``name`` and the cycle's path."""
    from openevals._structure import fold

    return fold(value, name, _expand_jsonable, _jsonable_leaf, _combine_jsonable)


def to_json_text(
    value: Any, *, indent: int | None = None, sort_keys: bool = False, name: str = "value"
) -> str:
    """Render a value as text for a prompt: strings unchanged, everything else as JSON.

    Works at any nesting depth; a value that contains itself raises ``ValueError`` naming
    ``name`` (the caller's parameter); a value JSON cannot encode raises ``TypeError``.
    """
    if isinstance(value, str):
        return value
    plain = jsonable(value, name)
    try:
        return json.dumps(plain, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    except RecursionError:
        pass
    from openevals._structure import encode_json

    return encode_json(plain, name, sort_keys=sort_keys, ensure_ascii=False)


def text_parts(blocks: Sequence[Any]) -> list[str]:
    """The text of a content-block list: plain strings and ``{"type": "text"}`` blocks, in order."""
    return [
        block if isinstance(block, str) else str(block.get("text", ""))
        for block in blocks
        if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
    ]


def _block_text(block: Any) -> str:
    """A non-text content block as JSON (other objects as their ``str``), at any depth; a block
    that contains itself raises ``ValueError`` naming the cycle's path."""
    try:
        return json.dumps(block, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return to_json_text(block, name="a message's content block")


# Reasoning blocks, by provider: Anthropic's ``thinking`` (and ``redacted_thinking``, whose text
# is encrypted), LangChain's standard ``reasoning`` block. Their text reads as <thinking> text.
_THINKING_TEXT = {"thinking": "thinking", "reasoning": "reasoning"}


def _thinking_text(block: Mapping[str, Any]) -> str | None:
    """A reasoning block as ``<thinking>`` text, or None when ``block`` is not one."""
    kind = block.get("type")
    if kind == "redacted_thinking":
        return "<thinking>\n[redacted]\n</thinking>"
    field = _THINKING_TEXT.get(kind) if isinstance(kind, str) else None
    if field is None or not isinstance(block.get(field), str):
        return None
    return f"<thinking>\n{block[field]}\n</thinking>"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and (thinking := _thinking_text(block)) is not None:
                parts.append(thinking)
            else:
                parts.append(_block_text(block))
        return "\n".join(parts)
    return "" if content is None else str(content)


def chat_messages_to_string(messages: Any) -> str:
    """Render messages as a readable transcript: one tagged block per message.

    Assistant tool calls are shown with their name and arguments; tool results with the id of the
    call they answer.
    """
    blocks = []
    for message in normalize_to_openai_messages_list(messages):
        role = message.get("role", "unknown")
        body = _content_text(message.get("content"))
        if message.get("tool_call_id"):
            body = f"<tool_result id={message['tool_call_id']}>\n{body}\n</tool_result>"
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            body += (
                f"\n<tool_call>\n<name>{fn.get('name')}</name>\n"
                f"<arguments>{fn.get('arguments')}</arguments>\n</tool_call>"
            )
        blocks.append(f"<{role}>\n{body.strip()}\n</{role}>")
    return "\n\n".join(blocks)


def normalize_final_app_outputs_as_string(outputs: Any) -> str:
    """The text of an app's final answer: a string, a message, or the last of ``{"messages": [...]}``."""
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping) and "messages" in outputs and "role" not in outputs:
        messages = normalize_to_openai_messages_list(outputs)
        if not messages:
            raise ValueError("outputs={'messages': []} holds no message to read")
        return _content_text(messages[-1].get("content"))
    if isinstance(outputs, Mapping) and "content" in outputs:
        return _content_text(outputs["content"])
    if is_langchain_message(outputs):
        return _content_text(convert_to_openai_message(outputs).get("content"))
    raise ValueError(
        "expected `outputs` as a string, a message with 'content', or {'messages': [...]}; got "
        f"{type(outputs).__name__}"
    )
