"""List pairing of JSON match at scale (issue 16, item 7): optimal, order-independent, fast.

A brute-force reference enumerates every pairing of small lists and scores it with the three
documented criteria (more equal values, fewer differing keys, more similar text); every code
path of ``pair_records`` (pure Python, numpy, and the large-list path that pairs identical
records first and solves criterion by criterion) must reach the optimum, and the evaluator's
results must be those of the optimal pairing whenever all optimal pairings agree on them.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Indel

from openevals.json import _assign, _pairing, _scoring, create_json_match_evaluator
from openevals.json.match import MAX_PAIRS

# Values whose == agrees with their text (no 1 / 1.0 / True look-alikes): the identical-first
# step is then optimal on all three criteria, not only on the first two.
VALUES = st.one_of(
    st.sampled_from([0, 1, 2, "a", "ab", "b", None]),
    st.lists(st.sampled_from([1, "a"]), max_size=2),
)
RECORDS = st.dictionaries(st.sampled_from("abc"), VALUES, max_size=3)
LISTS = st.lists(RECORDS, max_size=5)


def text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _pairing.canonical(value, "v")
    return repr(value)


def criteria(out: dict[str, Any], ref: dict[str, Any], rubric: set[str]) -> tuple[int, int, float]:
    """(equal values, -differing keys, similarity) of one pair, straight from the docs."""
    equal = differ = 0
    similarity = 0.0
    for key in out.keys() | ref.keys():
        if key not in out or key not in ref:
            differ += 1
        elif key in rubric:
            similarity += Indel.normalized_similarity(text(out[key]), text(ref[key]))
        elif out[key] == ref[key]:
            equal += 1
        else:
            differ += 1
            similarity += Indel.normalized_similarity(text(out[key]), text(ref[key]))
    return equal, -differ, similarity


def all_pairings(n: int, m: int) -> list[list[tuple[int, int]]]:
    if n <= m:
        return [list(enumerate(cols)) for cols in itertools.permutations(range(m), n)]
    return [[(r, c) for c, r in enumerate(rows)] for rows in itertools.permutations(range(n), m)]


def totals(outs: list[Any], refs: list[Any], pairs: Any, rubric: set[str]) -> tuple[float, ...]:
    parts = [criteria(outs[i], refs[j], rubric) for i, j in pairs]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def best(outs: list[Any], refs: list[Any], rubric: set[str]) -> tuple[Any, list[Any]]:
    """The optimal totals and every pairing that reaches them (similarity within 1e-9)."""
    scored = [(totals(outs, refs, p, rubric), p) for p in all_pairings(len(outs), len(refs))]
    top = max(t for t, _ in scored)
    winners = [p for t, p in scored if t[:2] == top[:2] and abs(t[2] - top[2]) <= 1e-9]
    return top, winners


PATHS = {
    "python": {},
    "numpy": {"_PYTHON_PAIRS": 0},
    "large": {"_PYTHON_PAIRS": 0, "_LARGE_PAIRS": 0},
}


@pytest.mark.parametrize("path", sorted(PATHS))
@settings(max_examples=60)
@given(outs=LISTS, refs=LISTS, rubric=st.sampled_from([set(), {"c"}]), data=st.data())
def test_every_path_finds_an_optimal_pairing(
    path: str, outs: list[Any], refs: list[Any], rubric: set[str], data: st.DataObject
) -> None:
    if outs and data.draw(st.booleans()):
        refs = [*refs, dict(outs[0])]  # an identical record for the identical-first step
    with pytest.MonkeyPatch.context() as patch:
        for name, value in PATHS[path].items():
            patch.setattr(_assign, name, value)
        pairs = _assign.pair_records(
            outs, refs, exclude_keys=frozenset(), rubric=dict.fromkeys(rubric, "criteria")
        )
    assert len(pairs) == min(len(outs), len(refs))
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
    top, _ = best(outs, refs, rubric)
    got = totals(outs, refs, pairs, rubric)
    assert got[:2] == top[:2]
    assert got[2] == pytest.approx(top[2], abs=1e-9)


def results_for(pairs: list[tuple[int, int]], outs: list[Any], refs: list[Any], **opts: Any) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_scoring, "pair_records", lambda *a, **k: pairs)
        return create_json_match_evaluator(**opts)(outputs=outs, reference_outputs=refs)


@settings(max_examples=60)
@given(
    outs=LISTS,
    refs=LISTS,
    aggregator=st.sampled_from([None, "average", "all"]),
    list_aggregator=st.sampled_from(["average", "all"]),
    mode=st.sampled_from(["same_elements", "subset", "superset"]),
)
def test_results_are_those_of_the_optimal_pairing(
    outs: list[Any], refs: list[Any], aggregator: Any, list_aggregator: str, mode: str
) -> None:
    opts = {"aggregator": aggregator, "list_aggregator": list_aggregator, "list_match_mode": mode}
    _, winners = best(outs, refs, set())
    expected = {repr(results_for(p, outs, refs, **opts)) for p in winners}
    got = create_json_match_evaluator(**opts)(outputs=outs, reference_outputs=refs)
    assert repr(got) in expected
    if len(expected) == 1:  # every optimal pairing agrees: the result is fully determined
        assert repr(got) == expected.pop()


@settings(max_examples=60)
@given(outs=LISTS, refs=LISTS, seed=st.integers(0, 1000))
def test_numpy_and_python_paths_choose_the_same_pairs(
    outs: list[Any], refs: list[Any], seed: int
) -> None:
    python = _assign.pair_records(outs, refs, exclude_keys=frozenset(), rubric={})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assign, "_PYTHON_PAIRS", 0)
        dense = _assign.pair_records(outs, refs, exclude_keys=frozenset(), rubric={})
    assert sorted(python) == sorted(dense)
    # ... and neither depends on the order of the lists
    shuffled_outs, shuffled_refs = list(outs), list(refs)
    random.Random(seed).shuffle(shuffled_outs)
    random.Random(seed + 1).shuffle(shuffled_refs)
    evaluator = create_json_match_evaluator(list_aggregator="average")
    assert evaluator(outputs=outs, reference_outputs=refs) == evaluator(
        outputs=shuffled_outs, reference_outputs=shuffled_refs
    )


def export(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "id": i,
            "name": f"customer-{rng.randrange(10**6):06d}",
            "status": rng.choice(["active", "paused", "closed"]),
            "tags": sorted(rng.sample(["a", "b", "c", "d"], 2)),
        }
        for i in range(n)
    ]


def test_ten_thousand_records_pair_in_seconds() -> None:
    reference = export(10_000, 1)
    outputs = [dict(r) for r in reference]
    random.Random(2).shuffle(outputs)
    for record in outputs[:300]:  # 3% of the records changed in one field
        record["status"] = "unknown"
    evaluator = create_json_match_evaluator(list_aggregator="average")
    start = time.perf_counter()
    result = {r["key"]: r["score"] for r in evaluator(outputs=outputs, reference_outputs=reference)}
    elapsed = time.perf_counter() - start
    assert result == {
        "json_match:id": 1.0,
        "json_match:name": 1.0,
        "json_match:status": pytest.approx(0.97),
        "json_match:tags": 1.0,
    }
    assert elapsed < 30, f"took {elapsed:.1f}s"  # the previous implementation never finished


def test_half_different_large_lists_pair_each_record_with_its_original() -> None:
    reference = export(1_500, 3)  # 1,500 x 1,500 > the large-list threshold when doubled
    outputs = [dict(r) for r in reference]
    for record in outputs[::2]:
        record["name"] = "someone-else"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assign, "_LARGE_PAIRS", 10_000)
        pairs = _assign.pair_records(outputs, reference, exclude_keys=frozenset(), rubric={})
    assert sorted(pairs) == [(i, i) for i in range(1_500)]


def test_remainder_above_the_limit_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_PAIRS == 25_000_000
    monkeypatch.setattr(_assign, "MAX_PAIRS", 20)
    outputs = [{"v": i} for i in range(6)]
    reference = [{"v": -i - 1} for i in range(4)] + [{"v": 0}]
    with pytest.raises(ValueError) as caught:
        create_json_match_evaluator()(outputs=outputs, reference_outputs=reference)
    message = str(caught.value)
    assert "`outputs`" in message and "`reference_outputs`" in message
    assert "30 candidate pairs, above the limit of 20" in message
    assert "list_match_mode='ordered'" in message
    ordered = create_json_match_evaluator(list_match_mode="ordered", aggregator="average")
    result = ordered(outputs=outputs, reference_outputs=reference)
    assert [r["key"] for r in result] == ["json_match:average"]


def test_match_module_keeps_every_name_it_had() -> None:
    import openevals.json.match as m

    for name in (
        "EMPTY_RECORD_KEY", "AsyncJsonMatchEvaluator", "AsyncRubricScorer", "JsonMatchEvaluator",
        "RubricRequest", "RubricScorer", "RubricVerdict", "create_async_json_match_evaluator",
        "create_json_match_evaluator", "_async_evaluator", "_build_core", "_sync_evaluator",
        "MAX_PAIRS",
    ):  # fmt: skip
        assert getattr(m, name) is not None, name


WEIGHED_VALUES = st.one_of(VALUES, st.sampled_from([1.0, True, float("nan"), {"x": 1}]))
WEIGHED_LISTS = st.lists(
    st.dictionaries(st.sampled_from("abcd"), WEIGHED_VALUES, max_size=4), min_size=1, max_size=5
)


@settings(max_examples=150)
@given(outs=WEIGHED_LISTS, refs=WEIGHED_LISTS, rubric=st.sampled_from([set(), {"c"}, {"a", "d"}]))
def test_one_weight_formula_gives_the_same_bits_in_both_layouts(
    outs: list[Any], refs: list[Any], rubric: set[str]
) -> None:
    """The plain-Python layout (small remainders) and the numpy layout (larger ones) run the one
    formula, ``_pairing.weights``: every weight is the same float, and it ranks pairs by the
    documented criteria."""
    from openevals.json import _vectorised

    criteria_text = dict.fromkeys(rubric, "criteria")
    keys = sorted({k for record in outs + refs for k in record})
    rank = {k: i for i, k in enumerate(keys)}

    def profiles(records: list[Any], side: str) -> list[_pairing.Profile]:
        return [
            _pairing.Profile(r, f"{side}[{i}]", rank, frozenset(), criteria_text)
            for i, r in enumerate(records)
        ]

    o, r = profiles(outs, "outputs"), profiles(refs, "reference_outputs")
    bound = 1 + sum(len(p.items) for p in o + r)
    plain = _pairing.plain_weights(o, r, keys, criteria_text, bound)
    dense = _vectorised.dense_weights(o, r, keys, criteria_text, bound)
    assert [[type(w) for w in row] for row in plain] == [[float] * len(refs)] * len(outs)
    assert plain == dense.tolist()
    # the reference's `text` knows no dicts
    plain_values = all(not isinstance(v, dict) for record in outs + refs for v in record.values())
    for i, out in enumerate(outs):
        for j, ref in enumerate(refs):
            equal, minus_differ, similarity = criteria(out, ref, rubric)
            if plain_values:
                expected = equal * float(bound * bound) + minus_differ * bound + similarity
                assert plain[i][j] == pytest.approx(expected, abs=1e-9)
