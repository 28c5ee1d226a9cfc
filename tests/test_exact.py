from __future__ import annotations

import copy

import pytest

from openevals.exact import exact_match, exact_match_async


def test_dict_key_order_is_irrelevant() -> None:
    r = exact_match(outputs={"a": 1, "b": [1, 2]}, reference_outputs={"b": [1, 2], "a": 1})
    assert r == {"key": "exact_match", "score": True, "comment": None, "metadata": None}


@pytest.mark.parametrize(
    ("out", "ref"), [(1, 1.0), (True, 1), ("1", 1), ({"a": 1}, {"a": 2}), ([1, 2], [2, 1])]
)
def test_public_release_inequalities(out: object, ref: object) -> None:
    assert exact_match(outputs=out, reference_outputs=ref)["score"] is False


def test_none_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="reference_outputs"):
        exact_match(outputs="x", reference_outputs=None)
    with pytest.raises(ValueError, match="outputs"):
        exact_match(outputs=None, reference_outputs="x")


def test_unserialisable_is_type_error() -> None:
    with pytest.raises(TypeError, match="outputs"):
        exact_match(outputs={1, 2}, reference_outputs=[1, 2])


def test_inputs_not_mutated() -> None:
    out = {"a": [1, {"b": 2}]}
    ref = {"a": [1, {"b": 2}]}
    snapshot = copy.deepcopy((out, ref))
    exact_match(outputs=out, reference_outputs=ref, inputs={"q": 1})
    assert (out, ref) == snapshot


async def test_async_twin_agrees() -> None:
    for out, ref in [({"a": 1}, {"a": 1}), (1, 1.0), ("x", "y")]:
        assert await exact_match_async(outputs=out, reference_outputs=ref) == exact_match(
            outputs=out, reference_outputs=ref
        )


def _deep(depth: int) -> object:
    value: object = {"leaf": [1, "x"]}
    for _ in range(depth):
        value = {"k": [value]}
    return value


async def test_deep_values_compare_and_cycles_name_the_parameter() -> None:
    # Python's own encoder gives up near 1,000 levels; 3,000 takes the iterative path.
    deep, twin, other = _deep(3_000), _deep(3_000), _deep(2_999)
    assert exact_match(outputs=deep, reference_outputs=twin)["score"] is True
    assert (await exact_match_async(outputs=deep, reference_outputs=other))["score"] is False
    cyclic: dict[str, object] = {"a": 1}
    cyclic["me"] = cyclic
    with pytest.raises(ValueError, match=r"`reference_outputs` contains itself: .*\['me'\]"):
        exact_match(outputs={"a": 1}, reference_outputs=cyclic)
    with pytest.raises(ValueError, match=r"`outputs` contains itself"):
        await exact_match_async(outputs=cyclic, reference_outputs={"a": 1})
    assert cyclic["me"] is cyclic and set(cyclic) == {"a", "me"}
