"""The ``batch`` form of the ranking evaluators (the batch runner's columnar path, issue 25):
one result per query, equal to a per-query call's - score, comment and metadata."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals import evaluate
from openevals.rag import (
    create_average_precision_evaluator,
    create_hit_rate_evaluator,
    create_ndcg_evaluator,
    create_precision_evaluator,
    create_recall_evaluator,
    create_reciprocal_rank_evaluator,
)

ITEMS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=6)
FACTORIES = [
    create_recall_evaluator,
    create_precision_evaluator,
    create_hit_rate_evaluator,
    create_reciprocal_rank_evaluator,
    create_average_precision_evaluator,
    create_ndcg_evaluator,
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=150, deadline=None)
@given(
    factory=st.sampled_from(FACTORIES),
    k=st.one_of(st.none(), st.integers(min_value=1, max_value=4)),
    empty=st.sampled_from(["zero", "one", "skip"]),
    queries=st.lists(st.tuples(ITEMS, ITEMS), min_size=1, max_size=8),
)
def test_batch_equals_per_query_calls(
    factory: Any, k: int | None, empty: str, queries: list[tuple[list[str], list[str]]]
) -> None:
    evaluator = factory(k=k, empty_reference=empty)
    outputs = [q[0] for q in queries]
    references = [q[1] for q in queries]
    batched = evaluator.batch(outputs=outputs, reference_outputs=references)
    single = [evaluator(outputs=o, reference_outputs=r) for o, r in queries]
    assert _same(batched, single)


def test_a_run_of_ranking_metrics_takes_their_batch_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = create_ndcg_evaluator(k=3)
    calls: list[int] = []
    real = evaluator.batch  # type: ignore[attr-defined]

    def counting(outputs: Any, reference_outputs: Any) -> Any:
        calls.append(len(outputs))
        return real(outputs=outputs, reference_outputs=reference_outputs)

    monkeypatch.setattr(evaluator, "batch", counting)
    rows = [{"outputs": ["a", "b", "c"][: i % 3 + 1], "reference_outputs": ["b"]} for i in range(9)]
    result = evaluate(rows, {"ndcg": evaluator}, progress=False)
    assert calls == [9]
    expected = [
        evaluator(outputs=r["outputs"], reference_outputs=r["reference_outputs"]) for r in rows
    ]
    assert [r["evaluations"]["ndcg"]["results"][0] for r in result.rows] == expected


def test_a_bad_query_fails_only_its_row() -> None:
    evaluator = create_recall_evaluator(k=2)
    rows = [{"outputs": ["a"], "reference_outputs": ["a"]} for _ in range(5)]
    rows[2]["outputs"] = 7  # not a list of items
    result = evaluate(rows, {"recall": evaluator}, progress=False)
    statuses = [r["evaluations"]["recall"]["status"] for r in result.rows]
    assert statuses == ["success", "success", "error", "success", "success"]
