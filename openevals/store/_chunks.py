"""How a run's rows are stored: a chunk of consecutive rows per database record.

A chunk's ``body`` is JSON: either ``{"rows": [row, ...]}`` (each row whole), or a shape shared
by every row of the chunk with the values that vary kept as columns,
``{"n": count, "shape": node, "columns": [[value per row], ...]}``, which is much cheaper to
write for a run's columnar blocks (a few JSON arrays instead of a dict per row). A ``node`` is
one of:

- ``["c", k]``: row ``i``'s value is ``columns[k][i]``;
- ``["g", k, name]``: ``columns[k][i].get(name)`` (a field of a column of dicts);
- ``["n", start]``: ``start + i``;
- ``["v", value]``: the same value in every row;
- ``["o", {key: node, ...}]``: a dict of those; ``["l", [node, ...]]``: a list of those.

Besides the body, a chunk's record keeps what filters read without decoding rows: the row ids,
their statuses and each feedback key's scores (:class:`RowChunk`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RowChunk", "decode_rows", "matches_text", "search_needle"]

_Build = Callable[[int], Any]


@dataclass
class RowChunk:
    """Consecutive rows of a run, as the store writes them."""

    first: int
    """The position of the chunk's first row."""
    ids: list[str]
    errors: list[bool]
    """Per row: did it fail (status ``"error"``)."""
    scores: dict[str, list[Any]]
    """Feedback key -> each row's score (``None`` where the row has none)."""
    body: str
    """The rows' JSON (see the module docs)."""

    def __len__(self) -> int:
        return len(self.ids)


def _compile(node: Sequence[Any], columns: list[list[Any]]) -> _Build:
    kind = node[0]
    if kind == "c":
        return columns[node[1]].__getitem__
    if kind == "g":
        column, name = columns[node[1]], node[2]
        return lambda i: column[i].get(name)
    if kind == "n":
        start = int(node[1])
        return lambda i: start + i
    if kind == "v":
        value = node[1]
        if isinstance(value, (dict, list)):
            return lambda i: copy.deepcopy(value)
        return lambda i: value
    if kind == "o":
        items = [(key, _compile(sub, columns)) for key, sub in node[1].items()]
        return lambda i: {key: build(i) for key, build in items}
    if kind == "l":
        parts = [_compile(sub, columns) for sub in node[1]]
        return lambda i: [build(i) for build in parts]
    raise ValueError(f"run store: a stored chunk has an unknown shape node {kind!r}")


def decode_rows(body: str, wanted: range | None = None) -> list[dict[str, Any]]:
    """The rows of a chunk's ``body`` (only those at the offsets in ``wanted`` when given)."""
    data = json.loads(body)
    if "rows" in data:
        rows: list[dict[str, Any]] = data["rows"]
        return rows if wanted is None else rows[wanted.start : wanted.stop]
    build = _compile(data["shape"], data["columns"])
    return [build(i) for i in (range(int(data["n"])) if wanted is None else wanted)]


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def search_needle(text: str) -> str:
    """``text`` as it appears inside a stored JSON string, lower-cased (what a search looks for
    in a chunk's body)."""
    return _ENCODER.encode(text)[1:-1].lower()


def matches_text(row: dict[str, Any], needle: str) -> bool:
    """Does ``row``'s JSON text contain ``needle`` (from :func:`search_needle`), ignoring case?"""
    return needle in _ENCODER.encode(row).lower()
