"""Pairing the records of two lists for JSON match (:func:`pair_records`); the steps and why
they are exact are in :mod:`._pairing`'s docstring."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

from openevals._matching import max_weight_assignment
from openevals.json._pairing import Profile, canon_key, canonical, equal_values, plain_weights

MAX_PAIRS: Final = 25_000_000
"""Most candidate pairs (unpaired outputs x unpaired references, after identical records are
paired) that list matching solves; more raises ``ValueError``."""

_PYTHON_PAIRS: Final = 100  # remainders up to this many pairs skip numpy (faster below it)
_LARGE_PAIRS: Final = 1_000_000  # larger problems pair identical records first, and larger
# remainders are solved criterion by criterion (see _vectorised.lexicographic_assignment)


def _too_many(n: int, m: int, blocked: int) -> ValueError:
    return ValueError(
        f"json match pairs list elements optimally, and after pairing {blocked} identical "
        f"element(s), {n} element(s) of `outputs` and {m} of `reference_outputs` remain: "
        f"{n * m:,} candidate pairs, above the limit of {MAX_PAIRS:,}. Compare shorter lists, "
        "or use list_match_mode='ordered' to compare elements by position."
    )


def pair_records(
    outs: Sequence[Mapping[Any, Any]],
    refs: Sequence[Mapping[Any, Any]],
    *,
    exclude_keys: frozenset[str],
    rubric: Mapping[str, str],
) -> list[tuple[int, int]]:
    """Optimal (output index, reference index) pairs, independent of the list orders."""
    compared = [
        [{k: v for k, v in record.items() if k not in exclude_keys} for record in side]
        for side in (outs, refs)
    ]
    texts = [
        [canonical(record, f"{side}[{i}]") for i, record in enumerate(records)]
        for side, records in zip(("outputs", "reference_outputs"), compared, strict=True)
    ]
    out_order = sorted(range(len(outs)), key=texts[0].__getitem__)
    ref_order = sorted(range(len(refs)), key=texts[1].__getitem__)

    pairs: list[tuple[int, int]] = []
    if not rubric and len(outs) * len(refs) > _LARGE_PAIRS:
        out_order, ref_order = _pair_identical(compared, texts, out_order, ref_order, pairs)
    if not out_order or not ref_order:
        return pairs

    n, m = len(out_order), len(ref_order)
    if n * m > MAX_PAIRS:
        raise _too_many(n, m, len(pairs))
    every_key = dict.fromkeys(k for side in compared for record in side for k in record)
    ordered_keys = sorted(every_key, key=lambda k: (canon_key(k), repr(k)))
    key_rank: dict[Hashable, int] = {k: rank for rank, k in enumerate(ordered_keys)}
    out_profiles = [
        Profile(outs[i], f"outputs[{i}]", key_rank, exclude_keys, rubric) for i in out_order
    ]
    ref_profiles = [
        Profile(refs[j], f"reference_outputs[{j}]", key_rank, exclude_keys, rubric)
        for j in ref_order
    ]
    bound = 1 + sum(len(p.items) for p in out_profiles) + sum(len(p.items) for p in ref_profiles)
    if n * m <= _PYTHON_PAIRS:
        chosen = max_weight_assignment(
            plain_weights(out_profiles, ref_profiles, ordered_keys, rubric, bound)
        )
    else:
        from openevals._matching import max_weight_assignment_dense
        from openevals.json import _vectorised  # numpy and rapidfuzz.process: loaded only here

        if n * m <= _LARGE_PAIRS:
            chosen = max_weight_assignment_dense(
                _vectorised.dense_weights(out_profiles, ref_profiles, ordered_keys, rubric, bound)
            )
        else:
            chosen = _vectorised.lexicographic_assignment(
                out_profiles, ref_profiles, ordered_keys, rubric, bound
            )
    pairs += [(out_order[r], ref_order[c]) for r, c in chosen]
    return pairs


def _pair_identical(
    compared: Sequence[Sequence[Mapping[Any, Any]]],
    texts: Sequence[Sequence[str]],
    out_order: list[int],
    ref_order: list[int],
    pairs: list[tuple[int, int]],
) -> tuple[list[int], list[int]]:
    """Pair records with identical canonical text whose values are all ``==``; return the
    remaining output and reference indices (still in canonical order)."""
    waiting: dict[str, list[int]] = {}
    for i in reversed(out_order):
        waiting.setdefault(texts[0][i], []).append(i)
    paired_outs: set[int] = set()
    rest_refs: list[int] = []
    for j in ref_order:
        candidates = waiting.get(texts[1][j])
        if candidates:
            i = candidates[-1]
            out, ref = compared[0][i], compared[1][j]
            where = (f"outputs[{i}]", f"reference_outputs[{j}]")
            if all(equal_values(k, v, ref[k], where) for k, v in out.items()):
                candidates.pop()
                paired_outs.add(i)
                pairs.append((i, j))
                continue
        rest_refs.append(j)
    return [i for i in out_order if i not in paired_outs], rest_refs
