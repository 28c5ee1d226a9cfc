"""One formula per ranking metric: a single query scores the same, to the last bit, as a batch
of one, as a row of a larger numpy batch, and through the ``*_batch`` functions."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag import _ranking_formulas as formulas
from openevals.rag import ranking
from openevals.rag._items import Judged, judge
from openevals.rag._ranking_batch import NUMPY
from openevals.rag._ranking_metrics import METRICS, build_metric
from tests.rag.test_ranking_properties import BATCH_FORMS

# Every metric with every value of its own options.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    *((spec.name, {}) for spec in METRICS if not spec.options),
    *(
        (spec.name, {option.name: choice})
        for spec in METRICS
        for option in spec.options
        for choice in option.choices
    ),
]

ids = st.integers(min_value=0, max_value=15)
# 1.7e308: two such grades overflow a DCG sum (ndcg then scores the query with scaled gains)
grades = st.one_of(st.integers(0, 4), st.sampled_from([0.5, 1.0, 2.5, 1e-300, 1e300, 1.7e308]))
reference = st.one_of(
    st.lists(ids, max_size=10),
    st.lists(st.tuples(ids, grades), max_size=10),
)
query = st.tuples(st.lists(ids, max_size=20), reference)
ks = st.one_of(st.none(), st.integers(min_value=1, max_value=24))


def bits(value: Any) -> Any:
    """``value`` with every float spelled exactly (so 0.0 and -0.0, or a last-bit difference,
    tell apart)."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {key: bits(entry) for key, entry in value.items()}
    if isinstance(value, list):
        return [bits(entry) for entry in value]
    return value


def numpy_batch(judged: list[Judged], k: int | None) -> formulas.Gains:
    """Judged queries laid out as the ``*_batch`` functions lay them out: rows padded with 0."""
    ones = [formulas.batch_of_one(j, k) for j in judged]
    width = max(1, *(one.found for one in ones))
    ranks = np.zeros((len(ones), width), dtype=np.int64)
    gains = np.zeros((len(ones), width))
    for row, one in enumerate(ones):
        ranks[row, : one.found] = one.ranks
        gains[row, : one.found] = one.gains
    ideal = None
    if not all(j.binary for j in judged):
        cut = [j.ideal[:k] for j in judged]
        ideal = np.zeros((len(ones), max(1, *map(len, cut))))
        for row, kept in enumerate(cut):
            ideal[row, : len(kept)] = kept
    found = np.array([one.found for one in ones])
    top = np.array([one.top for one in ones])
    relevant = np.array([one.n_relevant for one in ones])
    return formulas.Gains(NUMPY, ranks, gains, found, top, relevant, ideal)


@settings(max_examples=150, deadline=None)
@given(batch=st.lists(query, min_size=1, max_size=6), k=ks)
def test_each_query_of_a_numpy_batch_scores_as_its_batch_of_one(
    batch: list[tuple[list[int], list[Any]]], k: int | None
) -> None:
    judged = [judge(retrieved, ref, None, k) for retrieved, ref in batch]
    scored = [j for j in judged if j.n_relevant]  # formulas see only these
    if not scored:
        return
    table = numpy_batch(scored, k)
    for name, options in VARIANTS:
        metric = build_metric(name, {"k": k, **options})
        values, extra = metric.formula(table, k)
        for row, j in enumerate(scored):
            value, own = metric.formula(formulas.batch_of_one(j, k), k)
            assert isinstance(value, float), name
            assert bits(value) == bits(values.tolist()[row]), (name, options, row)
            assert bits({n: c[0] for n, c in own.items()}) == bits(
                {n: c[row] for n, c in extra.items()}
            ), (name, options, row)


@settings(max_examples=100, deadline=None)
@given(item=query, k=ks, empty=st.sampled_from(["zero", "one", "skip"]))
def test_an_evaluator_call_equals_a_batch_of_one_bit_for_bit(
    item: tuple[list[int], list[Any]], k: int | None, empty: str
) -> None:
    retrieved, ref = item
    for batch_fn, factory, options in BATCH_FORMS:
        single = factory(k=k, empty_reference=empty, **options)(
            outputs=retrieved, reference_outputs=ref
        )
        batch = batch_fn([retrieved], [ref], k=k, empty_reference=empty, **options)
        assert bits(batch.scores) == bits([single["score"]])
        assert bits(batch.metadata) == bits([single["metadata"]])


def test_every_metric_and_option_is_covered() -> None:
    assert {name for name, _ in VARIANTS} == {spec.name for spec in METRICS}
    assert len(VARIANTS) == 10  # recall 2, precision 2, hit_rate, reciprocal_rank, AP 3, ndcg


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_unit_idcg_is_the_left_to_right_sum(n: int) -> None:
    table = formulas.unit_idcg(n)
    total = 0.0
    for rank in range(1, n + 1):
        total += 1.0 / math.log2(rank + 1)
    assert table[n].hex() == total.hex()


def test_a_suite_judged_beyond_k_scores_like_the_single_metric() -> None:
    # The suite judges up to its largest k; each metric cuts the ranking to its own k.
    retrieved, ref = [3, 1, 9, 2, 8, 5], [(1, 2), (2, 1), (5, 3)]
    suite = ranking.create_retrieval_evaluator(metrics=["ndcg", "map"], k=[2, 6])
    for result in suite(outputs=retrieved, reference_outputs=ref):
        name, cut = result["key"].split("@")
        single = build_metric(name, {"k": int(cut)}).score(outputs=retrieved, reference_outputs=ref)
        assert bits(result["score"]) == bits(single[0])
        assert bits(result["metadata"]) == bits(single[2])


@pytest.mark.parametrize(
    ("retrieved", "grades"),
    [
        (["c", "b", "a"], [1.0, 1.0, 1.0]),  # the ideal order: 1.0 (inf / inf before)
        (["d", "a"], [1.0, 1.0, 1.0, 2.0**-1022]),  # 0.0 before (finite / inf)
        (["b"], [1.0, 1.0, 1.0]),  # 0.0 before
        (["x", "d", "b"], [1.0, 1.0, 1.0, 0.5]),
    ],
)
def test_overflowing_grades_score_as_the_same_grades_scaled_down(
    retrieved: list[str], grades: list[float]
) -> None:
    # Grades whose DCG sums pass the float range rank like the same grades divided by the
    # largest (exactly, for these powers of two), in a single call and in a batch alike.
    big = 2.0**1023
    small_ref = list(zip("abcd", grades, strict=False))
    big_ref = [(item, grade * big) for item, grade in small_ref]
    evaluator = ranking.create_ndcg_evaluator()
    expected = evaluator(outputs=retrieved, reference_outputs=small_ref)["score"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning leaks to the caller
        single = evaluator(outputs=retrieved, reference_outputs=big_ref)
        batch = ranking.ndcg_batch([retrieved, retrieved], [big_ref, small_ref])
    assert math.isinf(single["metadata"]["idcg"])
    assert bits(single["score"]) == bits(expected)
    assert bits(batch.scores) == bits([expected, expected])
