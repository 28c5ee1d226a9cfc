"""Iterative (recursion-free) walks over nested values: cycle and depth checks, folds, JSON.

Python's own tools for nested data (``==``, ``json.dumps``, ``json.loads``, ``copy.deepcopy``,
``repr``) recurse, so a value that contains itself or is nested a few thousand levels deep makes
them raise ``RecursionError`` (or, for hashing deep tuples, crash the interpreter). The evaluators
keep the fast native call for ordinary values and come here only when it fails:

* :func:`fold` — a post-order fold over dicts / lists / sets with an explicit stack, which
  reports a cycle (a container that contains itself) as a :class:`ValueError` naming the
  parameter and the path, and optionally a nesting limit;
* :func:`check` — the same walk with nothing to build (cycle / depth validation);
* :func:`encode_json` — ``json.dumps`` text, identical to the C encoder's, at any depth;
* :func:`equal` — Python ``==`` at any depth;
* :func:`load_json` — ``json.loads`` at any depth.

Policy (documented for users): comparisons accept acyclic values of any depth; a value that
contains itself raises ``ValueError`` naming the parameter wherever the evaluator has to look
inside it. Messages the multiturn simulator records are limited to :data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Final

from openevals._repr import show

MAX_DEPTH: Final = 200
"""Nesting limit for messages the multiturn simulator records (see module docs)."""

_PATH_SHOWN: Final = 6  # path segments shown at each end of a long path
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


Expand = Callable[[Any], "tuple[Any, Sequence[Any], Sequence[Any] | None] | None"]
"""``expand(value)``: ``None`` for a leaf, else ``(tag, children, labels)``; ``labels`` (dict keys)
name the children in error paths (``None``: children are named by position)."""


def _segment(label: Any) -> str:
    return f"[{show(label, 40)}]"


def _path(name: str, segments: Sequence[Any]) -> str:
    if len(segments) <= 2 * _PATH_SHOWN:
        return name + "".join(map(_segment, segments))
    head = "".join(map(_segment, segments[:_PATH_SHOWN]))
    tail = "".join(map(_segment, segments[-_PATH_SHOWN:]))
    return f"{name}{head}...({len(segments) - 2 * _PATH_SHOWN} more levels)...{tail}"


def _cycle_error(name: str, inner: Sequence[Any], outer: Sequence[Any]) -> ValueError:
    return ValueError(
        f"`{name}` contains itself: {_path(name, inner)} refers back to {_path(name, outer)}, "
        "a cycle. Evaluators compare finite JSON-like values; break the cycle (or convert the "
        "value to plain data) first."
    )


def _depth_error(name: str, segments: Sequence[Any], limit: int) -> ValueError:
    return ValueError(
        f"`{name}` is nested more than {limit} levels deep (at {_path(name, segments)}); the "
        f"limit is {limit} levels. Flatten the value or store the deep part as text."
    )


def _frame_segments(frames: Sequence[list[Any]], last: Any) -> list[Any]:
    """The path of the child currently read: each open frame's label, then ``last``."""
    return [frame[5] for frame in frames[1:]] + [last]


def fold(
    value: Any,
    name: str,
    expand: Expand,
    leaf: Callable[[Any], Any],
    combine: Callable[[Any, Any, Sequence[Any] | None, list[Any]], Any],
    *,
    max_depth: int | None = None,
    too_deep: type[Exception] | None = None,
) -> Any:
    """Fold ``value`` bottom-up without recursion.

    ``expand(v)`` says whether ``v`` is a container (see :data:`Expand`); ``leaf(v)`` maps a
    leaf; ``combine(tag, container, labels, folded_children)`` maps a container once all its
    children are folded. A container met again while it is still open (a cycle) raises
    ``ValueError`` naming ``name`` and both paths; so does nesting beyond ``max_depth`` levels
    (the top-level container is level 1), or raises ``too_deep()`` when that is given. Shared,
    acyclic sub-values are simply folded twice.
    """
    top = expand(value)
    if top is None:
        return leaf(value)
    if max_depth is not None and max_depth < 1:
        raise _depth_error(name, [], max_depth)
    # frame: [container, tag, children, labels, folded, label-in-parent]
    frames: list[list[Any]] = [[value, top[0], top[1], top[2], [], None]]
    open_ids = {id(value): 0}
    while True:
        frame = frames[-1]
        children = frame[2]
        folded = frame[4]
        index = len(folded)
        if index == len(children):
            result = combine(frame[1], frame[0], frame[3], folded)
            frames.pop()
            del open_ids[id(frame[0])]
            if not frames:
                return result
            frames[-1][4].append(result)
            continue
        child = children[index]
        sub = expand(child)
        if sub is None:
            folded.append(leaf(child))
            continue
        labels = frame[3]
        label = index if labels is None else labels[index]
        level = open_ids.get(id(child))
        if level is not None:
            inner = _frame_segments(frames, label)
            raise _cycle_error(name, inner, inner[:level])
        if max_depth is not None and len(frames) >= max_depth:
            if too_deep is not None:
                raise too_deep()
            raise _depth_error(name, _frame_segments(frames, label), max_depth)
        open_ids[id(child)] = len(frames)
        frames.append([child, sub[0], sub[1], sub[2], [], label])


# --------------------------------------------------------------------------- plain data


def expand_plain(value: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
    """Dicts (any Mapping), lists, tuples, sets: the containers of JSON-like data (an
    :data:`Expand` for :func:`fold`; tags ``"map"``, ``"seq"``, ``"set"``)."""
    if type(value) in _SCALARS or isinstance(value, (str, bytes, int, float)) or value is None:
        return None
    if isinstance(value, Mapping):
        keys = list(value)
        return "map", [value[k] for k in keys], keys
    if isinstance(value, (list, tuple)):
        return "seq", value, None
    if isinstance(value, (set, frozenset)):
        return "set", list(value), None
    return None


def _nothing(*_: Any) -> None:
    return None


def check(value: Any, name: str, *, max_depth: int | None = None) -> None:
    """Raise ``ValueError`` naming ``name`` if ``value`` contains itself or is too deep."""
    fold(value, name, expand_plain, _nothing, _nothing, max_depth=max_depth)


# --------------------------------------------------------------------------- hashable forms


class Unfreezable(Exception):
    """A value has no hashable form that agrees with ``==`` (or it is nested too deeply)."""


class _TooDeepToFreeze(Unfreezable):
    pass


class _Tag:
    """Private marker inside frozen forms; equal only to itself, so no user value forges it."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"


_DICT: Final = _Tag("dict")
_LIST: Final = _Tag("list")
_TUPLE: Final = _Tag("tuple")
_SET: Final = _Tag("set")
_FREEZE_DEPTH: Final = 100


def _expand_exact(value: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
    kind = type(value)
    if kind in _SCALARS:
        return None
    if kind is dict:
        keys = list(value)
        return _DICT, [value[k] for k in keys], keys
    if kind is list:
        return _LIST, value, None
    if kind is tuple:
        return _TUPLE, value, None
    if kind is set or kind is frozenset:
        return _SET, list(value), None
    return None


def _freeze_leaf(value: Any) -> Any:
    if type(value) in _SCALARS:
        return value
    try:
        hash(value)
    except TypeError:
        raise Unfreezable from None
    return value


def _freeze_combine(tag: Any, _: Any, labels: Sequence[Any] | None, parts: list[Any]) -> Any:
    if tag is _DICT:
        assert labels is not None
        return (_DICT, frozenset(zip(labels, parts, strict=True)))
    if tag is _SET:
        return (_SET, frozenset(parts))
    return (tag, tuple(parts))


def freeze(value: Any, name: str) -> Any:
    """A hashable form of ``value``: ``freeze(a) == freeze(b)`` exactly when ``a == b``.

    Exact dicts, lists, tuples and sets become tagged frozensets / tuples (a list never equals
    a tuple, as in Python); other hashable values stay as they are. Raises
    :class:`Unfreezable` for unhashable leaves, container subclasses (their ``==`` may differ)
    and nesting beyond 100 levels (hashing deeper tuples could exhaust the C stack), and
    ``ValueError`` naming ``name`` for a value that contains itself. Top-level NaN is the
    caller's concern: ``nan == nan`` is False, but a value is always ``==`` itself in a
    container.
    """
    try:
        return fold(
            value,
            name,
            _expand_exact,
            _freeze_leaf,
            _freeze_combine,
            max_depth=_FREEZE_DEPTH,
            too_deep=_TooDeepToFreeze,
        )
    except _TooDeepToFreeze:
        check(value, name)  # a cycle longer than the limit is still a cycle
        raise


# --------------------------------------------------------------------------- JSON text

_ENCODERS: dict[tuple[bool, bool], json.JSONEncoder] = {
    (sort, ascii_only): json.JSONEncoder(sort_keys=sort, ensure_ascii=ascii_only)
    for sort in (True, False)
    for ascii_only in (True, False)
}


def _json_scalar(value: Any, quote: Callable[[str], str]) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_key(key: Any, quote: Callable[[str], str]) -> str:
    if isinstance(key, str):
        return quote(key)
    if key is None or isinstance(key, (int, float)):  # bools are ints
        return quote(_json_scalar(key, quote))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _iterative_json(value: Any, name: str, *, sort_keys: bool, ensure_ascii: bool) -> str:
    """The C encoder's output (default separators), built without recursion."""
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring

    def expand(v: Any) -> tuple[Any, Sequence[Any], Sequence[Any] | None] | None:
        if v is None or v is True or v is False or isinstance(v, (str, int, float)):
            return None
        if isinstance(v, (list, tuple)):
            return "seq", v, None
        if isinstance(v, dict):
            items = list(v.items())
            if sort_keys:
                items.sort()
            return "map", [item[1] for item in items], [item[0] for item in items]
        return None  # leaf() raises the C encoder's TypeError

    def combine(tag: Any, _: Any, labels: Sequence[Any] | None, parts: list[str]) -> str:
        if tag == "seq":
            return "[" + ", ".join(parts) + "]"
        assert labels is not None
        return (
            "{"
            + ", ".join(f"{_json_key(k, quote)}: {p}" for k, p in zip(labels, parts, strict=True))
            + "}"
        )

    return str(fold(value, name, expand, lambda v: _json_scalar(v, quote), combine))


def encode_json(value: Any, name: str, *, sort_keys: bool = True, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, sort_keys=..., ensure_ascii=...)`` that also works at any depth.

    A value that contains itself raises ``ValueError`` naming ``name`` and the cycle's path;
    non-serialisable values raise ``TypeError`` as ``json.dumps`` does.
    """
    try:
        return _ENCODERS[sort_keys, ensure_ascii].encode(value)
    except RecursionError:
        pass
    except ValueError as exc:
        if "Circular reference" not in str(exc):
            raise
        check(value, name)  # raises the precise error (dicts/lists hold the cycle)
        raise
    return _iterative_json(value, name, sort_keys=sort_keys, ensure_ascii=ensure_ascii)


# --------------------------------------------------------------------------- equality

_MISSING: Final = object()


def _iterative_equal(left: Any, right: Any) -> bool:
    """``left == right`` for acyclic values, with dicts, lists and tuples compared by hand."""
    if type(left) not in (dict, list, tuple):  # a scalar: no identity shortcut (nan != nan)
        return bool(left == right)
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue  # as Python's container comparisons do
        kind = type(a)
        if kind is not type(b) or kind not in (dict, list, tuple):
            if a != b:
                return False
            continue
        if len(a) != len(b):
            return False
        if kind is dict:
            for key, value in a.items():
                other = b.get(key, _MISSING)
                if other is _MISSING:
                    return False
                stack.append((value, other))
        else:
            stack.extend(zip(a, b, strict=True))
    return True


def equal(left: Any, right: Any, left_name: str, right_name: str) -> bool:
    """``bool(left == right)``, also for values nested deeper than Python's recursion limit.

    The native comparison runs first; only when it runs out of stack are both values checked
    for cycles (``ValueError`` naming the side and path) and compared iteratively.
    """
    try:
        return bool(left == right)
    except RecursionError:
        pass
    check(left, left_name)
    check(right, right_name)
    try:
        return _iterative_equal(left, right)
    except RecursionError:
        raise ValueError(
            f"`{left_name}` and `{right_name}` hold objects nested too deeply to compare with "
            "their own `==`; convert them to plain dicts and lists first"
        ) from None


# --------------------------------------------------------------------------- JSON parsing

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_CONSTANTS: Final = (
    ("null", None),
    ("true", True),
    ("false", False),
    ("NaN", math.nan),
    ("Infinity", math.inf),
    ("-Infinity", -math.inf),
)


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _read_key(text: str, pos: int) -> tuple[str, int]:
    """Read ``"key"`` then ``:``; returns the key and the position of its value."""
    if text[pos : pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = scanstring(text, pos + 1)
    pos = _skip(text, pos)
    if text[pos : pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _skip(text, pos + 1)


def _read_scalar(text: str, pos: int) -> tuple[Any, int]:
    if text[pos : pos + 1] == '"':
        string: str
        string, end = scanstring(text, pos + 1)
        return string, end
    number = _NUMBER.match(text, pos)
    if number is not None:
        integer, frac, exp = number.groups()
        if frac or exp:
            return float(integer + (frac or "") + (exp or "")), number.end()
        return int(integer), number.end()
    for word, constant in _CONSTANTS:
        if text.startswith(word, pos):
            return constant, pos + len(word)
    raise json.JSONDecodeError("Expecting value", text, pos)


def _iterative_loads(text: str) -> Any:
    """``json.loads(text)`` with an explicit stack of open containers instead of recursion."""
    # Each open container: [container, key]; key is None for arrays.
    stack: list[list[Any]] = []
    pos = _skip(text, 0)
    while True:
        opener = text[pos : pos + 1]
        value: Any
        if opener in ("{", "["):
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] == ("}" if opener == "{" else "]"):
                value, pos = ({} if opener == "{" else []), pos + 1
            elif opener == "{":
                key, pos = _read_key(text, pos)
                stack.append([{}, key])
                continue
            else:
                stack.append([[], None])
                continue
        else:
            value, pos = _read_scalar(text, pos)
        # Attach the value to its container; close every container that ends here.
        while stack:
            top = stack[-1]
            if top[1] is None:
                top[0].append(value)
            else:
                top[0][top[1]] = value
            pos = _skip(text, pos)
            char = text[pos : pos + 1]
            if char == ",":
                pos = _skip(text, pos + 1)
                if top[1] is not None:
                    top[1], pos = _read_key(text, pos)
                break
            if char != ("]" if top[1] is None else "}"):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
            value = stack.pop()[0]
            pos += 1
        else:
            end = _skip(text, pos)
            if end != len(text):
                raise json.JSONDecodeError("Extra data", text, end)
            return value


def load_json(text: str) -> Any:
    """``json.loads(text)``, also for documents nested deeper than Python's recursion limit."""
    try:
        return json.loads(text)
    except RecursionError:
        return _iterative_loads(text)
