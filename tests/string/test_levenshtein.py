from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openevals.string.levenshtein import (
    levenshtein_distance,
    levenshtein_distance_async,
    levenshtein_similarity,
)


def _reference_distance(a: str, b: str) -> int:
    """Textbook two-row dynamic programme, as an oracle."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_public_examples() -> None:
    result = levenshtein_distance(outputs="kitten", reference_outputs="sitting")
    assert result["key"] == "levenshtein_distance"
    assert result["score"] == pytest.approx(1 - 3 / 7)
    assert levenshtein_distance(outputs="", reference_outputs="")["score"] == 1.0
    assert levenshtein_distance(outputs=1, reference_outputs="1")["score"] == 1.0


def test_non_strings_are_json_with_sorted_keys() -> None:
    out = {"b": 1, "a": [1, 2]}
    snapshot = copy.deepcopy(out)
    assert (
        levenshtein_distance(outputs=out, reference_outputs={"a": [1, 2], "b": 1})["score"] == 1.0
    )
    assert out == snapshot


@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_none_names_the_side(side: str) -> None:
    kwargs = {"outputs": "a", "reference_outputs": "b", side: None}
    with pytest.raises(ValueError, match=side):
        levenshtein_distance(**kwargs)


def test_unserialisable_is_type_error() -> None:
    with pytest.raises(TypeError, match="outputs"):
        levenshtein_distance(outputs={1, 2}, reference_outputs="x")


def test_long_strings_are_fast_enough() -> None:
    # The public release needed ~1.4 s for this; rapidfuzz needs microseconds (loose bound).
    import time

    start = time.perf_counter()
    score = levenshtein_distance(outputs="a" * 2000, reference_outputs="b" * 2000)["score"]
    assert score == 0.0
    assert time.perf_counter() - start < 0.5


@given(st.text(max_size=30), st.text(max_size=30))
def test_matches_the_textbook_definition(a: str, b: str) -> None:
    longest = max(len(a), len(b))
    expected = 1.0 if longest == 0 else 1 - _reference_distance(a, b) / longest
    assert levenshtein_similarity(a, b) == pytest.approx(expected)


@given(st.text(max_size=40), st.text(max_size=40))
def test_bounds_symmetry_identity(a: str, b: str) -> None:
    score = levenshtein_similarity(a, b)
    assert 0.0 <= score <= 1.0
    assert score == levenshtein_similarity(b, a)
    assert levenshtein_similarity(a, a) == 1.0


async def test_async_twin_agrees() -> None:
    for a, b in [("kitten", "sitting"), ({"x": 1}, {"x": 2}), ("", "abc")]:
        assert await levenshtein_distance_async(outputs=a, reference_outputs=b) == (
            levenshtein_distance(outputs=a, reference_outputs=b)
        )


async def test_deep_values_are_serialised_and_cycles_name_the_parameter() -> None:
    deep: object = "leaf"
    for _ in range(3_000):
        deep = [deep]
    twin = [1]
    assert levenshtein_distance(outputs=deep, reference_outputs=deep)["score"] == 1.0
    short = (await levenshtein_distance_async(outputs=deep, reference_outputs=twin))["score"]
    assert 0.0 <= short < 0.01
    loop: list[object] = ["x"]
    loop.append(loop)
    with pytest.raises(ValueError, match=r"`outputs` contains itself: outputs\[1\]"):
        levenshtein_distance(outputs=loop, reference_outputs="x")
    with pytest.raises(ValueError, match=r"`reference_outputs` contains itself"):
        await levenshtein_distance_async(outputs="x", reference_outputs=loop)
