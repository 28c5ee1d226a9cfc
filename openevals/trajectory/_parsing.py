"""Reading trajectories for trajectory match: messages, tool calls and their arguments.

Plain message dicts (OpenAI form, or LangChain-form tool calls ``{"name", "args"}``, and the
role aliases ``human`` / ``ai``) are read in place; other messages (LangChain objects, dicts
in other shapes) go through the shared converter. Argument JSON texts are parsed once per
evaluation. Arguments of any nesting depth are read (deep ones take an iterative path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeGuard

from openevals._messages import (
    _ROLE_ALIASES,
    convert_to_openai_message,
    is_langchain_message,
    normalize_to_openai_messages_list,
)
from openevals._repr import show
from openevals._structure import Unfreezable, encode_json, freeze, load_json

_COMMENT_MAX_ARGS_CHARS = 200
_PLAIN_SCALARS: Final = frozenset({str, int, float, bool, type(None)})

Unkeyable = Unfreezable
"""A value has no canonical hashable form (not plain JSON, or very deep): compare with ``==``."""


def _items(args: Mapping[str, Any], where: str) -> frozenset[tuple[Any, Any]]:
    """The argument dict as a set of ``(key, frozen value)`` items (see ``freeze``)."""
    return frozenset(
        [
            (k, v if type(v) in _PLAIN_SCALARS else freeze(v, f"{where}[{show(k)}]"))
            for k, v in args.items()
        ]
    )


class ParsedArgs:
    """Parsed tool-call arguments, shared by every call whose raw JSON text is identical."""

    __slots__ = ("_items", "origin", "value")

    def __init__(self, value: dict[str, Any], origin: tuple[str, int, str] | None = None) -> None:
        self.value = value
        self.origin = origin  # (side, message index, tool name), for error messages
        self._items: frozenset[tuple[Any, Any]] | None = None

    @property
    def where(self) -> str:
        """How error messages name these arguments, e.g. ``outputs[2] tool call 'search'``."""
        if self.origin is None:
            return "arguments"
        side, index, name = self.origin
        return f"{side}[{index}] tool call {show(name)} arguments"

    def items(self) -> frozenset[tuple[Any, Any]]:
        """Canonical item set (computed once); raises ``Unkeyable`` for non-JSON values or
        nesting beyond 100 levels, ``ValueError`` for arguments that contain themselves."""
        if self._items is None:
            self._items = _items(self.value, self.where)
        return self._items


class ToolCall:
    """One tool call: tool name, parsed arguments and the index of the message holding it."""

    __slots__ = ("args", "message_index", "name", "parsed")

    def __init__(self, name: str, parsed: ParsedArgs, message_index: int) -> None:
        self.name = name
        self.parsed = parsed
        self.args = parsed.value
        self.message_index = message_index

    def describe(self) -> str:
        """``name(args-json)``, arguments shortened for comments."""
        try:
            text = encode_json(self.args, self.parsed.where, ensure_ascii=False)
        except (TypeError, ValueError):
            text = show(self.args)
        if len(text) > _COMMENT_MAX_ARGS_CHARS:
            text = text[: _COMMENT_MAX_ARGS_CHARS - 3] + "..."
        return f"{self.name}({text})"

    def __repr__(self) -> str:
        return f"ToolCall({self.describe()} at message {self.message_index})"


class ParsedMessage:
    """The parts of a message strict matching looks at: its role and its tool calls."""

    __slots__ = ("calls", "role")

    def __init__(self, role: str, calls: list[ToolCall]) -> None:
        self.role = role
        self.calls = calls


def _normalize(value: Any, side: str) -> list[Any]:
    try:
        return normalize_to_openai_messages_list(value)
    except RecursionError:
        raise ValueError(
            f"`{side}` is nested too deeply to read as a trajectory; pass a list of message dicts"
        ) from None
    except (TypeError, ValueError) as exc:
        error = ValueError if isinstance(exc, ValueError) else TypeError
        raise error(
            f"`{side}` must be a trajectory: a list of OpenAI-style message dicts or LangChain "
            f"messages, a single message, or {{'messages': [...]}}. {exc}"
        ) from exc


def _langchain_parts(message: Any) -> dict[str, Any]:
    """Role and tool calls of a LangChain message, read from its attributes (no conversion)."""
    kind = str(getattr(message, "type", ""))
    calls = getattr(message, "tool_calls", None) or []
    return {
        "role": _ROLE_ALIASES.get(kind, kind),
        "tool_calls": [{"name": c.get("name"), "args": c.get("args")} for c in calls],
    }


def _convert(message: Any, side: str, index: int) -> dict[str, Any]:
    try:
        return convert_to_openai_message(message)
    except RecursionError:  # the converter serialises arguments and copies content recursively
        if is_langchain_message(message):
            return _langchain_parts(message)
        raise ValueError(
            f"`{side}` message {index} is nested too deeply to convert; pass it as a plain "
            "message dict"
        ) from None
    except (TypeError, ValueError) as exc:
        error = ValueError if isinstance(exc, ValueError) else TypeError
        raise error(f"`{side}` message {index}: {exc}") from exc


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or isinstance(value, Mapping)


def _call_parts(call: Any, side: str, index: int, position: int) -> tuple[Any, Any]:
    """``(name, raw arguments)`` of a tool call in OpenAI or LangChain form."""
    if not _is_mapping(call):
        return None, None
    function = call.get("function")
    if _is_mapping(function):
        return function.get("name"), function.get("arguments")
    if "name" in call:
        return call.get("name"), call.get("args", call.get("arguments", {}))
    raise ValueError(
        f"`{side}` message {index}: tool call at position {position} has neither 'function' "
        f"(OpenAI form) nor 'name' (LangChain form): {show(call)}"
    )


class _Parser:
    """Reads one trajectory; JSON argument texts are parsed once per evaluation (shared cache)."""

    __slots__ = ("cache",)

    def __init__(self) -> None:
        self.cache: dict[str, ParsedArgs] = {}

    def arguments(self, raw: Any, side: str, message_index: int, name: str) -> ParsedArgs:
        origin = (side, message_index, name)
        if isinstance(raw, str):
            cached = self.cache.get(raw)
            if cached is None:
                value = _load_arguments(str(raw), side, message_index, name)
                cached = self.cache[raw] = ParsedArgs(value, origin)
            return cached
        if raw is None:
            return ParsedArgs({})
        if isinstance(raw, Mapping):
            return ParsedArgs(raw if isinstance(raw, dict) else dict(raw), origin)
        raise ValueError(
            f"`{side}` message {message_index}, tool call {show(name)}: arguments must be a JSON "
            f"object string or a dict, got {type(raw).__name__}"
        )

    def message(
        self, message: Mapping[str, Any], side: str, index: int, role: str | None = None
    ) -> ParsedMessage:
        if role is None:
            role = message.get("role", "")
            if type(role) is not str:
                role = str(role)
        raw_calls = message.get("tool_calls")
        calls: list[ToolCall] = []
        if not raw_calls:
            return ParsedMessage(role, calls)
        for position, call in enumerate(raw_calls):
            name, raw_args = _call_parts(call, side, index, position)
            if type(name) is not str or not name:
                raise ValueError(
                    f"`{side}` message {index}: tool call {position} has no tool name; expected "
                    "{'function': {'name': ..., 'arguments': ...}} (OpenAI form) or "
                    f"{{'name': ..., 'args': ...}} (LangChain form), got {show(call)}"
                )
            parsed = self.arguments(raw_args, side, index, name)
            calls.append(ToolCall(name, parsed, index))
        return ParsedMessage(role, calls)

    def trajectory(self, value: Any, side: str) -> list[ParsedMessage]:
        """Normalise a trajectory and parse every tool call's arguments.

        ``side`` (``"outputs"`` / ``"reference_outputs"``) is used in error messages. Plain
        message dicts are read in place (OpenAI- or LangChain-form tool calls, ``human`` /
        ``ai`` role aliases, ``{"type": ..., "content": ...}``); anything else goes through
        the shared converter.
        """
        messages = value
        if type(value) is dict:
            if "role" in value:
                messages = [value]  # a single message
            else:
                inner = value.get("messages")
                if type(inner) is list or type(inner) is tuple:
                    messages = inner  # {"messages": [...]}: read the list in place
        elif is_langchain_message(value):
            messages = [value]
        if type(messages) is not list and type(messages) is not tuple:
            messages = _normalize(value, side)
        parsed = []
        for index, message in enumerate(messages):
            if type(message) is dict:
                role = message.get("role")
                if role is None and "type" in message and "content" in message:
                    role = str(message["type"])
                if type(role) is str:
                    role = _ROLE_ALIASES.get(role, role)
                    raw_calls = message.get("tool_calls")
                    if not raw_calls:  # most messages: nothing to parse
                        parsed.append(ParsedMessage(role, []))
                        continue
                    if type(raw_calls) is list or type(raw_calls) is tuple:
                        parsed.append(self.message(message, side, index, role))
                        continue
            parsed.append(self.message(_convert(message, side, index), side, index))
        return parsed


def _load_arguments(raw: str, side: str, message_index: int, name: str) -> dict[str, Any]:
    where = f"`{side}` message {message_index}, tool call {show(name)}"
    try:
        value = load_json(raw)
    except ValueError as exc:
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        raise ValueError(
            f"{where}: arguments are not valid JSON ({exc.args[0] if exc.args else exc}); "
            f"got {show(shown)}. Tool-call arguments must be a JSON object string such as "
            '\'{"city": "Paris"}\' or a dict.'
        ) from None
    if not isinstance(value, dict):
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        raise ValueError(
            f"{where}: arguments must be a JSON object, got a JSON {type(value).__name__}: "
            f"{show(shown)}"
        )
    return value


def parse_trajectory(value: Any, side: str) -> list[ParsedMessage]:
    """Normalise one trajectory and parse its tool calls (see :class:`_Parser`)."""
    return _Parser().trajectory(value, side)


def flatten_calls(messages: Iterable[ParsedMessage]) -> list[ToolCall]:
    return [call for message in messages for call in message.calls]
