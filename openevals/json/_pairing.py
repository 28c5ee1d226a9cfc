"""Pairing the elements of two lists of records (an assignment problem), for JSON match.

The weight of pairing output record ``o`` with reference record ``r`` ranks pairings
lexicographically by three criteria (see :func:`weights`): more equal values, then fewer
differing keys, then more similar text for the values not known to be equal. The pairing is a
maximum-weight assignment of ``min(len(outputs), len(reference_outputs))`` pairs.

How it scales:

1. Records are put in a canonical order (their canonical text), so that the result never depends
   on the order of either list.
2. Identical records (same canonical text, every compared value ``==``) are paired with each
   other first. Some optimal pairing always does this (an exchange argument: swapping partners so
   that two identical records pair never lowers the number of equal values nor raises the number
   of differing keys), and it removes most of the work on lists that mostly agree. Lists graded
   with a ``rubric`` skip this step: the text similarity of rubric values is part of their
   weight, and that criterion can prefer a different partner.
3. The remaining records are paired by the shortest-augmenting-path assignment algorithm on the
   full weight matrix, weighed by the one formula :func:`weights`: in plain Python for small
   remainders, a block of rows at a time with numpy (imported only then) for larger ones. Both
   layouts give bit-identical weights and make identical choices.
4. A remainder of more than :data:`~openevals.json._assign.MAX_PAIRS` candidate pairs raises
   ``ValueError``.

This module holds the weights (steps 1 and 3's formula); :mod:`._assign` pairs the records
(:func:`~openevals.json._assign.pair_records`), with :mod:`._vectorised` for the numpy layout.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final, Protocol

from rapidfuzz.distance import Indel

from openevals._repr import show
from openevals._structure import equal, expand_plain, fold

SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_MISSING: Final = object()


# --------------------------------------------------------------------------- values


def equal_values(key: Hashable, out_value: Any, ref_value: Any, where: tuple[str, str]) -> int:
    """1 if the values are ``==`` (at any depth), else 0.

    ``where`` holds the paths of the two records (``("outputs[3]", "reference_outputs[5]")``),
    used to name a value that contains itself.
    """
    try:
        try:
            same = out_value == ref_value
        except RecursionError:
            out_name, ref_name = (f"{side}[{show(key)}]" for side in where)
            return 1 if equal(out_value, ref_value, out_name, ref_name) else 0
        return 1 if bool(same) else 0
    except ValueError as exc:
        if "contains itself" in str(exc) or "too deeply" in str(exc):
            raise
        error: Exception = exc
    except Exception as exc:
        error = exc
    raise TypeError(
        f"cannot compare the values of key {show(key)}: `outputs` has {show(out_value)}, "
        f"`reference_outputs` has {show(ref_value)} ({type(error).__name__}: {error})"
    ) from error


def _canon_leaf(value: Any) -> str:
    return f"{type(value).__name__}:{value!r}"


def canon_key(key: Any) -> str:
    if type(key) in SCALARS:
        return _canon_leaf(key)
    return canonical(key, f"key {show(key)}")


def _canon_combine(tag: str, _: Any, labels: Sequence[Any] | None, parts: list[str]) -> str:
    if tag == "map":
        assert labels is not None
        items = sorted(f"{canon_key(k)}:{p}" for k, p in zip(labels, parts, strict=True))
        return "{" + ",".join(items) + "}"
    if tag == "seq":
        return "[" + ",".join(parts) + "]"
    return "<" + ",".join(sorted(parts)) + ">"


def _flat_text(value: Any) -> str | None:
    """The canonical text of a scalar or a list of scalars (``None`` for anything else)."""
    kind = type(value)
    if kind in SCALARS:
        return f"{kind.__name__}:{value!r}"
    if (kind is list or kind is tuple) and all(type(x) in SCALARS for x in value):
        return "[" + ",".join([f"{type(x).__name__}:{x!r}" for x in value]) + "]"
    return None


def canonical(value: Any, name: str) -> str:
    """A text form that is identical for identical values, whatever their construction order.

    Works at any depth; a value that contains itself raises ``ValueError`` naming ``name``.
    """
    flat = _flat_text(value)
    if flat is not None:
        return flat
    if type(value) is dict:  # fast path: a record of scalars and lists of scalars
        parts = []
        for k, v in value.items():
            text = _flat_text(v)
            if text is None:
                break
            parts.append(f"{canon_key(k)}:{text}")
        else:
            parts.sort()
            return "{" + ",".join(parts) + "}"
    return str(fold(value, name, expand_plain, _canon_leaf, _canon_combine))


def similarity_text(value: Any, name: str) -> str:
    """The text compared for similarity: strings as they are, containers canonical, else repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return canonical(value, name)
    return repr(value)


# --------------------------------------------------------------------------- records


class Profile:
    """One record's compared items in the global key order; similarity texts on demand."""

    __slots__ = ("_texts", "items", "lookup", "name")

    def __init__(
        self,
        record: Mapping[Any, Any],
        name: str,
        keys: Mapping[Hashable, int],
        excluded: frozenset[str],
        rubric: Mapping[str, str],
    ) -> None:
        present = sorted((k for k in record if k not in excluded), key=keys.__getitem__)
        self.name = name
        self.items = [(k, record[k], k in rubric) for k in present]
        self.lookup = {k: record[k] for k in present}
        self._texts: dict[Hashable, str] | None = None

    def texts(self) -> dict[Hashable, str]:
        """Key -> the value's similarity text (computed once)."""
        if self._texts is None:
            self._texts = {
                k: similarity_text(v, f"{self.name}[{show(k)}]") for k, v, _ in self.items
            }
        return self._texts


class KeyView(Protocol):
    """One key of the remaining records, asked about a block of pairs (one layout's view)."""

    graded: bool

    def shared(self, block: Any) -> Any:
        """Which pairs of the block both have the key."""

    def same(self, block: Any, shared: Any) -> Any:
        """Which shared pairs have ``==`` values (only asked of keys not graded)."""

    def similarity(self, block: Any) -> Any:
        """The similarity of the two values' texts, for the pairs sharing the key."""

    @staticmethod
    def any(mask: Any) -> bool:
        """Whether some pair of the block is set in ``mask``."""

    @staticmethod
    def where(mask: Any, values: Any) -> Any:
        """``values`` where ``mask`` is set, else 0.0."""


def weights(keys: Sequence[KeyView], block: Any, out_size: Any, ref_size: Any, bound: int) -> Any:
    """The weight of every pair of ``block``, ranking pairings lexicographically by three criteria.

    1. more equal values (excluded and rubric keys never count);
    2. fewer differing keys: present on one side only, or unequal (rubric keys present on
       both sides are unknown, not differing);
    3. more similar text for the values that are not known to be equal (rubric keys and
       unequal values), so rubric-graded records still pair with their look-alikes.

    ``bound`` exceeds any assignment's number of differing keys and total similarity, so the
    criteria never trade against each other (``bound=0`` leaves the third criterion alone).
    Written once for both layouts: a block is one pair of plain Python values (:class:`PairKey`)
    or a block of rows of numpy matrices (``_vectorised.KeyColumn``). Similarities are summed in
    the global key order, so both give the same bits.
    """
    equal_count: Any = 0
    shared_count: Any = 0
    unequal: Any = 0
    similarity: Any = 0.0
    for key in keys:
        shared = key.shared(block)
        if not key.any(shared):
            continue
        shared_count = shared_count + shared
        if key.graded:
            needs_text = shared
        else:
            same = key.same(block, shared)
            equal_count = equal_count + same
            needs_text = shared & ~same
            unequal = unequal + needs_text
        if key.any(needs_text):
            similarity = similarity + key.where(needs_text, key.similarity(block))
    differ = out_size + ref_size - 2 * shared_count + unequal
    return equal_count * float(bound * bound) - differ * bound + similarity


class PairKey:
    """One key in the plain layout, where a block is one pair ``(i, j)``."""

    __slots__ = ("graded", "key", "out_values", "outs", "ref_values", "refs")

    def __init__(
        self, key: Hashable, outs: Sequence[Profile], refs: Sequence[Profile], rubric: Any
    ) -> None:
        self.key, self.outs, self.refs, self.graded = key, outs, refs, key in rubric
        self.out_values = [p.lookup.get(key, _MISSING) for p in outs]
        self.ref_values = [p.lookup.get(key, _MISSING) for p in refs]

    def shared(self, block: tuple[int, int]) -> bool:
        i, j = block
        return self.out_values[i] is not _MISSING and self.ref_values[j] is not _MISSING

    def same(self, block: tuple[int, int], shared: bool) -> int:
        i, j = block
        names = (self.outs[i].name, self.refs[j].name)
        return equal_values(self.key, self.out_values[i], self.ref_values[j], names)

    def similarity(self, block: tuple[int, int]) -> float:
        i, j = block
        out, ref = self.outs[i].texts()[self.key], self.refs[j].texts()[self.key]
        return float(Indel.normalized_similarity(out, ref))

    @staticmethod
    def any(mask: bool) -> bool:
        return mask

    @staticmethod
    def where(mask: bool, values: float) -> float:
        return values if mask else 0.0


def plain_weights(
    outs: Sequence[Profile],
    refs: Sequence[Profile],
    keys: Sequence[Hashable],
    rubric: Any,
    bound: int,
) -> list[list[float]]:
    """:func:`weights` of every pair, one pair at a time in plain Python (no numpy)."""
    views = [PairKey(k, outs, refs, rubric) for k in keys]
    return [
        [weights(views, (i, j), len(o.items), len(r.lookup), bound) for j, r in enumerate(refs)]
        for i, o in enumerate(outs)
    ]


# --------------------------------------------------------------------------- pairing
