"""The ``*_batch`` functions judge plain-id queries on a fast path and everything else through
``_items.judge``; both give exactly the per-item evaluators' scores, metadata, means and errors.

The generated batches are built to reach the fast path (every reference plain ids, or every
reference ``(id, grade)`` pairs) and each way out of it: duplicates in a retrieved list, repeated
reference ids with different grades, grade-0 items, dict and Document items, empty lists, ``k``
beyond a list's end, tuples as containers, mixed reference kinds, invalid items.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag import _ranking_batch, ranking
from tests.rag.test_ranking_properties import (  # every metric and option value
    BATCH_FORMS,
    assert_batch_matches,
)


class Doc:
    """A Document-like object (``.id``, ``.page_content``, ``.metadata``)."""

    def __init__(self, ident: Any, relevance: Any = None) -> None:
        self.id = ident
        self.page_content = f"text of {ident}"
        self.metadata = {} if relevance is None else {"relevance": relevance}

    def __repr__(self) -> str:
        return f"Doc({self.id!r})"


ids = st.integers(min_value=0, max_value=9)
plain = st.one_of(ids, ids.map(lambda i: f"d{i}"))  # 1 and "d1" never match; 1 and "1" differ
grade = st.one_of(
    st.integers(min_value=0, max_value=3),
    st.sampled_from([0.0, 0.5, 1.0, 2.5, 2**53 + 1, 2**64 + 3]),
)
container = st.sampled_from([list, tuple])


def retrieved_list(bad: bool) -> st.SearchStrategy[Any]:
    items = [plain, plain.map(lambda i: {"id": i}), plain.map(Doc)]
    if bad:
        items.append(st.sampled_from([None, 1.5, True]))
    return st.one_of(
        st.lists(plain, unique=True, max_size=12),  # the fast path
        st.lists(plain, max_size=12),  # duplicates
        st.lists(st.one_of(*items), max_size=12),
    ).flatmap(lambda value: container.map(lambda c: c(value)))


def reference_list(kind: str, bad: bool) -> st.SearchStrategy[Any]:
    pair = st.tuples(plain, grade)
    if kind == "ids":
        items: st.SearchStrategy[Any] = plain
    elif kind == "pairs":
        items = pair
    else:
        items = st.one_of(
            plain,
            pair,
            st.builds(lambda i, g: {"id": i, "relevance": g}, plain, grade),
            st.builds(Doc, plain, grade),
        )
    if bad:
        items = st.one_of(items, st.sampled_from([None, ("x", -1), ("x", 1, 2), True]))
    return st.lists(items, max_size=8).flatmap(lambda value: container.map(lambda c: c(value)))


@st.composite
def batches(draw: st.DrawFn, bad: bool = False) -> tuple[list[Any], list[Any]]:
    size = draw(st.integers(min_value=1, max_value=6))
    kinds = draw(st.sampled_from(["ids", "pairs", "mixed", "per-query"]))
    retrieved, references = [], []
    for _ in range(size):
        kind = draw(st.sampled_from(["ids", "pairs", "mixed"])) if kinds == "per-query" else kinds
        retrieved.append(draw(retrieved_list(bad)))
        references.append(draw(reference_list(kind, bad)))
    return retrieved, references


ks = st.one_of(st.none(), st.integers(min_value=1, max_value=14))


def batch_message(message: str, q: int) -> str:
    """A per-item error message as the batch words it for query ``q``."""
    message = re.sub(r"(?<!\w)reference_outputs", f"reference_lists[{q}]", message)
    return re.sub(r"(?<![\w\[])outputs", f"retrieved_lists[{q}]", message)


def assert_batch_is_per_item(
    retrieved: list[Any], references: list[Any], k: Any, empty: str
) -> None:
    for batch_fn, factory, options in BATCH_FORMS:
        evaluator = factory(k=k, empty_reference=empty, **options)
        singles = []
        for q, (o, r) in enumerate(zip(retrieved, references, strict=True)):
            try:
                singles.append(evaluator(outputs=o, reference_outputs=r))
            except (TypeError, ValueError) as error:
                with pytest.raises(type(error)) as raised:
                    batch_fn(retrieved, references, k=k, empty_reference=empty, **options)
                assert str(raised.value) == batch_message(str(error), q)
                break
        else:
            result = batch_fn(retrieved, references, k=k, empty_reference=empty, **options)
            assert_batch_matches(result, singles)


@settings(max_examples=150, deadline=None)
@given(batch=batches(), k=ks, empty=st.sampled_from(["zero", "one", "skip", "raise"]))
def test_batch_equals_per_item_on_every_path(
    batch: tuple[list[Any], list[Any]], k: Any, empty: str
) -> None:
    assert_batch_is_per_item(*batch, k, empty)


@settings(max_examples=100, deadline=None)
@given(batch=batches(bad=True), k=ks, empty=st.sampled_from(["zero", "raise"]))
def test_batch_raises_the_per_item_error_of_the_first_failing_query(
    batch: tuple[list[Any], list[Any]], k: Any, empty: str
) -> None:
    assert_batch_is_per_item(*batch, k, empty)


# --------------------------------------------------------------------------- which path


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The retrieved lists that went through ``judge`` (the general path)."""
    seen: list[Any] = []
    judge = _ranking_batch.judge

    def counting(retrieved: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(retrieved)
        return judge(retrieved, *args, **kwargs)

    monkeypatch.setattr(_ranking_batch, "judge", counting)
    return seen


PLAIN_RETRIEVED = [["a", "b", "c"], ("c", 2, "b"), [], ["x"]]


@pytest.mark.parametrize(
    "references",
    [
        [["b"], ("c", "a"), [2], []],
        [[("b", 2)], (("c", 1.5), ("a", 0)), [(2, 1)], []],
    ],
    ids=["ids", "pairs"],
)
def test_plain_queries_take_the_fast_path(judged: list[Any], references: list[Any]) -> None:
    for batch_fn, _, _ in BATCH_FORMS:
        batch_fn(PLAIN_RETRIEVED, references, k=2)
        batch_fn(PLAIN_RETRIEVED, references)
    assert judged == []


@pytest.mark.parametrize(
    ("retrieved", "references", "expected"),
    [
        # a duplicate (beyond k too), a document, a repeated reference id: those queries only
        ([["a", "b", "a"], ["a"]], [["a"], ["a"]], [["a", "b", "a"]]),
        ([["a"], [Doc("a")]], [["a"], ["a"]], [[Doc]]),
        ([["a"], ["a", "b"]], [[("a", 1)], [("b", 1), ("b", 3)]], [["a", "b"]]),
        # mixed reference kinds: every query
        ([["a"], ["b"]], [["a"], [("b", 2)]], [["a"], ["b"]]),
    ],
)
def test_other_queries_go_through_judge(
    judged: list[Any], retrieved: list[Any], references: list[Any], expected: list[Any]
) -> None:
    ranking.recall_batch(retrieved, references, k=2)
    assert [[type(i) if isinstance(i, Doc) else i for i in r] for r in judged] == expected


def test_a_callable_key_goes_through_judge(judged: list[Any]) -> None:
    ranking.recall_batch([["a"], ["b"]], [["a"], ["b"]], key=str.upper)
    assert judged == [["a"], ["b"]]


def test_raise_names_the_first_empty_reference_after_checking_earlier_queries() -> None:
    retrieved: list[Any] = [["a"], ["a"], ["a"], [None]]
    with pytest.raises(ValueError, match=r"`reference_lists\[1\]` holds no relevant item"):
        ranking.recall_batch(retrieved, [["a"], [], [("a", 0)], ["a"]], empty_reference="raise")
    with pytest.raises(TypeError, match=r"retrieved_lists\[1\]\[0\] must be an id"):
        ranking.recall_batch([["a"], [None]], [["a"], []], empty_reference="raise")
