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
from dataclasses import dataclass
from typing import Any, Literal, Union

__all__ = [
    "ItemKey",
    "PreparedReference",
    "identity_of",
    "prepare_reference",
    "prepare_retrieved",
    "unwrap_items",
    "validate_key",
]

ItemKey = Union[Literal["id", "content"], Callable[[Any], Hashable], None]  # noqa: UP007
"""How an item is identified: ``"id"``, ``"content"``, a callable ``item -> hashable``, or ``None``
(the default: the id when the item has one, else its content, else the item itself)."""

OUTPUT_CONTAINER_KEYS = ("documents", "contexts", "retrieved")
REFERENCE_CONTAINER_KEYS = ("documents", "contexts", "relevant")


def validate_key(key: Any) -> ItemKey:
    """Check the ``key`` option once, at evaluator creation."""
    if key is None or key in ("id", "content") or callable(key):
        return key  # type: ignore[no-any-return]
    raise ValueError(
        f"`key` must be 'id', 'content', a callable item -> hashable, or None; got {key!r}"
    )


def unwrap_items(value: Any, param: str) -> Sequence[Any]:
    """Return the list of items in ``outputs`` / ``reference_outputs``.

    A list or tuple is taken as is. A mapping must hold exactly one of the container keys
    (``documents``/``contexts``/``retrieved`` for outputs, ``documents``/``contexts``/``relevant``
    for references); other keys are ignored, so ``{"answer": ..., "documents": [...]}`` works.
    """
    keys = REFERENCE_CONTAINER_KEYS if param == "reference_outputs" else OUTPUT_CONTAINER_KEYS
    if isinstance(value, Mapping):
        present = [k for k in keys if k in value]
        if len(present) != 1:
            found = "none of them" if not present else f"{present!r}"
            raise ValueError(
                f"`{param}` is a dict, so it must hold exactly one list under one of the keys "
                f"{list(keys)!r}; found {found} (keys: {sorted(map(str, value))!r})"
            )
        value = value[present[0]]
        param = f"{param}[{present[0]!r}]"
    if isinstance(value, (list, tuple)):
        return value
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
            f"{what} must be hashable to compare items; got {type(value).__name__} {value!r}"
        ) from None
    return value  # type: ignore[no-any-return]


def _mapping_identity(item: Mapping[str, Any], key: ItemKey, where: str) -> Hashable:
    content = item.get("content", item.get("page_content"))
    if key == "id":
        if item.get("id") is None:
            raise ValueError(f"{where} has no 'id' but key='id' was requested; got {item!r}")
        return _hashable(item["id"], f"the 'id' of {where}")
    if key == "content":
        if content is None:
            raise ValueError(
                f"{where} has no 'content'/'page_content' but key='content' was requested; "
                f"got {item!r}"
            )
        return _hashable(content, f"the content of {where}")
    if item.get("id") is not None:
        return _hashable(item["id"], f"the 'id' of {where}")
    if content is not None:
        return _hashable(content, f"the content of {where}")
    raise ValueError(
        f"{where} is a dict without 'id' or 'content'; pass key=<callable> to say how to "
        f"identify it (got keys {sorted(map(str, item))!r})"
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
        raise TypeError(f"{where} is a bool ({item!r}); items are ids, strings, dicts or documents")
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
            f"{type(value).__name__} {value!r}"
        )
    rel = float(value)
    if not math.isfinite(rel) or rel < 0:
        raise ValueError(f"the relevance of {where} must be a finite number >= 0; got {value!r}")
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


@dataclass(frozen=True)
class PreparedReference:
    """Reference identities with their relevance (> 0 means relevant)."""

    relevance: dict[Hashable, float]
    """Every reference identity -> its relevance (duplicates keep the highest grade)."""
    graded: bool
    """Whether any reference item carried an explicit relevance."""

    @property
    def relevant_gains(self) -> list[float]:
        """Relevances of the relevant items, highest first."""
        return sorted((r for r in self.relevance.values() if r > 0), reverse=True)


def prepare_reference(reference_outputs: Any, key: ItemKey) -> PreparedReference:
    items = unwrap_items(reference_outputs, "reference_outputs")
    relevance: dict[Hashable, float] = {}
    graded = False
    for i, raw in enumerate(items):
        where = f"reference_outputs[{i}]"
        if raw is None:
            raise TypeError(
                f"{where} is None; reference items must be ids, strings, dicts or documents"
            )
        item, explicit = _split_relevance(raw, where)
        graded = graded or explicit is not None
        rel = 1.0 if explicit is None else explicit
        ident = identity_of(item, key, where)
        relevance[ident] = max(rel, relevance.get(ident, 0.0))
    return PreparedReference(relevance=relevance, graded=graded)


def prepare_retrieved(outputs: Any, key: ItemKey) -> list[Hashable]:
    items = unwrap_items(outputs, "outputs")
    out: list[Hashable] = []
    for i, item in enumerate(items):
        where = f"outputs[{i}]"
        if item is None or (not callable(key) and isinstance(item, (tuple, list))):
            raise TypeError(
                f"{where} must be an id, string, dict or document; got "
                f"{type(item).__name__} {item!r} (graded (item, relevance) pairs are only "
                "accepted in reference_outputs)"
            )
        out.append(identity_of(item, key, where))
    return out
