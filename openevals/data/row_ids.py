"""Row ids and row fingerprints: the one place a row's identity is made.

* A row with an ``id`` field keeps it (checked by :func:`~.data.check_id`).
* A row without one gets an id from what defines the example (:data:`ID_RULE`): its
  ``inputs``, ``reference_outputs`` and extra columns, never its ``outputs`` (nor graphrag-eval's
  ``Actual answer`` column standing for them), so two runs of one dataset pair every row however
  the answers changed. :class:`RowIds` numbers repeats of one example in data order. Every
  source (lists, files, DataFrames, Arrow, Parquet, Hugging Face, LangSmith) and the runner's
  columnar path (:meth:`~.blocks.ColumnBlock.settle`) make ids here.
* :func:`row_fingerprint` hashes a row's whole content, outputs included: what a resumed pair of
  an ``output=`` file is checked against (with the evaluator's, :mod:`.fingerprint`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ID_RULE", "RowIds", "example_text", "outputs_of", "row_fingerprint"]

_ID_KEY = "id"
_ANSWER_COLUMN = "Actual answer"  # graphrag-eval's name for the outputs (data.GRAPHRAG_COLUMNS)


def _hash_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


# Built once: ``json.dumps`` with options builds an encoder on every call (same text).
_HASH_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=repr)
_UNSORTED_JSON = json.JSONEncoder(ensure_ascii=False, default=repr)


def _canonical(value: Any) -> str:
    """``value`` as JSON text with its keys sorted; in their own order when keys of different
    types cannot be sorted (``{1: "a", "b": 2}``), which JSON can store all the same."""
    try:
        return _HASH_JSON.encode(value)
    except TypeError:
        return _UNSORTED_JSON.encode(value)


ID_RULE = "example/1"
"""The rule that made the ids of rows without an ``id`` (recorded in the ``run`` line of every
``output=`` file, so that a file written under another rule is recognised): a hash of the row's
``inputs``, ``reference_outputs`` and extra columns (not its ``outputs``), with the ``n``-th
repeat of one example (``n`` >= 2) told apart as ``"<hash>.<n>"``. Before it (no rule recorded),
ids hashed the row's position and whole content, outputs included."""


def _example(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """What defines the example of ``raw``: everything but its ``id`` and its outputs
    (``outputs``, or graphrag-eval's ``Actual answer`` column standing for them)."""
    if _ID_KEY in raw or "outputs" in raw or _ANSWER_COLUMN in raw:
        answer = "outputs" if "outputs" in raw else _ANSWER_COLUMN
        return {k: v for k, v in raw.items() if k != _ID_KEY and k != answer}
    return raw


class RowIds:
    """The ids of the rows of one source that have no ``id`` (rule :data:`ID_RULE`), given in
    data order: :meth:`content_id` counts the repeats of each example, so it must see the rows
    in order. The columnar path of the runner may leave a block's ids to be made later
    (:meth:`defer`); :attr:`settle` is then called before any later row is numbered."""

    __slots__ = ("_deferred", "_once", "_repeats", "settle")

    def __init__(self) -> None:
        self._once: set[str] = set()
        self._repeats: dict[str, int] = {}
        self._deferred = False
        self.settle: Callable[[], None] | None = None
        """Gives the deferred rows their ids, in order (set by the run that defers)."""

    def defer(self) -> None:
        """Rows were passed over: :attr:`settle` must number them before the next row."""
        self._deferred = True

    def content_id(self, raw: Mapping[str, Any], *, strict: bool = True) -> str:
        """The id of the next row without an ``id`` (raises what the JSON encoder raises for a
        value that cannot be stored, unless ``strict`` is false)."""
        if self._deferred:
            self._deferred = False
            if self.settle is not None:
                self.settle()
        return self.number(raw, strict=strict)

    def number(self, raw: Mapping[str, Any], *, strict: bool = True) -> str:
        """:meth:`content_id` for a row whose earlier rows are all numbered (the settling)."""
        return self.number_text(example_text(raw), strict=strict)

    def number_text(self, text: str, *, strict: bool = True) -> str:
        """:meth:`number` of a row whose :func:`example_text` is ``text``."""
        digest = _hash_bytes(text.encode("utf-8", "strict" if strict else "backslashreplace"))
        if digest not in self._once:
            self._once.add(digest)
            return digest
        count = self._repeats[digest] = self._repeats.get(digest, 1) + 1
        return f"{digest}.{count}"


def example_text(raw: Mapping[str, Any]) -> str:
    """The canonical JSON text (keys sorted) of what defines the example of ``raw``."""
    return _canonical(_example(raw))


def outputs_of(raw: Mapping[str, Any]) -> Any:
    """The outputs of a row (``outputs``, or graphrag-eval's ``Actual answer`` column): the part
    of a row :func:`example_text` leaves out."""
    return raw.get("outputs", raw.get(_ANSWER_COLUMN))


def row_fingerprint(fields: Mapping[str, Any], example: str | None = None) -> str:
    """A hash of a row's whole content (the example and its outputs; not its ``id``): what
    resume checks a recorded pair against. ``example``: the row's :func:`example_text`, when
    known. Values that cannot be stored as JSON are hashed by their text."""
    if example is None:
        example = example_text(fields)
    text = f"{example}\n{_canonical(outputs_of(fields))}"
    return _hash_bytes(text.encode("utf-8", "backslashreplace"))
