"""Turn retrieved and reference items into hashable identities (and graded relevances).

Accepted items:

* ``str`` / ``int`` - the item is its own identity (``1`` and ``"1"`` differ);
* mappings with ``"id"`` and/or ``"content"`` (``"page_content"`` is read as content too);
* objects with ``.id`` and/or ``.page_content`` / ``.content`` attributes, e.g. LangChain or
  Haystack ``Document`` - recognised by attribute, no framework is imported.

Reference items may carry a graded relevance: a ``"relevance"`` entry in a mapping, a
``metadata["relevance"]`` entry on a document object, or an ``(item, relevance)`` pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import compress
from operator import itemgetter
from typing import Any, Literal, NamedTuple, Union, cast

from openevals._repr import show

ItemKey = Union[Literal["id", "content"], Callable[[Any], Hashable], None]  # noqa: UP007
"""How an item is identified: ``"id"``, ``"content"``, a callable ``item -> hashable``, or ``None``
(the default: the id when the item has one, else its content, else the item itself)."""

OUTPUT_CONTAINER_KEYS = ("documents", "contexts", "retrieved")
_PLAIN_IDS = frozenset({str, int})  # items that are their own identity, under any non-callable key
_TUPLE = {tuple}
_PAIR = {2}
_GRADES = frozenset({int, float})
_UNIT = frozenset({1.0})
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
REFERENCE_CONTAINER_KEYS = ("documents", "contexts", "relevant")


def validate_key(key: Any) -> ItemKey:
    """Check the ``key`` option once, at evaluator creation."""
    if key is None or key in ("id", "content") or callable(key):
        return key  # type: ignore[no-any-return]
    raise ValueError(
        f"`key` must be 'id', 'content', a callable item -> hashable, or None; got {show(key)}"
    )


def unwrap_items(value: Any, param: str, *, reference: bool) -> tuple[Sequence[Any], str]:
    """Return the list of items in a retrieved (``reference=False``) or reference value, and
    its name for error messages.

    A list or tuple is taken as is. A mapping must hold exactly one of the container keys
    (``documents``/``contexts``/``retrieved`` for outputs, ``documents``/``contexts``/``relevant``
    for references); other keys are ignored, so ``{"answer": ..., "documents": [...]}`` works.
    ``param`` is how error messages name the value: what the caller passed, e.g.
    ``reference_outputs`` for an evaluator or ``reference_lists[3]`` for a batch function.
    """
    keys = REFERENCE_CONTAINER_KEYS if reference else OUTPUT_CONTAINER_KEYS
    if isinstance(value, Mapping):
        present = [k for k in keys if k in value]
        if len(present) != 1:
            found = "none of them" if not present else f"{show(present)}"
            raise ValueError(
                f"`{param}` is a dict, so it must hold exactly one list under one of the keys "
                f"{list(keys)!r}; found {found} (keys: {show(sorted(map(str, value)))})"
            )
        value = value[present[0]]
        param = f"{param}[{show(present[0])}]"
    if isinstance(value, (list, tuple)):
        return value, param
    raise TypeError(
        f"`{param}` must be a list of items (ids, strings, dicts with 'id'/'content', or "
        f"Document objects) or a dict holding one such list under one of {list(keys)!r}; "
        f"got {type(value).__name__}"
    )


def _hashable(value: Any, what: str) -> Hashable:
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"{what} must be hashable to compare items; got {type(value).__name__} {show(value)}"
        ) from None
    return value  # type: ignore[no-any-return]


def _mapping_identity(item: Mapping[str, Any], key: ItemKey, where: str) -> Hashable:
    content = item.get("content", item.get("page_content"))
    if key == "id":
        if item.get("id") is None:
            raise ValueError(f"{where} has no 'id' but key='id' was requested; got {show(item)}")
        return _hashable(item["id"], f"the 'id' of {where}")
    if key == "content":
        if content is None:
            raise ValueError(
                f"{where} has no 'content'/'page_content' but key='content' was requested; "
                f"got {show(item)}"
            )
        return _hashable(content, f"the content of {where}")
    if item.get("id") is not None:
        return _hashable(item["id"], f"the 'id' of {where}")
    if content is not None:
        return _hashable(content, f"the content of {where}")
    raise ValueError(
        f"{where} is a dict without 'id' or 'content'; pass key=<callable> to say how to "
        f"identify it (got keys {show(sorted(map(str, item)))})"
    )


def _object_identity(item: Any, key: ItemKey, where: str) -> Hashable | None:
    """Identity of a Document-like object, or None if it does not look like one."""
    has_id = hasattr(item, "id")
    has_content = hasattr(item, "page_content") or hasattr(item, "content")
    if not (has_id or has_content):
        return None
    item_id = getattr(item, "id", None)
    content = getattr(item, "page_content", None)
    if content is None:
        content = getattr(item, "content", None)
    if key == "id" or (key is None and item_id not in (None, "")):
        if item_id in (None, ""):
            raise ValueError(
                f"{where} ({type(item).__name__}) has no id but key='id' was requested"
            )
        return _hashable(item_id, f"the id of {where}")
    if content is None:
        raise ValueError(f"{where} ({type(item).__name__}) has neither an id nor content")
    return _hashable(content, f"the content of {where}")


def identity_of(item: Any, key: ItemKey, where: str) -> Hashable:
    """The hashable identity used to compare ``item`` with other items."""
    if callable(key):
        return _hashable(key(item), f"key({where})")
    if isinstance(item, bool):
        raise TypeError(
            f"{where} is a bool ({show(item)}); items are ids, strings, dicts or documents"
        )
    if isinstance(item, (str, int)):
        return item
    if isinstance(item, Mapping):
        return _mapping_identity(item, key, where)
    found = _object_identity(item, key, where)
    if found is not None:
        return found
    raise TypeError(
        f"{where} has unsupported type {type(item).__name__}: items are str/int ids, dicts with "
        "'id'/'content', or objects with .id/.page_content/.content (e.g. Document); "
        "or pass key=<callable>"
    )


def _relevance_value(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"the relevance of {where} must be a non-negative number; got "
            f"{type(value).__name__} {show(value)}"
        )
    try:
        rel = float(value)
    except OverflowError:
        rel = math.inf
    if not math.isfinite(rel) or rel < 0:
        raise ValueError(
            f"the relevance of {where} must be a finite number >= 0; got {show(value)}"
        )
    return rel


def _split_relevance(item: Any, where: str) -> tuple[Any, float | None]:
    """Separate a reference item from its explicit graded relevance (None when none is given)."""
    if isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise ValueError(
                f"{where} is a {type(item).__name__} of length {len(item)}; a graded reference "
                "item is an (item, relevance) pair"
            )
        return item[0], _relevance_value(item[1], where)
    if isinstance(item, Mapping):
        if "relevance" in item:
            return item, _relevance_value(item["relevance"], where)
        return item, None
    metadata = getattr(item, "metadata", None)
    if isinstance(metadata, Mapping) and "relevance" in metadata:
        return item, _relevance_value(metadata["relevance"], where)
    return item, None


def plain_ids(value: Any) -> bool:
    """Whether ``value`` is a list or tuple of str/int items (each is its own identity under
    every non-callable ``key``)."""
    if type(value) is not list and type(value) is not tuple:
        return False
    try:
        "".join(value)  # the quickest test that every item is a str
    except TypeError:
        return set(map(type, value)) <= _PLAIN_IDS
    return True


def plain_pairs(value: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    """The ids and grades of a non-empty sequence of ``(id, grade)`` tuples with plain ids and
    finite grades >= 0 (as ints/floats, unconverted; ids may repeat), or None for anything else
    (which then takes the general path, with its checks and error messages)."""
    if set(map(type, value)) != _TUPLE or set(map(len, value)) != _PAIR:
        return None
    # Not zip(*value): it makes one iterator per pair, and on a batch's 100,000 pairs that many
    # new objects set off garbage collections that make it ten times slower.
    idents, grades = list(map(_FIRST, value)), list(map(_SECOND, value))
    if not plain_ids(idents) or not set(map(type, grades)) <= _GRADES:
        return None
    try:
        if not all(map(math.isfinite, grades)) or min(grades) < 0:
            return None
    except OverflowError:  # an int grade beyond float range
        return None
    return idents, grades


def _plain_relevance(value: Any) -> dict[Hashable, float] | None:
    """The relevance map of a list of plain ids, or of ``(id, grade)`` pairs, or None for any
    other value (which then takes the general path, with its checks and error messages)."""
    if type(value) is not list and type(value) is not tuple:
        return None
    if not value or type(value[0]) is not tuple:
        return dict.fromkeys(value, 1.0) if plain_ids(value) else None
    columns = plain_pairs(value)
    if columns is None:
        return None
    idents, grades = columns
    relevance = dict(zip(idents, map(float, grades), strict=True))
    if len(relevance) == len(idents):
        return relevance
    relevance = {}
    for ident, grade in zip(idents, grades, strict=True):  # a repeat keeps its highest grade
        relevance[ident] = max(float(grade), relevance.get(ident, 0.0))
    return relevance


def reference_relevance(
    reference: Any, key: ItemKey, param: str = "reference_outputs"
) -> dict[Hashable, float]:
    """Every reference identity -> its relevance (> 0 means relevant; a repeated item keeps its
    highest grade). ``param`` names the value in error messages, as the caller passed it."""
    if not callable(key):
        plain = _plain_relevance(reference)
        if plain is not None:
            return plain
    items, param = unwrap_items(reference, param, reference=True)
    relevance: dict[Hashable, float] = {}
    for i, raw in enumerate(items):
        where = f"{param}[{i}]"
        if raw is None:
            raise TypeError(
                f"{where} is None; reference items must be ids, strings, dicts or documents"
            )
        item, explicit = _split_relevance(raw, where)
        rel = 1.0 if explicit is None else explicit
        ident = identity_of(item, key, where)
        relevance[ident] = max(rel, relevance.get(ident, 0.0))
    return relevance


def retrieved_identities(
    retrieved: Any, key: ItemKey, param: str = "outputs"
) -> Sequence[Hashable]:
    """Identities of the retrieved items, in rank order (plain ids are returned as given).
    ``param`` names the value in error messages, as the caller passed it."""
    if not callable(key) and plain_ids(retrieved):
        return cast("Sequence[Hashable]", retrieved)
    items, param = unwrap_items(retrieved, param, reference=False)
    out: list[Hashable] = []
    for i, item in enumerate(items):
        where = f"{param}[{i}]"
        if item is None or (not callable(key) and isinstance(item, (tuple, list))):
            raise TypeError(
                f"{where} must be an id, string, dict or document; got "
                f"{type(item).__name__} {show(item)} (graded (item, relevance) pairs are only "
                "accepted in the reference)"
            )
        out.append(identity_of(item, key, where))
    return out


class Judged(NamedTuple):
    """A retrieved ranking judged against a reference (a NamedTuple: batches make thousands)."""

    ranks: list[int]
    """The ranks (1-based, ascending, within ``limit``) holding a relevant item. A repeat of an
    earlier item is not relevant, so each relevant item appears at most once."""
    gains: list[float]
    """The relevance found at each of ``ranks`` (all > 0)."""
    ideal: list[float]
    """The reference's relevant gains, highest first."""
    retrieved: int
    """Length of the whole retrieved list."""
    duplicates: int
    """Retrieved positions repeating an earlier item (over the whole list)."""
    binary: bool
    """Whether every relevant gain is 1.0."""

    @property
    def n_relevant(self) -> int:
        return len(self.ideal)


def judge(
    retrieved: Any,
    reference: Any,
    key: ItemKey,
    limit: int | None = None,
    *,
    retrieved_param: str = "outputs",
    reference_param: str = "reference_outputs",
) -> Judged:
    """Judge the first ``limit`` positions (all when None) of ``retrieved`` against ``reference``.

    A retrieved item repeating an earlier one is a non-relevant position. The reference is
    checked first, then the retrieved list, each in full.
    """
    relevance = reference_relevance(reference, key, reference_param)
    ids = retrieved_identities(retrieved, key, retrieved_param)
    top = ids if limit is None or limit >= len(ids) else ids[:limit]
    duplicates = len(ids) - len(set(ids))
    ranks: list[int] = []
    gains: list[float] = []
    seen: set[Hashable] = set()
    # Positions of reference items, found by one C-level pass (no per-position Python work).
    for position in compress(range(len(top)), map(relevance.__contains__, top)):
        ident = top[position]
        gain = relevance[ident]
        if gain > 0 and ident not in seen:
            ranks.append(position + 1)
            gains.append(gain)
        if duplicates:
            seen.add(ident)
    if set(relevance.values()) <= _UNIT:  # ungraded: every relevant gain is 1.0
        return Judged(ranks, gains, [1.0] * len(relevance), len(ids), duplicates, True)
    ideal = sorted(relevance.values(), reverse=True)
    if ideal and ideal[-1] <= 0:  # grade-0 reference items are not relevant
        ideal = [r for r in ideal if r > 0]
    binary = not ideal or (ideal[0] == 1.0 and ideal[-1] == 1.0)
    return Judged(ranks, gains, ideal, len(ids), duplicates, binary)
