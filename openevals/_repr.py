"""One bounded, iterative ``repr`` for values shown in error messages.

``repr()`` recurses: a value nested a few thousand levels deep raises ``RecursionError`` while
the message that was meant to describe it is being built, a value that contains itself is shown
whole, and a 10 MB string is copied into the message. :func:`show` walks dicts, lists, tuples
and sets with an explicit stack, stops at a small depth and a fixed number of items per
container, marks a container that contains itself, and cuts the text at ``limit`` characters.
For small plain values its text is exactly ``repr(value)``.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Final

LIMIT: Final = 120
"""Default length of a shown value, in characters."""

PATH_LIMIT: Final = 1_000
"""Length of a shown file path or name: any real path fits, a path-shaped 10 MB string does not."""

_DEPTH: Final = 4  # containers below this depth are shown as [...] / {...}
_ITEMS: Final = 6  # entries shown per container
_ELLIPSIS: Final = "..."
_BRACKETS: Final[dict[type, tuple[str, str]]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    dict: ("{", "}"),
}
_EMPTY: Final[dict[type, str]] = {set: "set()", frozenset: "frozenset()"}
_PLAIN: Final = frozenset({bool, float, type(None)})  # short reprs that never recurse


def _scalar(value: Any, limit: int) -> str:
    """``repr`` of a leaf, cut to about ``limit`` characters; never raises."""
    if type(value) is str:
        if len(value) > limit:
            return repr(value[:limit]) + _ELLIPSIS
        return repr(value)
    if type(value) is int and value.bit_length() > 3 * limit:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"<int of about {digits} digits>"
    if type(value) in (bytes, bytearray) and len(value) > limit:
        return repr(value[:limit]) + _ELLIPSIS
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} object nested too deeply to show>"
    except Exception:  # a __repr__ that fails must not replace the message being built
        return f"<{type(value).__name__} object>"
    if not isinstance(text, str):
        return f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[:limit] + _ELLIPSIS


def _opening(value: Any) -> tuple[str, str, list[Any], bool] | None:
    """``(open, close, children, is_mapping)`` for a container shown by :func:`show`."""
    kind = type(value)
    if kind in _BRACKETS:
        opened, closed = _BRACKETS[kind]
        if kind is dict:
            return opened, closed, list(value.items())[: _ITEMS + 1], True
        return opened, closed, list(value[: _ITEMS + 1]), False
    if kind is set or kind is frozenset:
        items = list(islice(value, _ITEMS + 1))  # never list() a huge set whole
        if kind is frozenset:
            return "frozenset({", "})", items, False
        return "{", "}", items, False
    return None


def show(value: Any, limit: int = LIMIT) -> str:
    """A ``repr``-like text of ``value`` of at most about ``limit`` characters.

    Safe for any value: recursion-free for nested dicts, lists, tuples and sets (deeper levels
    are shown as ``[...]``), a container met again inside itself is shown as ``<cycle>``, a
    ``__repr__`` that raises or recurses is replaced by ``<TypeName object>``. Never raises.
    """
    kind = type(value)
    if (kind is str and len(value) <= limit) or kind in _PLAIN:  # the common case, no walk
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + _ELLIPSIS
    parts: list[str] = []
    size = 0
    # Work items: ("v", value, depth) to show a value, ("t", text) to emit text,
    # ("x", id) to close a container (leaves the set of open containers).
    work: list[tuple[Any, ...]] = [("v", value, 0)]
    open_ids: set[int] = set()
    while work and size <= limit:
        item = work.pop()
        if item[0] == "t":
            parts.append(item[1])
            size += len(item[1])
            continue
        if item[0] == "x":
            open_ids.discard(item[1])
            continue
        current, depth = item[1], item[2]
        try:
            opening = _opening(current)
        except Exception:
            opening = None
        if opening is None:
            work.append(("t", _scalar(current, max(limit - size, 8))))
            continue
        opened, closed, children, mapping = opening
        if id(current) in open_ids:
            work.append(("t", "<cycle>"))
            continue
        if not children:
            work.append(("t", _EMPTY.get(type(current), opened + closed)))
            continue
        if depth >= _DEPTH:
            work.append(("t", opened + _ELLIPSIS + closed))
            continue
        open_ids.add(id(current))
        trailing = "," if type(current) is tuple and len(current) == 1 else ""
        pending: list[tuple[Any, ...]] = [("t", opened)]
        for index, child in enumerate(children[:_ITEMS]):
            if index:
                pending.append(("t", ", "))
            if mapping:
                pending.append(("v", child[0], depth + 1))
                pending.append(("t", ": "))
                pending.append(("v", child[1], depth + 1))
            else:
                pending.append(("v", child, depth + 1))
        if len(children) > _ITEMS:
            pending.append(("t", ", " + _ELLIPSIS))
        pending.append(("t", trailing + closed))
        pending.append(("x", id(current)))
        work.extend(reversed(pending))
    text = "".join(parts)
    if work or len(text) > limit:
        return text[:limit] + _ELLIPSIS
    return text
