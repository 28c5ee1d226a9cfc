"""How a run's rows are stored: a chunk of consecutive rows per database record.

A chunk's ``body`` is JSON: either ``{"rows": [row, ...]}`` (each row whole), or a shape shared
by every row of the chunk with the values that vary kept as columns,
``{"n": count, "shape": node, "columns": [[value per row], ...]}``, which is much cheaper to
write for a run's columnar blocks (a few JSON arrays instead of a dict per row). A ``node`` is
one of:

- ``["c", k]``: row ``i``'s value is ``columns[k][i]``;
- ``["g", k, name]``: ``columns[k][i].get(name)`` (a field of a column of dicts);
- ``["n", start]``: ``start + i``;
- ``["i"]``: row ``i``'s id, ``["s", key]``: its score of ``key`` (the chunk record's own
  columns, see below, so they are not written twice);
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

from openevals._repr import show

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


class _Columns:
    """A chunk's columns, with its record's ids and scores (decoded when a node needs them)."""

    def __init__(self, columns: list[list[Any]], ids: str | None, scores: str | None) -> None:
        self.columns, self._ids, self._scores = columns, ids, scores

    def ids(self) -> list[Any]:
        if self._ids is None:
            raise ValueError("run store: a chunk refers to its row ids, which were not read")
        return list(json.loads(self._ids))

    def scores(self, key: str) -> list[Any]:
        if self._scores is None:
            raise ValueError("run store: a chunk refers to its scores, which were not read")
        return list(json.loads(self._scores)[key])


def _compile(node: Sequence[Any], found: _Columns) -> _Build:
    kind = node[0]
    columns = found.columns
    if kind == "c":
        return columns[node[1]].__getitem__
    if kind == "i":
        return found.ids().__getitem__
    if kind == "s":
        return found.scores(str(node[1])).__getitem__
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
        items = [(key, _compile(sub, found)) for key, sub in node[1].items()]
        return lambda i: {key: build(i) for key, build in items}
    if kind == "l":
        parts = [_compile(sub, found) for sub in node[1]]
        return lambda i: [build(i) for build in parts]
    raise ValueError(f"run store: a stored chunk has an unknown shape node {show(kind)}")


def decode_rows(
    body: str, wanted: range | None = None, *, ids: str | None = None, scores: str | None = None
) -> list[dict[str, Any]]:
    """The rows of a chunk's ``body`` (only those at the offsets in ``wanted`` when given);
    ``ids`` and ``scores``: the JSON of the chunk record's columns of those."""
    data = json.loads(body)
    if "rows" in data:
        rows: list[dict[str, Any]] = data["rows"]
        return rows if wanted is None else rows[wanted.start : wanted.stop]
    build = _compile(data["shape"], _Columns(data["columns"], ids, scores))
    return [build(i) for i in (range(int(data["n"])) if wanted is None else wanted)]


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def search_needle(text: str) -> str:
    """``text`` as it appears inside a stored JSON string, lower-cased (what a search looks for
    in a chunk's body)."""
    return _ENCODER.encode(text)[1:-1].lower()


def matches_text(row: dict[str, Any], needle: str) -> bool:
    """Does ``row``'s JSON text contain ``needle`` (from :func:`search_needle`), ignoring case?"""
    return needle in _ENCODER.encode(row).lower()
