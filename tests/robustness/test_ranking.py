"""Bad inputs to the ``*_batch`` ranking functions: every error is a TypeError/ValueError that
names what the caller passed (``retrieved_lists[i]``, ``reference_lists[i]``, with the query
index), never the per-item evaluator's ``outputs``/``reference_outputs``; nothing is mutated.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag import _ranking_metrics as table
from openevals.rag import ranking
from openevals.rag.ranking import BatchScores

BATCH_FORMS: dict[str, Callable[..., BatchScores]] = {
    spec.name: getattr(ranking, f"{spec.name}_batch") for spec in table.METRICS
}
FORMS = list(BATCH_FORMS.values())
FORM_IDS = list(BATCH_FORMS)

GOOD_RETRIEVED = ["a", "b", "c"]
GOOD_REFERENCE = ["b", ("c", 2)]


class NotADocument:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotADocument)

    __hash__ = object.__hash__


# A bad retrieved list for query `q`: (value, exception, pattern the message must match).
BAD_RETRIEVED: list[tuple[Any, type[Exception], str]] = [
    (None, TypeError, r"`retrieved_lists\[{q}\]` must be a list"),
    ("abc", TypeError, r"`retrieved_lists\[{q}\]` must be a list"),
    (5, TypeError, r"`retrieved_lists\[{q}\]` must be a list"),
    ({"a", "b"}, TypeError, r"`retrieved_lists\[{q}\]` must be a list"),
    ({"answer": "x"}, ValueError, r"`retrieved_lists\[{q}\]` is a dict"),
    ({"documents": [], "contexts": []}, ValueError, r"`retrieved_lists\[{q}\]` is a dict"),
    ({"documents": "a"}, TypeError, r"`retrieved_lists\[{q}\]\['documents'\]` must be a list"),
    ([None], TypeError, r"retrieved_lists\[{q}\]\[0\] must be an id"),
    (["a", ["b", 1]], TypeError, r"retrieved_lists\[{q}\]\[1\] must be an id"),
    (["a", ("b", 1)], TypeError, r"retrieved_lists\[{q}\]\[1\] must be an id"),
    ([1.5], TypeError, r"retrieved_lists\[{q}\]\[0\] has unsupported type float"),
    ([math.nan], TypeError, r"retrieved_lists\[{q}\]\[0\] has unsupported type float"),
    (["a", True], TypeError, r"retrieved_lists\[{q}\]\[1\] is a bool"),
    ([{"title": "t"}], ValueError, r"retrieved_lists\[{q}\]\[0\] is a dict without"),
    ([{"id": ["x"]}], TypeError, r"the 'id' of retrieved_lists\[{q}\]\[0\] must be hashable"),
    ([NotADocument()], TypeError, r"retrieved_lists\[{q}\]\[0\] has unsupported type"),
    (
        {"retrieved": [None]},
        TypeError,
        r"retrieved_lists\[{q}\]\['retrieved'\]\[0\] must be an id",
    ),
    ([b"bytes"], TypeError, r"retrieved_lists\[{q}\]\[0\] has unsupported type bytes"),
]

# A bad reference list for query `q`.
BAD_REFERENCE: list[tuple[Any, type[Exception], str]] = [
    (None, TypeError, r"`reference_lists\[{q}\]` must be a list"),
    ("abc", TypeError, r"`reference_lists\[{q}\]` must be a list"),
    (3, TypeError, r"`reference_lists\[{q}\]` must be a list"),
    ({"documents": ["a"], "relevant": ["b"]}, ValueError, r"`reference_lists\[{q}\]` is a dict"),
    ({"relevant": "a"}, TypeError, r"`reference_lists\[{q}\]\['relevant'\]` must be a list"),
    ([None], TypeError, r"reference_lists\[{q}\]\[0\] is None"),
    ([("a", -1)], ValueError, r"the relevance of reference_lists\[{q}\]\[0\]"),
    ([("a", math.inf)], ValueError, r"the relevance of reference_lists\[{q}\]\[0\].*finite"),
    ([("a", math.nan)], ValueError, r"the relevance of reference_lists\[{q}\]\[0\].*finite"),
    ([("a", 10**400)], ValueError, r"the relevance of reference_lists\[{q}\]\[0\].*finite"),
    ([("a", True)], TypeError, r"the relevance of reference_lists\[{q}\]\[0\]"),
    ([("a", "3")], TypeError, r"the relevance of reference_lists\[{q}\]\[0\]"),
    ([("a", 1, 2)], ValueError, r"reference_lists\[{q}\]\[0\] is a tuple of length 3"),
    ([("a",)], ValueError, r"reference_lists\[{q}\]\[0\] is a tuple of length 1"),
    (["a", ("b", -2)], ValueError, r"the relevance of reference_lists\[{q}\]\[1\]"),
    ([{"id": "a", "relevance": "high"}], TypeError, r"relevance of reference_lists\[{q}\]\[0\]"),
    ([{"id": "a", "relevance": -1}], ValueError, r"relevance of reference_lists\[{q}\]\[0\]"),
    ([1.5], TypeError, r"reference_lists\[{q}\]\[0\] has unsupported type float"),
    ([False], TypeError, r"reference_lists\[{q}\]\[0\] is a bool"),
    ([{"title": "t"}], ValueError, r"reference_lists\[{q}\]\[0\] is a dict without"),
    ([(["a"], 1)], TypeError, r"reference_lists\[{q}\]\[0\] has unsupported type list"),
]

# Bad top-level arguments: (retrieved_lists, reference_lists, exception, pattern).
BAD_TOP: list[tuple[Any, Any, type[Exception], str]] = [
    (None, [GOOD_REFERENCE], TypeError, "`retrieved_lists` must be a list"),
    ("ab", ["a", "b"], TypeError, "`retrieved_lists` must be a list"),
    ({"q1": GOOD_RETRIEVED}, [GOOD_REFERENCE], TypeError, "`retrieved_lists` must be a list"),
    (iter([GOOD_RETRIEVED]), [GOOD_REFERENCE], TypeError, "`retrieved_lists` must be a list"),
    ([GOOD_RETRIEVED], None, TypeError, "`reference_lists` must be a list"),
    ([GOOD_RETRIEVED], "ab", TypeError, "`reference_lists` must be a list"),
    ([GOOD_RETRIEVED], {"q1": GOOD_REFERENCE}, TypeError, "`reference_lists` must be a list"),
    ([GOOD_RETRIEVED], [], ValueError, "`retrieved_lists` and `reference_lists` must have"),
    ([GOOD_RETRIEVED] * 3, [GOOD_REFERENCE] * 2, ValueError, "got 3 and 2"),
    ([], [], ValueError, "`retrieved_lists` is empty"),
]

TRIED = {"count": 0}


def _check(form: Callable[..., BatchScores], args: tuple[Any, Any], kw: dict[str, Any]) -> Any:
    TRIED["count"] += 1
    snapshot = copy.deepcopy(args)
    try:
        return form(*args, **kw)
    finally:
        if not any(isinstance(a, type(iter([]))) for a in args):
            assert args == snapshot  # nothing the caller passed is mutated


def _batch_with(q: int, retrieved: Any = None, reference: Any = None) -> tuple[list, list]:
    retrieved_lists: list[Any] = [list(GOOD_RETRIEVED) for _ in range(4)]
    reference_lists: list[Any] = [list(GOOD_REFERENCE) for _ in range(4)]
    if retrieved is not None or reference is None:
        retrieved_lists[q] = retrieved
    if reference is not None:
        reference_lists[q] = reference
    return retrieved_lists, reference_lists


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("q", [0, 3])
@pytest.mark.parametrize(("bad", "exc", "pattern"), BAD_RETRIEVED)
def test_a_bad_retrieved_list_is_named_with_its_query_index(
    form: Callable[..., BatchScores], q: int, bad: Any, exc: type[Exception], pattern: str
) -> None:
    with pytest.raises(exc, match=pattern.format(q=q)) as info:
        _check(form, _batch_with(q, retrieved=bad), {})
    assert "outputs" not in str(info.value)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("q", [0, 3])
@pytest.mark.parametrize(("bad", "exc", "pattern"), BAD_REFERENCE)
def test_a_bad_reference_list_is_named_with_its_query_index(
    form: Callable[..., BatchScores], q: int, bad: Any, exc: type[Exception], pattern: str
) -> None:
    retrieved_lists, reference_lists = _batch_with(q)
    retrieved_lists[q] = list(GOOD_RETRIEVED)
    reference_lists[q] = bad
    with pytest.raises(exc, match=pattern.format(q=q)) as info:
        _check(form, (retrieved_lists, reference_lists), {})
    assert "outputs" not in str(info.value)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize(("retrieved", "reference", "exc", "pattern"), BAD_TOP)
def test_bad_top_level_arguments_are_named(
    form: Callable[..., BatchScores],
    retrieved: Any,
    reference: Any,
    exc: type[Exception],
    pattern: str,
) -> None:
    with pytest.raises(exc, match=pattern):
        _check(form, (retrieved, reference), {})


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_key_errors_name_the_batch_item(form: Callable[..., BatchScores]) -> None:
    retrieved = [[{"id": "a"}], [{"content": "x"}]]
    with pytest.raises(ValueError, match=r"retrieved_lists\[1\]\[0\] has no 'id'"):
        _check(form, (retrieved, [["a"], ["x"]]), {"key": "id"})
    with pytest.raises(ValueError, match=r"reference_lists\[1\]\[0\] has no 'content'"):
        _check(form, ([["a"], ["x"]], [["a"], [{"id": "x"}]]), {"key": "content"})

    def unhashable_for_r(item: Any) -> Any:
        return [item] if item == "r" else item

    with pytest.raises(TypeError, match=r"key\(retrieved_lists\[1\]\[1\]\) must be hashable"):
        _check(form, ([["a"], ["a", "r"]], [["a"], ["a"]]), {"key": unhashable_for_r})
    with pytest.raises(TypeError, match=r"key\(reference_lists\[0\]\[0\]\) must be hashable"):
        _check(form, ([["a"]], [["r"]]), {"key": unhashable_for_r})


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_an_empty_reference_under_raise_names_the_query(form: Callable[..., BatchScores]) -> None:
    with pytest.raises(ValueError, match=r"`reference_lists\[2\]` holds no relevant item") as info:
        _check(
            form, ([["a"], ["b"], ["c"]], [["a"], ["b"], [("c", 0)]]), {"empty_reference": "raise"}
        )
    assert "reference_outputs" not in str(info.value)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize(
    ("options", "exc", "pattern"),
    [
        ({"k": 0}, ValueError, "`k` must be >= 1"),
        ({"k": -3}, ValueError, "`k` must be >= 1"),
        ({"k": 2.0}, TypeError, "`k` must be a positive int"),
        ({"k": True}, TypeError, "`k` must be a positive int"),
        ({"key": "title"}, ValueError, "`key` must be"),
        ({"empty_reference": "nan"}, ValueError, "`empty_reference` must be one of"),
        ({"feedback_key": "x"}, TypeError, "unexpected keyword argument 'feedback_key'"),
    ],
)
def test_bad_options(
    form: Callable[..., BatchScores], options: dict[str, Any], exc: type[Exception], pattern: str
) -> None:
    with pytest.raises(exc, match=pattern):
        _check(form, ([GOOD_RETRIEVED], [GOOD_REFERENCE]), options)


junk = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=3),
        st.binary(max_size=2),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["id", "content", "relevance", "documents"]), inner),
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    retrieved=st.lists(junk, min_size=1, max_size=3),
    reference=st.lists(junk, min_size=1, max_size=3),
)
def test_junk_either_scores_or_raises_a_named_error(
    retrieved: list[Any], reference: list[Any]
) -> None:
    n = min(len(retrieved), len(reference))
    for form in FORMS:
        try:
            result = _check(form, (retrieved[:n], reference[:n]), {})
        except (TypeError, ValueError) as exc:
            message = str(exc)
            assert "retrieved_lists" in message or "reference_lists" in message, message
            assert "`outputs`" not in message and "reference_outputs" not in message
        else:
            assert len(result.scores) == n
            for score in result.scores:
                assert score is not None and 0.0 <= score <= 1.0


def test_count_of_bad_inputs_tried() -> None:
    # Runs last in this module (pytest keeps file order): the tally for the notes.
    assert TRIED["count"] >= len(FORMS) * (2 * len(BAD_RETRIEVED) + 2 * len(BAD_REFERENCE))
    print(f"\nbad inputs tried against the batch forms: {TRIED['count']}")
