from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag import ranking

# Per-test settings (a global profile would leak into other test modules).
PROPERTY = settings(max_examples=120, deadline=None)

ids = st.integers(min_value=0, max_value=12)
retrieved_lists = st.lists(ids, max_size=14)
binary_references = st.lists(ids, min_size=1, max_size=8)
graded_references = st.dictionaries(
    ids, st.integers(min_value=1, max_value=4), min_size=1, max_size=8
)
ks = st.one_of(st.none(), st.integers(min_value=1, max_value=16))

ALL_VARIANTS: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("recall", ranking.create_recall_evaluator, {}),
    ("recall_single", ranking.create_recall_evaluator, {"mode": "single_hit"}),
    ("precision", ranking.create_precision_evaluator, {}),
    ("precision_retrieved", ranking.create_precision_evaluator, {"denominator": "retrieved"}),
    ("hit_rate", ranking.create_hit_rate_evaluator, {}),
    ("reciprocal_rank", ranking.create_reciprocal_rank_evaluator, {}),
    ("average_precision", ranking.create_average_precision_evaluator, {}),
    (
        "average_precision_rr",
        ranking.create_average_precision_evaluator,
        {"normalize_by": "retrieved_relevant"},
    ),
    ("ndcg", ranking.create_ndcg_evaluator, {}),
]


def run(factory: Callable[..., Any], outputs: Any, reference: Any, **options: Any) -> float:
    value = factory(**options)(outputs=outputs, reference_outputs=reference)["score"]
    assert isinstance(value, float)
    return value


def graded_pairs(grades: dict[int, int]) -> list[tuple[int, int]]:
    return list(grades.items())


def ideal_order(grades: dict[int, int]) -> list[int]:
    return sorted(grades, key=lambda item: -grades[item])


@PROPERTY
@given(retrieved=retrieved_lists, grades=graded_references, k=ks)
def test_every_metric_is_within_bounds(
    retrieved: list[int], grades: dict[int, int], k: Any
) -> None:
    for reference in (list(grades), graded_pairs(grades)):
        for _, factory, options in ALL_VARIANTS:
            value = run(factory, retrieved, reference, k=k, **options)
            assert 0.0 <= value <= 1.0
            assert math.isfinite(value)


@PROPERTY
@given(grades=graded_references)
def test_a_perfect_ranking_scores_one_everywhere(grades: dict[int, int]) -> None:
    perfect = ideal_order(grades)
    for reference in (list(grades), graded_pairs(grades)):
        for _, factory, options in ALL_VARIANTS:
            assert run(factory, perfect, reference, **options) == 1.0


@PROPERTY
@given(grades=graded_references, extra=st.integers(min_value=0, max_value=5), data=st.data())
def test_a_perfect_top_k_scores_one(
    grades: dict[int, int], extra: int, data: st.DataObject
) -> None:
    perfect = ideal_order(grades)
    tail = data.draw(st.lists(st.integers(min_value=100, max_value=120), max_size=4))
    k = len(perfect) + extra
    reference = graded_pairs(grades)
    for name, factory, options in ALL_VARIANTS:
        if name == "precision":  # / k: irrelevant padding below the relevant items counts
            continue
        if name == "precision_retrieved" and tail and extra:
            continue
        assert run(factory, perfect + tail, reference, k=k, **options) == 1.0


@PROPERTY
@given(retrieved=retrieved_lists, reference=binary_references, k=st.integers(1, 16), data=st.data())
def test_recall_and_precision_ignore_order_within_top_k(
    retrieved: list[int], reference: list[int], k: int, data: st.DataObject
) -> None:
    top, rest = retrieved[:k], retrieved[k:]
    shuffled = data.draw(st.permutations(top)) + rest
    for factory, options in (
        (ranking.create_recall_evaluator, {}),
        (ranking.create_recall_evaluator, {"mode": "single_hit"}),
        (ranking.create_precision_evaluator, {}),
        (ranking.create_precision_evaluator, {"denominator": "retrieved"}),
        (ranking.create_hit_rate_evaluator, {}),
    ):
        before = run(factory, retrieved, reference, k=k, **options)
        assert run(factory, shuffled, reference, k=k, **options) == before


@PROPERTY
@given(retrieved=retrieved_lists, reference=binary_references)
def test_recall_is_monotone_in_k(retrieved: list[int], reference: list[int]) -> None:
    for mode in ("multi_hit", "single_hit"):
        values = [
            run(ranking.create_recall_evaluator, retrieved, reference, k=k, mode=mode)
            for k in range(1, len(retrieved) + 3)
        ]
        assert values == sorted(values)
        assert values[-1] == run(ranking.create_recall_evaluator, retrieved, reference, mode=mode)


@PROPERTY
@given(grades=graded_references, k=ks, data=st.data())
def test_ndcg_of_the_ideal_ordering_is_one(
    grades: dict[int, int], k: Any, data: st.DataObject
) -> None:
    # Ties may be broken either way: any order sorted by grade is ideal.
    order = sorted(data.draw(st.permutations(list(grades))), key=lambda item: -grades[item])
    assert run(ranking.create_ndcg_evaluator, order, graded_pairs(grades), k=k) == 1.0
    if len(order) > 1 and grades[order[0]] != grades[order[-1]]:
        worse = order[::-1]
        assert run(ranking.create_ndcg_evaluator, worse, graded_pairs(grades)) < 1.0


@PROPERTY
@given(retrieved=retrieved_lists, reference=binary_references, k=ks)
def test_average_precision_relations(retrieved: list[int], reference: list[int], k: Any) -> None:
    standard = run(ranking.create_average_precision_evaluator, retrieved, reference, k=k)
    by_retrieved = run(
        ranking.create_average_precision_evaluator,
        retrieved,
        reference,
        k=k,
        normalize_by="retrieved_relevant",
    )
    assert standard <= by_retrieved <= 1.0
    # AP is bounded by recall (every term is <= 1 and there are at most `hits` terms).
    recall = run(ranking.create_recall_evaluator, retrieved, reference, k=k)
    if k is None:
        assert standard <= recall + 1e-12


@PROPERTY
@given(retrieved=retrieved_lists, reference=binary_references, k=ks)
def test_reciprocal_rank_and_hit_rate_agree(
    retrieved: list[int], reference: list[int], k: Any
) -> None:
    rr = run(ranking.create_reciprocal_rank_evaluator, retrieved, reference, k=k)
    hit = run(ranking.create_hit_rate_evaluator, retrieved, reference, k=k)
    assert (rr > 0) == (hit == 1.0)
    if rr:
        assert math.isclose(1 / rr, round(1 / rr))


def _oracle_ndcg(retrieved: list[int], grades: dict[int, int], k: int | None) -> float:
    seen: set[int] = set()
    dcg = 0.0
    for position, item in enumerate(retrieved[:k]):
        if item not in seen:
            dcg += grades.get(item, 0) / math.log2(position + 2)
        seen.add(item)
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg


@PROPERTY
@given(retrieved=retrieved_lists, grades=graded_references, k=ks)
def test_ndcg_matches_an_independent_formula(
    retrieved: list[int], grades: dict[int, int], k: Any
) -> None:
    value = run(ranking.create_ndcg_evaluator, retrieved, graded_pairs(grades), k=k)
    assert math.isclose(value, _oracle_ndcg(retrieved, grades, k), abs_tol=1e-12)


@PROPERTY
@given(
    batch=st.lists(st.tuples(retrieved_lists, binary_references), min_size=1, max_size=5),
    k=ks,
)
def test_batch_mean_is_the_mean_of_the_evaluator_scores(
    batch: list[tuple[list[int], list[int]]], k: Any
) -> None:
    retrieved = [b[0] for b in batch]
    references = [b[1] for b in batch]
    for batch_fn, factory in (
        (ranking.recall_batch, ranking.create_recall_evaluator),
        (ranking.average_precision_batch, ranking.create_average_precision_evaluator),
        (ranking.ndcg_batch, ranking.create_ndcg_evaluator),
    ):
        result = batch_fn(retrieved, references, k=k)
        singles = [run(factory, o, r, k=k) for o, r in batch]
        assert result.scores == singles
        assert result.mean is not None
        assert math.isclose(result.mean, sum(singles) / len(singles))


@PROPERTY
@given(retrieved=retrieved_lists, reference=binary_references, k=ks)
def test_async_suite_equals_sync_suite(retrieved: list[int], reference: list[int], k: Any) -> None:
    sync = ranking.create_retrieval_evaluator(k=k)(outputs=retrieved, reference_outputs=reference)
    asynchronous = asyncio.run(
        ranking.create_async_retrieval_evaluator(k=k)(
            outputs=retrieved, reference_outputs=reference
        )
    )
    assert asynchronous == sync


# --------------------------------------------------------------------------- batch = per item

BATCH_FORMS: list[tuple[Callable[..., Any], Callable[..., Any], dict[str, Any]]] = [
    (ranking.recall_batch, ranking.create_recall_evaluator, {}),
    (ranking.recall_batch, ranking.create_recall_evaluator, {"mode": "single_hit"}),
    (ranking.precision_batch, ranking.create_precision_evaluator, {}),
    (ranking.precision_batch, ranking.create_precision_evaluator, {"denominator": "retrieved"}),
    (ranking.hit_rate_batch, ranking.create_hit_rate_evaluator, {}),
    (ranking.reciprocal_rank_batch, ranking.create_reciprocal_rank_evaluator, {}),
    (ranking.average_precision_batch, ranking.create_average_precision_evaluator, {}),
    (
        ranking.average_precision_batch,
        ranking.create_average_precision_evaluator,
        {"normalize_by": "retrieved_relevant"},
    ),
    (
        ranking.average_precision_batch,
        ranking.create_average_precision_evaluator,
        {"normalize_by": "all_relevant"},
    ),
    (ranking.ndcg_batch, ranking.create_ndcg_evaluator, {}),
]

# Items in every accepted form: plain ids (str and int, which differ), dicts, graded pairs
# (grades 0-4, fractional too), repeats; the general path and the fast path both get exercised.
plain_ids = st.one_of(ids, ids.map(lambda i: f"d{i}"))
grades = st.one_of(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0, 2.5]))
reference_items = st.one_of(
    plain_ids,
    st.tuples(plain_ids, grades),
    st.builds(lambda i, g: {"id": i, "relevance": g}, plain_ids, grades),
)
retrieved_items = st.one_of(plain_ids, plain_ids.map(lambda i: {"id": i}))
queries = st.tuples(
    st.one_of(st.lists(plain_ids, max_size=14), st.lists(retrieved_items, max_size=14)),
    st.one_of(
        st.lists(plain_ids, max_size=8),
        st.lists(st.tuples(plain_ids, grades), max_size=8),
        st.lists(reference_items, max_size=8),
    ),
)


@settings(max_examples=80, deadline=None)
@given(
    batch=st.lists(queries, min_size=1, max_size=6),
    k=ks,
    empty=st.sampled_from(["zero", "one", "skip"]),
)
def test_batch_forms_give_exactly_the_per_item_results(
    batch: list[tuple[list[Any], list[Any]]], k: Any, empty: str
) -> None:
    retrieved = [b[0] for b in batch]
    references = [b[1] for b in batch]
    for batch_fn, factory, options in BATCH_FORMS:
        evaluator = factory(k=k, empty_reference=empty, **options)
        singles = [evaluator(outputs=o, reference_outputs=r) for o, r in batch]
        result = batch_fn(retrieved, references, k=k, empty_reference=empty, **options)
        assert_batch_matches(result, singles)


def assert_batch_matches(result: Any, singles: list[Any]) -> None:
    """A batch result is exactly the per-item results: key, scores, metadata (and the order of
    its entries), mean."""
    assert result.key == singles[0]["key"]
    assert result.scores == [s["score"] for s in singles]
    assert result.metadata == [s["metadata"] for s in singles]
    assert [list(m) for m in result.metadata] == [list(s["metadata"]) for s in singles]
    present = [s["score"] for s in singles if s["score"] is not None]
    assert result.mean == (sum(present) / len(present) if present else None)
