"""Trajectory matching: compare the tool calls an agent made with a reference trajectory.

Four trajectory modes:

* ``strict`` - message by message: same number of messages, same role at every position, tool
  calls present at the same positions, and within each message the calls pair up one-to-one
  (order inside a message is free, order across messages is not). Message content is not compared.
* ``unordered`` - the tool calls of both trajectories are the same multiset (layout ignored).
* ``superset`` - every reference call is matched by a distinct output call.
* ``subset`` - every output call is matched by a distinct reference call.

Two calls can be paired when they name the same tool and the arguments matcher for that tool
accepts them (``exact``, ``ignore``, ``subset``, ``superset``, a list of field paths or a
comparator). Pairing is solved as a maximum bipartite matching, never greedily, so the verdict does
not depend on the order in which candidate calls appear. Calls whose matcher is an equivalence
(exact, ignore, field paths) are paired by counting per canonical key, which is linear; subset and
superset argument modes cancel identical calls first and only then build a candidate graph through
an inverted index of argument items; comparator overrides are asked about every same-name pair.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeGuard, cast

from openevals._matching import maximum_bipartite_matching
from openevals._messages import convert_to_openai_message, normalize_to_openai_messages_list
from openevals.types import (
    EvaluatorResult,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
    TrajectoryMatchMode,
)
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = [
    "ToolArgsMatchMode",
    "ToolArgsMatchOverrides",
    "TrajectoryMatchMode",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_match_evaluator",
]

TRAJECTORY_MATCH_MODES: Final = ("strict", "unordered", "subset", "superset")
TOOL_ARGS_MATCH_MODES: Final = ("exact", "ignore", "subset", "superset")

ArgsComparator = Callable[[dict[str, Any], dict[str, Any]], Any]

# How many unmatched calls a comment lists before summarising the rest.
_COMMENT_MAX_CALLS = 5
_COMMENT_MAX_ARGS_CHARS = 200


# --------------------------------------------------------------------------- canonical keys


class _Unkeyable(Exception):
    """A value has no canonical hashable form (not plain JSON); compare it with ``==`` instead."""


class _Tag:
    """Private marker inside frozen containers; equal only to itself, so no user value forges it."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


_PLAIN_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_DICT_TAG: Final = _Tag("dict")
_LIST_TAG: Final = _Tag("list")


def _freeze(value: Any) -> Any:
    """A hashable form of a value: two values are ``==`` iff their frozen forms are ``==``.

    Dicts and lists become tagged frozensets / tuples; other hashable values stay as they are
    (hashing agrees with ``==``); anything else raises ``_Unkeyable``.
    """
    if isinstance(value, dict):
        return (_DICT_TAG, _items(value))
    if isinstance(value, list):
        return (_LIST_TAG, tuple([_freeze(v) for v in value]))
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable from None
    return value


def _items(args: dict[str, Any]) -> frozenset[tuple[Any, Any]]:
    """The argument dict as a set of ``(key, frozen value)`` items."""
    try:
        return frozenset(args.items())  # flat argument dicts: all values hashable
    except TypeError:
        return frozenset(
            [(k, v if type(v) in _PLAIN_SCALARS else _freeze(v)) for k, v in args.items()]
        )


_MISSING: Final = object()


def _get_path(args: Any, path: tuple[str, ...]) -> Any:
    current = args
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return _MISSING
        current = current[part]
    return current


# --------------------------------------------------------------------------- parsed trajectories


class ParsedArgs:
    """Parsed tool-call arguments, shared by every call whose raw JSON text is identical."""

    __slots__ = ("_items", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self._items: frozenset[tuple[Any, Any]] | None = None

    def items(self) -> frozenset[tuple[Any, Any]]:
        """Canonical item set (computed once); raises ``_Unkeyable`` for non-JSON values."""
        if self._items is None:
            self._items = _items(self.value)
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
            text = json.dumps(self.args, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            text = repr(self.args)
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


# Plain dict messages with these roles and OpenAI-form tool calls are exactly what message
# normalisation would return, so they are read in place; other roles ("human", "ai", ...),
# LangChain messages and LangChain-form tool calls go through the shared converter.
_CANONICAL_ROLES: Final = frozenset(
    {"user", "assistant", "system", "tool", "developer", "function"}
)


def _normalize(value: Any, side: str) -> list[Any]:
    try:
        return normalize_to_openai_messages_list(value)
    except (TypeError, ValueError) as exc:
        error = ValueError if isinstance(exc, ValueError) else TypeError
        raise error(
            f"`{side}` must be a trajectory: a list of OpenAI-style message dicts or LangChain "
            f"messages, a single message, or {{'messages': [...]}}. {exc}"
        ) from exc


def _convert(message: Any, side: str, index: int) -> dict[str, Any]:
    try:
        return convert_to_openai_message(message)
    except (TypeError, ValueError) as exc:
        error = ValueError if isinstance(exc, ValueError) else TypeError
        raise error(f"`{side}` message {index}: {exc}") from exc


def _has_openai_calls(message: dict[str, Any]) -> bool:
    """True when every tool call is already in OpenAI form, as normalisation would leave it."""
    calls = message["tool_calls"]
    if type(calls) is not list:
        return False
    for call in calls:
        if type(call) is not dict or type(call.get("function")) is not dict:
            return False
    return True


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or isinstance(value, Mapping)


class _Parser:
    """Reads one trajectory; JSON argument texts are parsed once per evaluation (shared cache)."""

    __slots__ = ("cache",)

    def __init__(self) -> None:
        self.cache: dict[str, ParsedArgs] = {}

    def arguments(self, raw: Any, side: str, message_index: int, name: str) -> ParsedArgs:
        if type(raw) is str:
            cached = self.cache.get(raw)
            if cached is None:
                cached = self.cache[raw] = ParsedArgs(
                    _load_arguments(raw, side, message_index, name)
                )
            return cached
        if raw is None:
            return ParsedArgs({})
        if isinstance(raw, str):
            return ParsedArgs(_load_arguments(str(raw), side, message_index, name))
        if isinstance(raw, dict):
            return ParsedArgs(raw)
        if isinstance(raw, Mapping):
            return ParsedArgs(dict(raw))
        raise ValueError(
            f"`{side}` message {message_index}, tool call {name!r}: arguments must be a JSON "
            f"object string or a dict, got {type(raw).__name__}"
        )

    def message(self, message: dict[str, Any], side: str, index: int) -> ParsedMessage:
        role = message.get("role", "")
        if type(role) is not str:
            role = str(role)
        raw_calls = message.get("tool_calls")
        calls: list[ToolCall] = []
        if not raw_calls:
            return ParsedMessage(role, calls)
        for position, call in enumerate(raw_calls):
            function = call.get("function") if _is_mapping(call) else None
            name = function.get("name") if _is_mapping(function) else None
            if type(name) is not str or not name:
                raise ValueError(
                    f"`{side}` message {index}: tool call {position} has no tool name; expected "
                    "{'function': {'name': ..., 'arguments': ...}} (OpenAI form) or "
                    f"{{'name': ..., 'args': ...}} (LangChain form), got {call!r}"
                )
            assert function is not None
            parsed = self.arguments(function.get("arguments"), side, index, name)
            calls.append(ToolCall(name, parsed, index))
        return ParsedMessage(role, calls)

    def trajectory(self, value: Any, side: str) -> list[ParsedMessage]:
        """Normalise a trajectory and parse every tool call's arguments.

        ``side`` (``"outputs"`` / ``"reference_outputs"``) is used in error messages.
        """
        messages = value
        if type(value) is dict and "role" not in value:
            inner = value.get("messages")
            if type(inner) is list or type(inner) is tuple:
                messages = inner  # {"messages": [...]}: read the list in place
        if type(messages) is not list and type(messages) is not tuple:
            messages = _normalize(value, side)
        parsed = []
        for index, message in enumerate(messages):
            if type(message) is dict:
                role = message.get("role")
                if type(role) is str and role in _CANONICAL_ROLES:
                    if not message.get("tool_calls"):  # most messages: nothing to parse
                        parsed.append(ParsedMessage(role, []))
                        continue
                    if _has_openai_calls(message):
                        parsed.append(self.message(message, side, index))
                        continue
            parsed.append(self.message(_convert(message, side, index), side, index))
        return parsed


def _load_arguments(raw: str, side: str, message_index: int, name: str) -> dict[str, Any]:
    where = f"`{side}` message {message_index}, tool call {name!r}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        raise ValueError(
            f"{where}: arguments are not valid JSON ({exc.args[0] if exc.args else exc}); "
            f"got {shown!r}. Tool-call arguments must be a JSON object string such as "
            '\'{"city": "Paris"}\' or a dict.'
        ) from None
    if not isinstance(value, dict):
        shown = raw if len(raw) <= 80 else raw[:77] + "..."
        raise ValueError(
            f"{where}: arguments must be a JSON object, got a JSON {type(value).__name__}: {shown!r}"
        )
    return value


def parse_trajectory(value: Any, side: str) -> list[ParsedMessage]:
    """Normalise one trajectory and parse its tool calls (see :class:`_Parser`)."""
    return _Parser().trajectory(value, side)


def flatten_calls(messages: Iterable[ParsedMessage]) -> list[ToolCall]:
    return [call for message in messages for call in message.calls]


# --------------------------------------------------------------------------- argument rules


class ArgsRule:
    """How the arguments of two calls of one tool are compared.

    ``kind`` is one of ``exact``, ``ignore``, ``subset``, ``superset`` (output args are a
    subset/superset of the reference args), ``paths`` (the listed dotted paths must be present on
    both sides and equal) or ``custom`` (a comparator ``(output_args, reference_args) -> bool``).
    """

    __slots__ = ("comparator", "kind", "paths")

    def __init__(
        self,
        kind: str,
        *,
        paths: tuple[tuple[str, ...], ...] = (),
        comparator: ArgsComparator | None = None,
    ) -> None:
        self.kind = kind
        self.paths = paths
        self.comparator = comparator

    def matches(self, output_args: dict[str, Any], reference_args: dict[str, Any]) -> bool:
        """Pairwise predicate (used for comparators and for values without a canonical key)."""
        kind = self.kind
        if kind == "exact":
            return output_args == reference_args
        if kind == "ignore":
            return True
        if kind == "subset":
            return all(
                k in reference_args and reference_args[k] == v for k, v in output_args.items()
            )
        if kind == "superset":
            return all(k in output_args and output_args[k] == v for k, v in reference_args.items())
        if kind == "paths":
            for path in self.paths:
                left, right = _get_path(output_args, path), _get_path(reference_args, path)
                if left is _MISSING or right is _MISSING or left != right:
                    return False
            return True
        assert self.comparator is not None
        return bool(self.comparator(output_args, reference_args))

    def key(self, call: ToolCall) -> Any:
        """Canonical key for equivalence kinds (``exact``/``paths``); ``_MISSING`` = unmatchable."""
        if self.kind == "exact":
            return call.parsed.items()
        frozen = []
        for path in self.paths:
            value = _get_path(call.args, path)
            if value is _MISSING:
                return _MISSING
            frozen.append(_freeze(value))
        return tuple(frozen)


_OVERRIDE_HELP = (
    "accepted: one of 'exact', 'ignore', 'subset', 'superset', a non-empty list of argument paths "
    "that must be equal (dotted paths reach into nested objects, e.g. ['city', 'filters.date']), "
    "or a callable (output_args, reference_args) -> bool"
)


def _mode_rule(value: str) -> ArgsRule:
    return ArgsRule(value)


def _override_rule(tool: str, value: Any) -> ArgsRule | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value not in TOOL_ARGS_MATCH_MODES:
            raise ValueError(
                f"tool_args_match_overrides[{tool!r}] = {value!r} is not a valid override; "
                + _OVERRIDE_HELP
            )
        return _mode_rule(value)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(
                f"tool_args_match_overrides[{tool!r}] is an empty list, which would compare "
                "nothing (use 'ignore' for that); " + _OVERRIDE_HELP
            )
        paths = []
        for path in value:
            parts = tuple(path.split(".")) if isinstance(path, str) else ()
            if not parts or not all(parts):
                raise ValueError(
                    f"tool_args_match_overrides[{tool!r}] contains {path!r}, which is not a "
                    "field path (a non-empty string, dots separating nested keys); "
                    + _OVERRIDE_HELP
                )
            paths.append(parts)
        return ArgsRule("paths", paths=tuple(paths))
    if callable(value):
        return ArgsRule("custom", comparator=value)
    raise ValueError(
        f"tool_args_match_overrides[{tool!r}] = {value!r} ({type(value).__name__}) is not a valid "
        "override; " + _OVERRIDE_HELP
    )


class MatchConfig:
    """Validated, immutable settings of one trajectory evaluator."""

    __slots__ = ("default_rule", "mode", "overrides")

    def __init__(
        self,
        *,
        trajectory_match_mode: str = "strict",
        tool_args_match_mode: str = "exact",
        tool_args_match_overrides: Mapping[str, Any] | None = None,
    ) -> None:
        if trajectory_match_mode not in TRAJECTORY_MATCH_MODES:
            raise ValueError(
                f"trajectory_match_mode must be one of {', '.join(map(repr, TRAJECTORY_MATCH_MODES))}; "
                f"got {trajectory_match_mode!r}"
            )
        if tool_args_match_mode not in TOOL_ARGS_MATCH_MODES:
            raise ValueError(
                f"tool_args_match_mode must be one of {', '.join(map(repr, TOOL_ARGS_MATCH_MODES))}; "
                f"got {tool_args_match_mode!r}"
            )
        overrides: dict[str, ArgsRule] = {}
        if tool_args_match_overrides is not None:
            if not isinstance(tool_args_match_overrides, Mapping):
                raise TypeError(
                    "tool_args_match_overrides must be a dict mapping tool names to overrides; got "
                    f"{type(tool_args_match_overrides).__name__}"
                )
            for tool, value in tool_args_match_overrides.items():
                if not isinstance(tool, str):
                    raise TypeError(
                        "tool_args_match_overrides keys must be tool names (str); got "
                        f"{tool!r} ({type(tool).__name__})"
                    )
                rule = _override_rule(tool, value)
                if rule is not None:
                    overrides[tool] = rule
        self.mode = trajectory_match_mode
        self.default_rule = _mode_rule(tool_args_match_mode)
        self.overrides = overrides

    def rule_for(self, tool_name: str) -> ArgsRule:
        return self.overrides.get(tool_name, self.default_rule)


# --------------------------------------------------------------------------- matching


def _match_by_key(keys_out: Sequence[Any], keys_ref: Sequence[Any]) -> tuple[list[int], list[int]]:
    """Maximum matching when matching is an equivalence: pair equal keys, earliest first."""
    pool: dict[Any, list[int]] = {}
    unmatched_ref: list[int] = []
    for j in range(len(keys_ref) - 1, -1, -1):
        key = keys_ref[j]
        if key is _MISSING:
            unmatched_ref.append(j)
        else:
            pool.setdefault(key, []).append(j)
    unmatched_out: list[int] = []
    for i, key in enumerate(keys_out):
        candidates = pool.get(key) if key is not _MISSING else None
        if candidates:
            candidates.pop()
        else:
            unmatched_out.append(i)
    for remaining in pool.values():
        unmatched_ref.extend(remaining)
    unmatched_ref.sort()
    return unmatched_out, unmatched_ref


def _unmatched_from_matching(
    matching: Sequence[int | None], n_right: int
) -> tuple[list[int], list[int]]:
    matched_right = {m for m in matching if m is not None}
    unmatched_left = [i for i, m in enumerate(matching) if m is None]
    unmatched_right = [j for j in range(n_right) if j not in matched_right]
    return unmatched_left, unmatched_right


def _match_pairwise(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """General case: ask the rule about every pair, then solve the bipartite matching."""
    adjacency = [
        [j for j, ref in enumerate(refs) if rule.matches(out.args, ref.args)] for out in outs
    ]
    matching = maximum_bipartite_matching(len(outs), len(refs), adjacency)
    return _unmatched_from_matching(matching, len(refs))


def _match_containment(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """``subset``/``superset`` argument modes (a preorder on argument item sets).

    Identical calls are paired first (safe: containment is reflexive and transitive, so some maximum
    matching pairs any two identical calls), the remainder is matched through an inverted index of
    argument items and Hopcroft-Karp.
    """
    items_out = [c.parsed.items() for c in outs]
    items_ref = [c.parsed.items() for c in refs]
    rest_out, rest_ref = _match_by_key(items_out, items_ref)
    if not rest_out or not rest_ref:
        return rest_out, rest_ref
    # "small" sides must be contained in "big" sides: superset mode = reference ⊆ output.
    if rule.kind == "superset":
        small_idx, small_items, big_idx, big_items = rest_ref, items_ref, rest_out, items_out
    else:
        small_idx, small_items, big_idx, big_items = rest_out, items_out, rest_ref, items_ref
    index: dict[Any, list[int]] = {}
    for pos, b in enumerate(big_idx):
        for item in big_items[b]:
            index.setdefault(item, []).append(pos)
    every = list(range(len(big_idx)))
    adjacency: list[list[int]] = []
    for s in small_idx:
        wanted = small_items[s]
        if not wanted:
            adjacency.append(every)
            continue
        best: list[int] | None = None
        for item in wanted:
            posting = index.get(item)
            if posting is None:
                best = []
                break
            if best is None or len(posting) < len(best):
                best = posting
        assert best is not None
        adjacency.append([pos for pos in best if wanted <= big_items[big_idx[pos]]])
    matching = maximum_bipartite_matching(len(small_idx), len(big_idx), adjacency)
    small_un, big_un = _unmatched_from_matching(matching, len(big_idx))
    small_left = [small_idx[k] for k in small_un]
    big_left = [big_idx[k] for k in big_un]
    if rule.kind == "superset":
        return sorted(big_left), sorted(small_left)
    return sorted(small_left), sorted(big_left)


def _match_same_tool(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """Maximum matching between calls of one tool; returns unmatched positions on each side."""
    kind = rule.kind
    if kind == "ignore":
        n = min(len(outs), len(refs))
        return list(range(n, len(outs))), list(range(n, len(refs)))
    try:
        if kind in ("exact", "paths"):
            return _match_by_key([rule.key(c) for c in outs], [rule.key(c) for c in refs])
        if kind in ("subset", "superset"):
            return _match_containment(rule, outs, refs)
    except _Unkeyable:
        pass  # values outside plain JSON: fall back to pairwise ``==`` comparisons
    return _match_pairwise(rule, outs, refs)


def _pairs(config: MatchConfig, out: ToolCall, ref: ToolCall) -> bool:
    return out.name == ref.name and config.rule_for(out.name).matches(out.args, ref.args)


def _small_perfect_match(
    config: MatchConfig, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> bool:
    """Fast check for zero-, one- and two-call lists: is there a perfect matching?"""
    if not outs:
        return True
    if len(outs) == 1:
        return _pairs(config, outs[0], refs[0])
    o0, o1 = outs
    r0, r1 = refs
    return (_pairs(config, o0, r0) and _pairs(config, o1, r1)) or (
        _pairs(config, o0, r1) and _pairs(config, o1, r0)
    )


def match_tool_calls(
    config: MatchConfig, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[ToolCall], list[ToolCall]]:
    """A maximum matching between two lists of calls; returns the unmatched (outputs, references).

    Calls can only pair with calls of the same tool, so each tool is matched on its own.
    """
    if len(outs) == len(refs) <= 2 and _small_perfect_match(config, outs, refs):
        return [], []
    by_name: dict[str, tuple[list[ToolCall], list[ToolCall]]] = {}
    for side, calls in enumerate((outs, refs)):
        for call in calls:
            lists = by_name.get(call.name)
            if lists is None:
                lists = by_name[call.name] = ([], [])
            lists[side].append(call)
    unmatched_out: list[ToolCall] = []
    unmatched_ref: list[ToolCall] = []
    for name, (tool_outs, tool_refs) in by_name.items():
        if not tool_outs or not tool_refs:
            unmatched_out.extend(tool_outs)
            unmatched_ref.extend(tool_refs)
            continue
        un_out, un_ref = _match_same_tool(config.rule_for(name), tool_outs, tool_refs)
        unmatched_out.extend(tool_outs[i] for i in un_out)
        unmatched_ref.extend(tool_refs[j] for j in un_ref)
    return unmatched_out, unmatched_ref


# --------------------------------------------------------------------------- verdicts


def _describe_calls(calls: Sequence[ToolCall]) -> str:
    shown = ", ".join(c.describe() for c in calls[:_COMMENT_MAX_CALLS])
    if len(calls) > _COMMENT_MAX_CALLS:
        shown += f", ... and {len(calls) - _COMMENT_MAX_CALLS} more"
    return shown


def _order(calls: list[ToolCall]) -> list[ToolCall]:
    return sorted(calls, key=lambda c: c.message_index)


def _unmatched_comment(
    unmatched_out: list[ToolCall], unmatched_ref: list[ToolCall], *, in_message: bool = False
) -> str:
    parts = []
    where = " in that message" if in_message else ""
    if unmatched_ref:
        parts.append(
            f"{len(unmatched_ref)} reference tool call(s) not matched by any output call{where}: "
            + _describe_calls(_order(unmatched_ref))
        )
    if unmatched_out:
        parts.append(
            f"{len(unmatched_out)} output tool call(s) not matched by any reference call{where}: "
            + _describe_calls(_order(unmatched_out))
        )
    return "; ".join(parts)


def _strict_divergence(
    config: MatchConfig, outs: Sequence[ParsedMessage], refs: Sequence[ParsedMessage], index: int
) -> str | None:
    out, ref = outs[index], refs[index]
    if out.role != ref.role:
        return f"role differs (outputs {out.role!r}, reference_outputs {ref.role!r})"
    if bool(out.calls) != bool(ref.calls):
        has, lacks = (
            ("outputs", "reference_outputs") if out.calls else ("reference_outputs", "outputs")
        )
        return f"{has} has tool calls but {lacks} has none"
    if not out.calls:
        return None
    unmatched_out, unmatched_ref = match_tool_calls(config, out.calls, ref.calls)
    if not unmatched_out and not unmatched_ref:
        return None
    return "tool calls differ: " + _unmatched_comment(unmatched_out, unmatched_ref, in_message=True)


def _strict(
    config: MatchConfig, outs: list[ParsedMessage], refs: list[ParsedMessage]
) -> tuple[bool, str | None]:
    length_note = None
    if len(outs) != len(refs):
        length_note = (
            f"outputs has {len(outs)} messages, reference_outputs has {len(refs)} (length mismatch)"
        )
    for index in range(min(len(outs), len(refs))):
        reason = _strict_divergence(config, outs, refs, index)
        if reason is not None:
            comment = f"first divergence at message {index}: {reason}"
            if length_note:
                comment += f"; also {length_note}"
            return False, comment
    if length_note:
        return False, f"first divergence at message {min(len(outs), len(refs))}: {length_note}"
    return True, None


def _unordered_family(
    config: MatchConfig, outs: list[ToolCall], refs: list[ToolCall]
) -> tuple[bool, str | None]:
    unmatched_out, unmatched_ref = match_tool_calls(config, outs, refs)
    mode = config.mode
    if mode == "superset":
        failed, unmatched_out = bool(unmatched_ref), []
    elif mode == "subset":
        failed, unmatched_ref = bool(unmatched_out), []
    else:
        failed = bool(unmatched_out or unmatched_ref)
    if not failed:
        return True, None
    counts = f"outputs have {len(outs)} tool call(s), reference_outputs {len(refs)}"
    return False, f"{counts}; " + _unmatched_comment(unmatched_out, unmatched_ref)


def evaluate_trajectories(
    config: MatchConfig, outputs: Any, reference_outputs: Any
) -> tuple[bool, str | None]:
    """The pure core of every trajectory match evaluator: ``(score, comment)``."""
    parser = _Parser()
    parsed_out = parser.trajectory(outputs, "outputs")
    parsed_ref = parser.trajectory(reference_outputs, "reference_outputs")
    if config.mode == "strict":
        return _strict(config, parsed_out, parsed_ref)
    return _unordered_family(config, flatten_calls(parsed_out), flatten_calls(parsed_ref))


def make_scorer(config: MatchConfig) -> Callable[..., tuple[bool, str | None]]:
    """A scorer for ``_run_evaluator``: extra keyword arguments (``inputs``, ...) are ignored."""

    def scorer(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> tuple[bool, str | None]:
        return evaluate_trajectories(config, outputs, reference_outputs)

    return scorer


# --------------------------------------------------------------------------- factories


def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Callable[..., EvaluatorResult]:
    """Build an evaluator comparing an agent trajectory's tool calls with a reference trajectory.

    Args:
        trajectory_match_mode: ``"strict"`` (same messages, roles and per-message tool calls, in
            order), ``"unordered"`` (same multiset of tool calls), ``"subset"`` (every output call
            appears in the reference) or ``"superset"`` (every reference call appears in the output).
        tool_args_match_mode: how arguments of two calls of the same tool are compared:
            ``"exact"``, ``"ignore"``, ``"subset"`` (output args within reference args) or
            ``"superset"`` (output args include all reference args).
        tool_args_match_overrides: per tool name, a mode string, a list of (dotted) argument paths
            that must be present and equal on both sides, or a comparator
            ``(output_args, reference_args) -> bool``.

    The evaluator takes ``outputs`` and ``reference_outputs`` (lists of OpenAI-style dicts or
    LangChain messages, a single message, or ``{"messages": [...]}``) and returns
    ``{"key": "trajectory_<mode>_match", "score": bool, "comment": ...}``; the comment explains a
    failed match. Invalid options raise ``ValueError`` here, at creation.
    """
    config = MatchConfig(
        trajectory_match_mode=trajectory_match_mode,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )
    key = f"trajectory_{config.mode}_match"
    scorer = make_scorer(config)

    def _trajectory_match_evaluator(
        *, outputs: Any, reference_outputs: Any, **kwargs: Any
    ) -> EvaluatorResult:
        result = _run_evaluator(
            run_name=key,
            scorer=scorer,
            feedback_key=key,
            outputs=outputs,
            reference_outputs=reference_outputs,
            **kwargs,
        )
        return cast(EvaluatorResult, result)

    return _trajectory_match_evaluator


def create_async_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Callable[..., Awaitable[EvaluatorResult]]:
    """Async twin of :func:`create_trajectory_match_evaluator` (same options, same results)."""
    config = MatchConfig(
        trajectory_match_mode=trajectory_match_mode,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )
    key = f"trajectory_{config.mode}_match"
    scorer = make_scorer(config)

    async def _async_trajectory_match_evaluator(
        *, outputs: Any, reference_outputs: Any, **kwargs: Any
    ) -> EvaluatorResult:
        result = await _arun_evaluator(
            run_name=key,
            scorer=scorer,
            feedback_key=key,
            outputs=outputs,
            reference_outputs=reference_outputs,
            **kwargs,
        )
        return cast(EvaluatorResult, result)

    return _async_trajectory_match_evaluator
