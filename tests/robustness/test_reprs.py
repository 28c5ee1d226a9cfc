"""Values shown in error messages: one bounded, iterative helper (issue 27, item 3).

A message that shows a 2,000-deep, self-containing, huge or badly behaved value must still be
built: ``openevals._repr.show`` never recurses, never raises and stays short. The ranking
metrics, given such an item in the retrieved list, raise their TypeError naming the parameter
(not ``RecursionError`` from ``{item!r}``).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals._repr import LIMIT, show
from openevals.rag import (
    create_async_ndcg_evaluator,
    create_async_recall_evaluator,
    create_async_retrieval_evaluator,
    create_ndcg_evaluator,
    create_recall_evaluator,
    create_retrieval_evaluator,
    ndcg_batch,
    recall_batch,
)

pytestmark = pytest.mark.usefixtures("tracing_off")

DEPTH = 2_000


def deep_list(depth: int = DEPTH) -> Any:
    value: Any = "a"
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int = DEPTH) -> Any:
    value: Any = {"id": "a"}
    for _ in range(depth):
        value = {"next": value}
    return value


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("boom")


class RecursiveRepr:
    def __repr__(self) -> str:
        return repr(self)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.tuples(inner, inner)
    ),
    max_leaves=8,
)


@settings(max_examples=200)
@given(value=JSON)
def test_small_plain_values_are_shown_exactly_as_repr_shows_them(value: Any) -> None:
    expected = repr(value)
    if len(expected) <= LIMIT:  # short values are not cut
        shown = show(value)
        if "..." not in shown:
            assert shown == expected


@settings(max_examples=200)
@given(value=JSON, limit=st.integers(min_value=8, max_value=300))
def test_every_shown_value_is_bounded(value: Any, limit: int) -> None:
    assert len(show(value, limit)) <= limit + 3


@pytest.mark.parametrize(
    "value",
    [
        deep_list(),
        deep_dict(),
        deep_list(100_000),
        "x" * 10_000_000,
        10**100_000,
        b"y" * 1_000_000,
        [BadRepr()],
        {"r": RecursiveRepr()},
        set(range(1_000_000)),
        tuple(range(1_000_000)),
    ],
    ids=[
        "deep-list",
        "deep-dict",
        "very-deep-list",
        "long-str",
        "huge-int",
        "long-bytes",
        "raising-repr",
        "recursive-repr",
        "big-set",
        "long-tuple",
    ],
)
def test_any_value_is_shown_short_without_error(value: Any) -> None:
    before = copy.copy(value)
    text = show(value)
    assert isinstance(text, str)
    assert len(text) <= LIMIT + 3
    assert type(value) is type(before)


def test_a_cycle_is_marked_not_followed() -> None:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    assert show(value) == "{'a': 1, 'self': <cycle>}"
    listed: list[Any] = [1]
    listed.append(listed)
    assert show(listed) == "[1, <cycle>]"


def test_a_shared_value_that_is_not_a_cycle_is_shown_twice() -> None:
    shared = [1]
    assert show([shared, shared]) == "[[1], [1]]"


def test_deep_levels_are_elided() -> None:
    assert show(deep_list(10)) == "[[[[[...]]]]]"


# --------------------------------------------------------------------------- ranking metrics

PATTERN = r"outputs\[0\] must be an id, string, dict or document; got list \[\[\["


@pytest.mark.parametrize(
    "factory",
    [
        lambda: create_recall_evaluator(k=3),
        lambda: create_ndcg_evaluator(k=3),
        lambda: create_retrieval_evaluator(k=3),
    ],
    ids=["recall", "ndcg", "retrieval"],
)
@pytest.mark.parametrize("container", [deep_list, deep_dict], ids=["list", "dict"])
def test_a_deep_retrieved_item_gives_the_metrics_own_error(factory: Any, container: Any) -> None:
    item = container()
    if container is deep_list:
        with pytest.raises(TypeError, match=PATTERN):
            factory()(outputs=[item], reference_outputs=["a"])
    else:  # a dict without 'id'/'content': named, and shown briefly
        with pytest.raises(ValueError, match=r"outputs\[0\] is a dict without 'id'"):
            factory()(outputs=[item], reference_outputs=["a"])


@pytest.mark.parametrize(
    "factory",
    [create_async_recall_evaluator, create_async_ndcg_evaluator, create_async_retrieval_evaluator],
    ids=["recall", "ndcg", "retrieval"],
)
def test_async_metrics_too(factory: Any) -> None:
    with pytest.raises(TypeError, match=PATTERN):
        asyncio.run(factory(k=3)(outputs=[deep_list()], reference_outputs=["a"]))


@pytest.mark.parametrize("batch", [recall_batch, ndcg_batch], ids=["recall", "ndcg"])
def test_a_deep_item_in_a_batch_names_its_query(batch: Any) -> None:
    with pytest.raises(TypeError, match=r"retrieved_lists\[1\]\[0\] must be an id"):
        batch([["a"], [deep_list()]], [["a"], ["a"]])


def test_a_deep_unhashable_id_in_the_reference_is_named() -> None:
    with pytest.raises(TypeError, match=r"the 'id' of reference_outputs\[0\] must be hashable"):
        create_recall_evaluator(k=3)(outputs=["a"], reference_outputs=[{"id": deep_list()}])


# --------------------------------------------------------------------------- JSON text at any depth

PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=100)
@given(value=PLAIN, sort_keys=st.booleans())
def test_json_text_at_any_depth_is_json_dumps_text(value: Any, sort_keys: bool) -> None:
    import json

    from openevals._messages import to_json_text

    expected = json.dumps(value, sort_keys=sort_keys, ensure_ascii=False)
    top = value if isinstance(value, str) else expected  # a string is sent as it is
    assert to_json_text(value, sort_keys=sort_keys) == top
    wrapped: Any = value
    for _ in range(DEPTH):
        wrapped = [wrapped]
    text = to_json_text(wrapped, sort_keys=sort_keys)
    assert text == "[" * DEPTH + expected + "]" * DEPTH
