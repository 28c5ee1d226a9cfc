from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

import openevals.rag as rag
from openevals.rag import ranking
from openevals.rag.ranking import BatchScores
from tests.rag.fresh_python import assert_runs_in_fresh_python


class HaystackLikeDocument:
    """Stands in for haystack.Document: ``.content``, ``.score`` and a content-derived ``.id``."""

    def __init__(self, content: str, score: float | None = None) -> None:
        self.content = content
        self.score = score
        self.id = f"sha-{content}"


def hs_docs(*contents: str) -> list[HaystackLikeDocument]:
    return [HaystackLikeDocument(c) for c in contents]


# Haystack's example corpus (MAP / MRR / Recall evaluators share it).
HS_GROUND_TRUTH = [hs_docs("France"), hs_docs("9th century", "9th")]
HS_RETRIEVED = [hs_docs("France"), hs_docs("9th century", "10th century", "9th")]

# graphrag-eval's retrieval example.
GR_RELEVANT = [1, 3, 5, 6]
GR_RETRIEVED = [1, 4, 3, 5, 7]


# The six metrics in their three forms, by metric name.
METRICS = ["average_precision", "hit_rate", "ndcg", "precision", "recall", "reciprocal_rank"]
SYNC_FACTORIES: dict[str, Callable[..., Any]] = {
    m: getattr(ranking, f"create_{m}_evaluator") for m in METRICS
}
ASYNC_FACTORIES: dict[str, Callable[..., Any]] = {
    m: getattr(ranking, f"create_async_{m}_evaluator") for m in METRICS
}
BATCH: dict[str, Callable[..., BatchScores]] = {m: getattr(ranking, f"{m}_batch") for m in METRICS}


def score(metric: str, outputs: Any, reference: Any, **options: Any) -> Any:
    result = SYNC_FACTORIES[metric](**options)(outputs=outputs, reference_outputs=reference)
    assert isinstance(result, dict)
    return result["score"]


# --------------------------------------------------------------------------- Haystack examples


def test_haystack_map_example() -> None:
    result = ranking.average_precision_batch(HS_RETRIEVED, HS_GROUND_TRUTH)
    assert result.scores == [1.0, 0.8333333333333333]
    assert result.mean == 0.9166666666666666
    assert result.key == "average_precision"


def test_haystack_mrr_example() -> None:
    result = ranking.reciprocal_rank_batch(HS_RETRIEVED, HS_GROUND_TRUTH)
    assert result.scores == [1.0, 1.0]
    assert result.mean == 1.0


@pytest.mark.parametrize("mode", ["single_hit", "multi_hit"])
def test_haystack_recall_example(mode: Any) -> None:
    result = ranking.recall_batch(HS_RETRIEVED, HS_GROUND_TRUTH, mode=mode)
    assert result.scores == [1.0, 1.0]
    assert result.mean == 1.0


def test_haystack_recall_modes_differ_on_partial_retrieval() -> None:
    retrieved = [hs_docs("France"), hs_docs("9th century", "10th century")]
    assert ranking.recall_batch(retrieved, HS_GROUND_TRUTH, mode="single_hit").scores == [1.0, 1.0]
    multi = ranking.recall_batch(retrieved, HS_GROUND_TRUTH, mode="multi_hit")
    assert multi.scores == [1.0, 0.5]
    assert multi.mean == 0.75


def test_haystack_ndcg_example_follows_the_standard_definition() -> None:
    # Haystack prints 0.8869 for this input; the standard log2(rank + 1) NDCG is 0.9502
    # (see docs/rag-retrieval.md).
    reference = [{"content": "France", "relevance": 1.0}, {"content": "Paris", "relevance": 0.5}]
    result = ranking.ndcg_batch([["France", "Germany", "Paris"]], [reference])
    assert round(result.scores[0] or 0.0, 4) == 0.9502
    assert result.mean == result.scores[0]
    dcg = 1.0 / math.log2(2) + 0.5 / math.log2(4)
    idcg = 1.0 / math.log2(2) + 0.5 / math.log2(3)
    assert result.scores[0] == pytest.approx(dcg / idcg, abs=1e-15)
    assert round(dcg / idcg, 4) != 0.8869


# --------------------------------------------------------------------------- graphrag examples


def test_graphrag_recall_at_5() -> None:
    r: Any = ranking.create_recall_evaluator(k=5)(
        outputs=GR_RETRIEVED, reference_outputs=GR_RELEVANT
    )
    assert r["key"] == "recall@5"
    assert r["score"] == 0.75
    assert r["metadata"] == {
        "k": 5,
        "relevant": 4,
        "retrieved": 5,
        "retrieved_relevant": 3,
    }


def test_graphrag_average_precision_divides_by_retrieved_relevant() -> None:
    value = score("average_precision", GR_RETRIEVED, GR_RELEVANT, normalize_by="retrieved_relevant")
    assert value == pytest.approx((1.0 + 2 / 3 + 3 / 4) / 3)
    assert round(value, 4) == 0.8056


def test_standard_average_precision_divides_by_all_relevant() -> None:
    r: Any = ranking.create_average_precision_evaluator()(
        outputs=GR_RETRIEVED, reference_outputs=GR_RELEVANT
    )
    assert r["score"] == pytest.approx((1.0 + 2 / 3 + 3 / 4) / 4)
    assert r["metadata"]["denominator"] == 4


# --------------------------------------------------------------------------- hand-computed


# retrieved: a b c d e ; relevant: b d f  (ranks 2 and 4 hit)
RET = ["a", "b", "c", "d", "e"]
REL = ["b", "d", "f"]


@pytest.mark.parametrize(
    ("metric", "options", "expected"),
    [
        ("recall", {}, 2 / 3),
        ("recall", {"k": 1}, 0.0),
        ("recall", {"k": 2}, 1 / 3),
        ("recall", {"k": 4}, 2 / 3),
        ("recall", {"k": 2, "mode": "single_hit"}, 1.0),
        ("recall", {"k": 1, "mode": "single_hit"}, 0.0),
        ("precision", {}, 2 / 5),
        ("precision", {"k": 2}, 1 / 2),
        ("precision", {"k": 4}, 2 / 4),
        ("precision", {"k": 10}, 2 / 10),
        ("precision", {"k": 10, "denominator": "retrieved"}, 2 / 5),
        ("precision", {"k": 3, "denominator": "retrieved"}, 1 / 3),
        ("hit_rate", {"k": 1}, 0.0),
        ("hit_rate", {"k": 2}, 1.0),
        ("hit_rate", {}, 1.0),
        ("reciprocal_rank", {}, 1 / 2),
        ("reciprocal_rank", {"k": 1}, 0.0),
        ("reciprocal_rank", {"k": 2}, 1 / 2),
        ("average_precision", {}, (1 / 2 + 2 / 4) / 3),
        ("average_precision", {"k": 2}, (1 / 2) / 2),
        ("average_precision", {"k": 4}, (1 / 2 + 2 / 4) / 3),
        ("average_precision", {"normalize_by": "retrieved_relevant"}, (1 / 2 + 2 / 4) / 2),
        ("average_precision", {"k": 1, "normalize_by": "retrieved_relevant"}, 0.0),
        ("ndcg", {}, (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / 2)),
        ("ndcg", {"k": 2}, (1 / math.log2(3)) / (1 + 1 / math.log2(3))),
        ("ndcg", {"k": 1}, 0.0),
    ],
)
def test_hand_computed_binary(metric: str, options: dict[str, Any], expected: float) -> None:
    value = score(metric, RET, REL, **options)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, abs=1e-12)


def test_graded_ndcg_hand_computed() -> None:
    reference = [("a", 3), ("b", 2), {"id": "c", "relevance": 1}]
    retrieved = ["c", "a", "x", "b"]
    dcg = 1 / math.log2(2) + 3 / math.log2(3) + 2 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    r: Any = ranking.create_ndcg_evaluator()(outputs=retrieved, reference_outputs=reference)
    assert r["score"] == pytest.approx(dcg / idcg)
    assert r["metadata"]["dcg"] == pytest.approx(dcg)
    assert r["metadata"]["idcg"] == pytest.approx(idcg)
    dcg2 = 1 + 3 / math.log2(3)
    idcg2 = 3 + 2 / math.log2(3)
    assert score("ndcg", retrieved, reference, k=2) == pytest.approx(dcg2 / idcg2)


def test_graded_binary_metrics_treat_positive_grades_as_relevant() -> None:
    reference = [("a", 3), ("b", 0), ("c", 0.5)]
    retrieved = ["b", "a", "c"]
    assert score("recall", retrieved, reference) == 1.0  # b is not relevant
    assert score("reciprocal_rank", retrieved, reference) == 1 / 2
    assert score("precision", retrieved, reference) == pytest.approx(2 / 3)
    r: Any = ranking.create_recall_evaluator()(outputs=retrieved, reference_outputs=reference)
    assert r["metadata"]["relevant"] == 2


def test_duplicates_count_once_and_keep_their_rank() -> None:
    retrieved = ["a", "a", "b"]
    reference = ["a", "b"]
    assert score("recall", retrieved, reference) == 1.0
    assert score("precision", retrieved, reference) == pytest.approx(2 / 3)
    assert score("precision", retrieved, reference, k=2) == pytest.approx(1 / 2)
    assert score("average_precision", retrieved, reference) == pytest.approx((1 + 2 / 3) / 2)
    dcg = 1 + 1 / math.log2(4)
    assert score("ndcg", retrieved, reference) == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    r: Any = ranking.create_precision_evaluator()(outputs=retrieved, reference_outputs=reference)
    assert r["metadata"]["duplicates"] == 1
    assert r["metadata"]["retrieved_relevant"] == 2


def test_duplicate_reference_items_count_once_with_highest_grade() -> None:
    reference = [("a", 1), ("a", 3), "b"]
    r: Any = ranking.create_ndcg_evaluator()(outputs=["a", "b"], reference_outputs=reference)
    assert r["metadata"]["relevant"] == 2
    assert r["score"] == 1.0
    assert score("recall", ["a"], reference) == 0.5


def test_reciprocal_rank_metadata() -> None:
    r: Any = ranking.create_reciprocal_rank_evaluator()(
        outputs=["x", "y", "b"], reference_outputs=["b"]
    )
    assert r["score"] == pytest.approx(1 / 3)
    assert r["metadata"]["first_relevant_rank"] == 3
    r = ranking.create_reciprocal_rank_evaluator()(outputs=["x"], reference_outputs=["b"])
    assert r["score"] == 0.0
    assert r["metadata"]["first_relevant_rank"] is None


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("metric", METRICS)
def test_empty_retrieved_scores_zero(metric: str) -> None:
    assert score(metric, [], ["a", "b"]) == 0.0
    assert score(metric, [], ["a", "b"], k=3) == 0.0


@pytest.mark.parametrize("metric", METRICS)
def test_empty_reference_default_is_zero_with_a_comment(metric: str) -> None:
    for reference in ([], [("a", 0)]):
        r: Any = SYNC_FACTORIES[metric]()(outputs=["a", "b"], reference_outputs=reference)
        assert r["score"] == 0.0
        assert "no relevant item" in r["comment"]
        assert r["metadata"]["relevant"] == 0


@pytest.mark.parametrize("metric", METRICS)
def test_empty_reference_options(metric: str) -> None:
    assert score(metric, ["a"], [], empty_reference="one") == 1.0
    assert score(metric, [], [], empty_reference="one") == 1.0
    assert score(metric, ["a"], [], empty_reference="skip") is None
    with pytest.raises(ValueError, match="no relevant item"):
        score(metric, ["a"], [], empty_reference="raise")


def test_skip_is_left_out_of_batch_means() -> None:
    result = ranking.recall_batch([["a"], ["a"], ["b"]], [["a"], [], ["a"]], empty_reference="skip")
    assert result.scores == [1.0, None, 0.0]
    assert result.mean == 0.5
    assert ranking.recall_batch([["a"]], [[]], empty_reference="skip").mean is None
    assert ranking.recall_batch([["a"], ["a"]], [["a"], []]).mean == 0.5  # "zero" counts


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("bad_k", [0, -1])
def test_k_below_one_fails_at_creation(metric: str, bad_k: int) -> None:
    with pytest.raises(ValueError, match="`k` must be >= 1"):
        SYNC_FACTORIES[metric](k=bad_k)
    with pytest.raises(ValueError, match="`k`"):
        ASYNC_FACTORIES[metric](k=bad_k)
    with pytest.raises(ValueError, match="`k`"):
        BATCH[metric]([["a"]], [["a"]], k=bad_k)


@pytest.mark.parametrize("bad_k", [1.5, True, "3"])
def test_k_must_be_an_int(bad_k: Any) -> None:
    with pytest.raises(TypeError, match="`k` must be a positive int"):
        ranking.create_recall_evaluator(k=bad_k)


@pytest.mark.parametrize(
    ("factory", "options", "param"),
    [
        (ranking.create_recall_evaluator, {"mode": "multi-hit"}, "mode"),
        (ranking.create_precision_evaluator, {"denominator": "all"}, "denominator"),
        (ranking.create_average_precision_evaluator, {"normalize_by": "k"}, "normalize_by"),
        (ranking.create_ndcg_evaluator, {"empty_reference": "nan"}, "empty_reference"),
        (ranking.create_hit_rate_evaluator, {"key": "title"}, "key"),
        (ranking.create_retrieval_evaluator, {"metrics": ["recall", "f1"]}, "metric"),
        (ranking.create_retrieval_evaluator, {"k": []}, "k"),
    ],
)
def test_bad_options_fail_at_creation(
    factory: Callable[..., Any], options: dict[str, Any], param: str
) -> None:
    with pytest.raises(ValueError, match=param):
        factory(**options)


def test_bad_option_types() -> None:
    with pytest.raises(TypeError, match="metrics"):
        ranking.create_retrieval_evaluator(metrics="recall")
    with pytest.raises(TypeError, match="feedback_key"):
        ranking.create_recall_evaluator(feedback_key="")


def test_factories_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ranking.create_recall_evaluator(5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ranking.create_retrieval_evaluator(["recall"])  # type: ignore[call-arg]


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("outputs", "reference", "exc", "pattern"),
    [
        (None, ["a"], TypeError, "`outputs` must be a list"),
        ("abc", ["a"], TypeError, "`outputs` must be a list"),
        (["a"], None, TypeError, "`reference_outputs` must be a list"),
        ({"answer": "x"}, ["a"], ValueError, r"`outputs` is a dict.*none of them"),
        ({"documents": [], "contexts": []}, ["a"], ValueError, "exactly one"),
        (["a"], {"relevant": "a"}, TypeError, r"reference_outputs\['relevant'\]"),
        ([["a", 1]], ["a"], TypeError, r"outputs\[0\]"),
        ([None], ["a"], TypeError, r"outputs\[0\]"),
        ([1.5], ["a"], TypeError, r"outputs\[0\] has unsupported type float"),
        ([True], ["a"], TypeError, r"outputs\[0\] is a bool"),
        ([{"title": "t"}], ["a"], ValueError, r"outputs\[0\] is a dict without 'id' or 'content'"),
        ([{"id": ["x"]}], ["a"], TypeError, "hashable"),
        (["a"], [("a", -1)], ValueError, r"relevance of reference_outputs\[0\]"),
        (["a"], [("a", math.inf)], ValueError, "finite"),
        (["a"], [("a", True)], TypeError, "non-negative number"),
        (["a"], [("a", 1, 2)], ValueError, r"reference_outputs\[0\] is a tuple of length 3"),
        (["a"], [None], TypeError, r"reference_outputs\[0\] is None"),
    ],
)
def test_bad_inputs_name_the_parameter(
    outputs: Any, reference: Any, exc: type[Exception], pattern: str
) -> None:
    evaluator = ranking.create_recall_evaluator()
    with pytest.raises(exc, match=pattern):
        evaluator(outputs=outputs, reference_outputs=reference)


def test_key_mode_errors() -> None:
    with pytest.raises(ValueError, match="key='id'"):
        score("recall", [{"content": "x"}], ["x"], key="id")
    with pytest.raises(ValueError, match="key='content'"):
        score("recall", [{"id": "x"}], ["x"], key="content")
    with pytest.raises(ValueError, match="no id"):
        score("recall", [Document(page_content="x")], ["x"], key="id")


def test_batch_validation() -> None:
    with pytest.raises(ValueError, match="same length"):
        ranking.recall_batch([["a"]], [["a"], ["b"]])
    with pytest.raises(ValueError, match="at least one query"):
        ranking.recall_batch([], [])
    with pytest.raises(TypeError, match="retrieved_lists"):
        ranking.recall_batch("ab", ["a", "b"])
    with pytest.raises(TypeError, match=r"`retrieved_lists\[1\]` must be a list"):
        ranking.recall_batch([["a"], "b"], [["a"], ["b"]])


# --------------------------------------------------------------------------- item forms


def test_item_forms_and_containers() -> None:
    reference = {"relevant": [{"id": "d1"}, {"id": "d2", "content": "ignored"}]}
    outputs = {
        "answer": "some text",
        "documents": [
            Document(page_content="zzz", id="d2"),
            {"id": "d9", "content": "x"},
            {"id": "d1"},
        ],
    }
    assert score("recall", outputs, reference) == 1.0
    assert score("reciprocal_rank", outputs, reference) == 1.0
    assert score("precision", {"contexts": ["d1"]}, {"documents": ["d1", "d2"]}) == 1.0
    assert score("precision", {"retrieved": ["d1"]}, {"contexts": ["d1"]}) == 1.0


def test_default_key_falls_back_to_content() -> None:
    docs = [Document(page_content="Paris"), Document(page_content="Berlin")]
    assert score("recall", docs, ["Berlin", "Rome"]) == 0.5
    assert score("recall", [{"page_content": "Berlin"}], [{"content": "Berlin"}]) == 1.0


def test_key_content_ignores_ids() -> None:
    outputs = [{"id": "1", "content": "Paris"}, Document(page_content="Rome", id="7")]
    reference = [{"id": "other", "content": "Rome"}]
    assert score("recall", outputs, reference) == 0.0
    assert score("recall", outputs, reference, key="content") == 1.0


def test_callable_key() -> None:
    outputs = [{"url": "https://a/1#x"}, {"url": "https://a/2"}]
    reference = [{"url": "https://a/1"}]
    value = score(
        "recall", outputs, reference, key=lambda item: item["url"].split("#", maxsplit=1)[0]
    )
    assert value == 1.0


def test_ids_are_typed() -> None:
    assert score("recall", [1], ["1"]) == 0.0
    assert score("recall", [1], [1]) == 1.0


def test_document_metadata_relevance_and_haystack_like_documents() -> None:
    reference = [
        Document(page_content="A", metadata={"relevance": 2}),
        Document(page_content="B", metadata={"relevance": 1}),
    ]
    assert score("ndcg", ["A", "B"], reference) == 1.0
    assert score("ndcg", ["B", "A"], reference) < 1.0
    # Haystack documents carry a content-derived id, so equal contents match by id.
    assert score("recall", hs_docs("x", "y"), hs_docs("y")) == 1.0


def test_inputs_are_not_mutated() -> None:
    outputs = {"documents": [{"id": "a", "content": "x"}, {"id": "b"}], "answer": "t"}
    reference = [("a", 2), {"id": "b", "relevance": 1}]
    snapshot = copy.deepcopy((outputs, reference))
    ranking.create_retrieval_evaluator(k=[1, 2])(outputs=outputs, reference_outputs=reference)
    ranking.ndcg_batch([outputs], [reference])
    assert (outputs, reference) == snapshot


# --------------------------------------------------------------------------- keys and results


@pytest.mark.parametrize("metric", METRICS)
def test_feedback_keys(metric: str) -> None:
    no_k = SYNC_FACTORIES[metric]()(outputs=["a"], reference_outputs=["a"])
    with_k = SYNC_FACTORIES[metric](k=3)(outputs=["a"], reference_outputs=["a"])
    custom = SYNC_FACTORIES[metric](feedback_key="mine")(outputs=["a"], reference_outputs=["a"])
    assert no_k["key"] == metric
    assert with_k["key"] == f"{metric}@3"
    assert custom["key"] == "mine"
    assert isinstance(no_k["score"], float)


def test_retrieval_evaluator_returns_every_metric_and_k() -> None:
    evaluator = ranking.create_retrieval_evaluator(k=[1, 3])
    results = evaluator(outputs=RET, reference_outputs=REL, inputs={"q": "ignored"})
    assert isinstance(results, list)
    keys = [r["key"] for r in results]
    assert keys == [
        f"{name}@{k}"
        for name in (
            "recall",
            "precision",
            "reciprocal_rank",
            "average_precision",
            "ndcg",
            "hit_rate",
        )
        for k in (1, 3)
    ]
    by_key = {r["key"]: r["score"] for r in results}
    for name in METRICS:
        for k in (1, 3):
            assert by_key[f"{name}@{k}"] == score(name, RET, REL, k=k)


def test_retrieval_evaluator_options_and_aliases() -> None:
    evaluator = ranking.create_retrieval_evaluator(
        metrics=["map", "average_precision", "recall"],
        mode="single_hit",
        normalize_by="retrieved_relevant",
    )
    results: Any = evaluator(outputs=GR_RETRIEVED, reference_outputs=GR_RELEVANT)
    assert [r["key"] for r in results] == ["average_precision", "recall"]
    assert results[0]["score"] == pytest.approx(0.8055555555555556)
    assert results[1]["score"] == 1.0


def test_batch_matches_the_evaluators() -> None:
    retrieved = [RET, GR_RETRIEVED, [], ["b", "b", "d"]]
    references = [REL, GR_RELEVANT, ["a"], REL]
    for metric in METRICS:
        for k in (None, 2):
            batch = BATCH[metric](retrieved, references, k=k)
            singles = [score(metric, o, r, k=k) for o, r in zip(retrieved, references, strict=True)]
            assert batch.scores == singles
            assert batch.mean == pytest.approx(sum(singles) / len(singles))
            assert len(batch.metadata) == len(retrieved)


async def test_async_twins_agree() -> None:
    cases = [(RET, REL), (GR_RETRIEVED, GR_RELEVANT), ([], ["a"]), (["a"], [])]
    for metric in METRICS:
        for options in ({}, {"k": 2}):
            sync = SYNC_FACTORIES[metric](**options)
            asynchronous = ASYNC_FACTORIES[metric](**options)
            for outputs, reference in cases:
                got = await asynchronous(outputs=outputs, reference_outputs=reference)
                assert got == sync(outputs=outputs, reference_outputs=reference)


async def test_async_retrieval_evaluator_and_errors() -> None:
    sync = ranking.create_retrieval_evaluator(k=2)
    asynchronous = ranking.create_async_retrieval_evaluator(k=2)
    got = await asynchronous(outputs=RET, reference_outputs=REL)
    assert got == sync(outputs=RET, reference_outputs=REL)
    with pytest.raises(TypeError, match="`outputs`"):
        await asynchronous(outputs=None, reference_outputs=REL)
    with pytest.raises(ValueError, match="no relevant item"):
        await ranking.create_async_ndcg_evaluator(empty_reference="raise")(
            outputs=["a"], reference_outputs=[]
        )


# --------------------------------------------------------------------------- package surface


def test_package_exports_resolve_lazily() -> None:
    for name in rag.__all__:
        assert getattr(rag, name) is not None
    assert rag.create_recall_evaluator is ranking.create_recall_evaluator
    assert "create_ndcg_evaluator" in dir(rag)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rag.nope  # noqa: B018


def test_ranking_import_loads_no_llm_stack() -> None:
    code = (
        "import sys\n"
        "from openevals.rag import create_retrieval_evaluator, create_steps_evaluator\n"
        "create_retrieval_evaluator()(outputs=['a'], reference_outputs=['a'])\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('openai', 'langchain_openai', 'langchain', 'langchain_core', 'langsmith', 'torch')]\n"
        "assert not heavy, heavy\n"
        "assert 'openevals.rag.steps' in sys.modules\n"
    )
    assert_runs_in_fresh_python(code)


# --------------------------------------------------------------------------- documentation


def test_documentation_examples_print_what_the_docs_say() -> None:
    import contextlib
    import io
    import re

    doc = Path(__file__).resolve().parents[2] / "docs" / "rag-retrieval.md"
    blocks = re.findall(r"```(python|text)\n(.*?)```", doc.read_text(), flags=re.S)
    namespace: dict[str, Any] = {}
    checked = 0
    for (kind, code), following in zip(blocks, [*blocks[1:], ("", "")], strict=True):
        if kind != "python":
            continue
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, str(doc), "exec"), namespace)
        assert following[0] == "text", f"python block without printed output:\n{code}"
        assert buffer.getvalue() == following[1], code
        checked += 1
    assert checked >= 6
