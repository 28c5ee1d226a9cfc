from __future__ import annotations

import asyncio
import copy
import itertools
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import openevals._contract as contract_module
from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator
from openevals.json.match import (
    EMPTY_RECORD_KEY,
    RubricRequest,
    _async_evaluator,
    _build_core,
    _sync_evaluator,
)

Scores = dict[str, Any]


def scores(results: list[dict[str, Any]]) -> Scores:
    return {r["key"]: r["score"] for r in results}


def both(outputs: Any, reference_outputs: Any, **options: Any) -> list[dict[str, Any]]:
    """Run the sync and async evaluators, assert they agree exactly, return the results."""
    sync = create_json_match_evaluator(**options)(
        outputs=outputs, reference_outputs=reference_outputs
    )
    async_ = asyncio.run(
        create_async_json_match_evaluator(**options)(
            outputs=outputs, reference_outputs=reference_outputs
        )
    )
    assert sync == async_
    assert [type(r["score"]) for r in sync] == [type(r["score"]) for r in async_]
    return sync  # type: ignore[return-value]


# --------------------------------------------------------------------------- README example


def test_readme_exact_match_example() -> None:
    outputs = [
        {"a": "Mango, Bananas", "b": 2},
        {"a": "Apples", "b": 2, "c": [1, 2, 3]},
    ]
    reference_outputs = [
        {"a": "Mango, Bananas", "b": 2},
        {"a": "Apples", "b": 2, "c": [1, 2, 4]},
    ]
    evaluator = create_json_match_evaluator(
        aggregator="all", list_aggregator="average", exclude_keys=["a"]
    )
    result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    assert result == [{"key": "json_match:all", "score": 0.5, "comment": None, "metadata": None}]


# --------------------------------------------------------------------------- dict vs dict


def test_dict_per_key_results_sorted_by_key() -> None:
    result = both({"b": 2, "a": 1, "z": 0}, {"a": 1.0, "b": 3, "c": 4})
    assert result == [
        {"key": "json_match:a", "score": 1, "comment": None, "metadata": None},
        {"key": "json_match:b", "score": 0, "comment": None, "metadata": None},
        {"key": "json_match:c", "score": 0, "comment": None, "metadata": None},
        {"key": "json_match:z", "score": 0, "comment": None, "metadata": None},
    ]


def test_dict_python_equality_and_nested_values() -> None:
    out = {"int": 1, "bool": True, "nested": {"x": [1, {"y": 2}]}, "list": [1, 2], "nan": None}
    ref = {"int": 1.0, "bool": 1, "nested": {"x": [1, {"y": 2}]}, "list": [2, 1], "nan": None}
    assert scores(both(out, ref)) == {
        "json_match:bool": 1,
        "json_match:int": 1,
        "json_match:list": 0,
        "json_match:nan": 1,
        "json_match:nested": 1,
    }


def test_dict_aggregators() -> None:
    out = {"a": 1, "b": 2, "c": 3, "d": 4}
    ref = {"a": 1, "b": 2, "c": 0}
    assert both(out, ref, aggregator="average") == [
        {"key": "json_match:average", "score": 0.5, "comment": None, "metadata": None}
    ]
    assert scores(both(out, ref, aggregator="all")) == {"json_match:all": 0}
    assert scores(both(ref, ref, aggregator="all")) == {"json_match:all": 1}
    # list_aggregator is irrelevant for dicts
    assert scores(both(out, ref, aggregator="average", list_aggregator="all")) == {
        "json_match:average": 0.5
    }


def test_dict_exclude_keys() -> None:
    out = {"id": "x-1", "name": "A", "ts": 1}
    ref = {"id": "x-2", "name": "A"}
    assert scores(both(out, ref, exclude_keys=["id", "ts"])) == {"json_match:name": 1}
    assert scores(both(out, ref, exclude_keys=("id", "ts"), aggregator="all")) == {
        "json_match:all": 1
    }


def test_score_types() -> None:
    out, ref = {"a": 1, "b": 2}, {"a": 1, "b": 3}
    per_key = both(out, ref)
    assert all(type(r["score"]) is int for r in per_key)
    assert type(both(out, ref, aggregator="all")[0]["score"]) is int
    assert type(both(out, ref, aggregator="average")[0]["score"]) is float
    lists = both([out, ref], [ref, ref], aggregator="all", list_aggregator="average")
    assert type(lists[0]["score"]) is float
    lists = both([out, ref], [ref, ref], aggregator="average", list_aggregator="all")
    assert type(lists[0]["score"]) is int


# --------------------------------------------------------------------------- lists: modes


# Fixture A: outputs shorter than references.
A_OUT = [{"id": 2, "v": "b"}, {"id": 1, "v": "x"}]
A_REF = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
# Optimal pairs: out0-ref1 (id, v equal), out1-ref0 (id equal); ref2 unpaired.

# Fixture B: outputs longer than references.
B_OUT = [{"id": 1, "v": "a"}, {"id": 9, "v": "z"}, {"id": 2, "v": "q"}]
B_REF = [{"id": 2, "v": "b"}, {"id": 1, "v": "a"}]
# Optimal pairs: out0-ref1 (both equal), out2-ref0 (id equal); out1 unpaired.

THIRD = 1 / 3
TWO_THIRDS = 2 / 3

# {(aggregator, list_aggregator): expected scores} of the three outcomes the fixtures give.
# Two pairs scored, (id 1, v 1) and (id 1, v 0), and one unpaired element counted as (0, 0):
ONE_UNPAIRED: dict[tuple[str | None, str], Scores] = {
    (None, "all"): {"json_match:id": 0, "json_match:v": 0},
    (None, "average"): {"json_match:id": TWO_THIRDS, "json_match:v": THIRD},
    ("average", "all"): {"json_match:average": 0},
    ("average", "average"): {"json_match:average": 0.5},
    ("all", "all"): {"json_match:all": 0},
    ("all", "average"): {"json_match:all": THIRD},
}
# The same two pairs, the unpaired element ignored:
UNPAIRED_IGNORED: dict[tuple[str | None, str], Scores] = {
    (None, "all"): {"json_match:id": 1, "json_match:v": 0},
    (None, "average"): {"json_match:id": 1.0, "json_match:v": 0.5},
    ("average", "all"): {"json_match:average": 0},
    ("average", "average"): {"json_match:average": 0.75},
    ("all", "all"): {"json_match:all": 0},
    ("all", "average"): {"json_match:all": 0.5},
}
# By index every element is wrong, (0, 0) three times:
ALL_WRONG: dict[tuple[str | None, str], Scores] = {
    (None, "all"): {"json_match:id": 0, "json_match:v": 0},
    (None, "average"): {"json_match:id": 0.0, "json_match:v": 0.0},
    ("average", "all"): {"json_match:average": 0},
    ("average", "average"): {"json_match:average": 0.0},
    ("all", "all"): {"json_match:all": 0},
    ("all", "average"): {"json_match:all": 0.0},
}

# (fixture, mode) -> {(aggregator, list_aggregator): expected scores}
EXPECTED: dict[tuple[str, str], dict[tuple[str | None, str], Scores]] = {
    ("A", "same_elements"): ONE_UNPAIRED,  # the unpaired reference counts
    ("A", "subset"): UNPAIRED_IGNORED,  # unpaired references ignored
    ("A", "superset"): ONE_UNPAIRED,  # every output paired, the unpaired reference counts
    ("A", "ordered"): ALL_WRONG,  # extra reference
    ("B", "same_elements"): ONE_UNPAIRED,  # the unpaired output counts
    ("B", "subset"): ONE_UNPAIRED,  # unpaired outputs count in subset mode
    ("B", "superset"): UNPAIRED_IGNORED,  # unpaired outputs ignored
    ("B", "ordered"): ALL_WRONG,  # extra output
}

FIXTURES = {"A": (A_OUT, A_REF), "B": (B_OUT, B_REF)}


@pytest.mark.parametrize(
    ("fixture", "mode", "aggregator", "list_aggregator"),
    [
        (fixture, mode, aggregator, list_aggregator)
        for (fixture, mode), table in EXPECTED.items()
        for (aggregator, list_aggregator) in table
    ],
)
def test_every_mode_and_aggregator(
    fixture: str, mode: str, aggregator: str | None, list_aggregator: str
) -> None:
    outputs, reference_outputs = FIXTURES[fixture]
    expected = EXPECTED[(fixture, mode)][(aggregator, list_aggregator)]
    got = scores(
        both(
            outputs,
            reference_outputs,
            aggregator=aggregator,
            list_aggregator=list_aggregator,
            list_match_mode=mode,
        )
    )
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), key


def test_ordered_mode_scores_matching_positions() -> None:
    out = [{"a": 1}, {"a": 2}, {"a": 3}]
    ref = [{"a": 1}, {"a": 3}]
    assert scores(both(out, ref, list_match_mode="ordered", list_aggregator="average")) == {
        "json_match:a": pytest.approx(THIRD)
    }
    # ...while the unordered modes pair {a: 3} with {a: 3}
    assert scores(both(out, ref, list_aggregator="average")) == {
        "json_match:a": pytest.approx(TWO_THIRDS)
    }
    assert scores(both(out, ref, list_match_mode="superset")) == {"json_match:a": 1}


def test_subset_and_superset_perfect_cases() -> None:
    small = [{"k": 2}]
    big = [{"k": 1}, {"k": 2}, {"k": 3}]
    assert scores(both(small, big, list_match_mode="subset")) == {"json_match:k": 1}
    assert scores(both(small, big, list_match_mode="superset")) == {"json_match:k": 0}
    assert scores(both(big, small, list_match_mode="superset")) == {"json_match:k": 1}
    assert scores(both(big, small, list_match_mode="subset")) == {"json_match:k": 0}
    assert scores(both(big, list(reversed(big)))) == {"json_match:k": 1}


def test_tuples_are_lists() -> None:
    assert both(({"a": 1},), [{"a": 1}]) == both([{"a": 1}], [{"a": 1}])


def test_exclude_keys_do_not_drive_pairing() -> None:
    # With "id" excluded, the payloads decide the pairing; ids alone would cross them.
    out = [{"id": 1, "p": "x", "q": "y"}, {"id": 2, "p": "u", "q": "w"}]
    ref = [{"id": 1, "p": "u", "q": "w"}, {"id": 2, "p": "x", "q": "y"}]
    assert scores(both(out, ref, exclude_keys=["id"])) == {"json_match:p": 1, "json_match:q": 1}
    assert scores(both(out, ref)) == {
        "json_match:id": 0,
        "json_match:p": 1,
        "json_match:q": 1,
    }


def test_ties_prefer_pairs_with_fewer_differing_keys() -> None:
    # Both pairings have 2 equal values; the identity pairing leaves 1 differing key instead of 2.
    out = [{"b": 2}, {"b": 2, "c": [1, 2, 3]}]
    ref = [{"b": 2}, {"b": 2, "c": [1, 2, 4]}]
    assert scores(both(out, ref, list_aggregator="average")) == {
        "json_match:b": 1.0,
        "json_match:c": 0.0,
    }
    assert scores(both(list(reversed(out)), ref, aggregator="all", list_aggregator="average")) == {
        "json_match:all": 0.5
    }


# --------------------------------------------------------------------------- regressions


def test_b4_key_absent_from_both_paired_elements_is_not_a_miss() -> None:
    x = [{"a": 1, "b": 1}, {"a": 2, "b": 2}, {"a": 3}]
    expected = {"json_match:a": 1, "json_match:b": 1}
    assert scores(both(x, x)) == expected
    assert scores(both(x, x, list_aggregator="average")) == expected
    for mode in ("subset", "superset", "ordered"):
        assert scores(both(x, x, list_match_mode=mode)) == expected
    # A key that IS on one side of a pair still counts as a miss.
    assert scores(both(x, [{"a": 1, "b": 1}, {"a": 2, "b": 2}, {"a": 3, "b": 3}])) == {
        "json_match:a": 1,
        "json_match:b": 0,
    }


def test_b5_pairing_does_not_depend_on_order() -> None:
    reference = [{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 5, "c": 5}]
    o0, o1 = {"a": 1, "b": 1, "c": 9}, {"a": 7, "b": 1, "c": 1}
    options = {"aggregator": "average", "list_aggregator": "average"}
    first = both([o0, o1], reference, **options)
    second = both([o1, o0], reference, **options)
    assert first == second
    # Optimal pairing: o0-ref1 (1 of 3 equal) + o1-ref0 (2 of 3 equal) = 3 equal values.
    assert scores(first) == {"json_match:average": pytest.approx(0.5)}


def test_b5_pairing_is_optimal_not_greedy() -> None:
    # Greedy from the outputs side takes ref0 for out0 (2 equal) and strands out1 (0 equal):
    # 1/3 on average. The optimum pairs out0-ref1 and out1-ref0 (2 equal each): 2/3.
    reference = [{"x": 1, "y": 1, "z": 0}, {"x": 1, "y": 2, "z": 9}]
    outputs = [{"x": 1, "y": 1, "z": 9}, {"x": 5, "y": 1, "z": 0}]
    assert scores(both(outputs, reference, aggregator="average", list_aggregator="average")) == {
        "json_match:average": pytest.approx(2 / 3)
    }


@pytest.mark.parametrize("empty", [{}, []])
def test_b6_empty_inputs_are_identical(empty: Any) -> None:
    assert both(empty, copy.copy(empty)) == []
    average = both(empty, copy.copy(empty), aggregator="average", list_aggregator="average")
    assert average == [
        {"key": "json_match:average", "score": 1.0, "comment": None, "metadata": None}
    ]
    assert scores(both(empty, copy.copy(empty), aggregator="average")) == {
        "json_match:average": 1.0
    }
    assert both(empty, copy.copy(empty), aggregator="all") == [
        {"key": "json_match:all", "score": 1, "comment": None, "metadata": None}
    ]


def test_b6_empty_elements_and_vacuous_lists() -> None:
    assert both([{}], [{}]) == []
    assert scores(both([{}], [{}], aggregator="average")) == {"json_match:average": 1.0}
    assert scores(both([], [{"a": 1}], list_match_mode="subset", aggregator="all")) == {
        "json_match:all": 1
    }
    assert scores(both([{"a": 1}], [], list_match_mode="superset", aggregator="average")) == {
        "json_match:average": 1.0
    }
    assert scores(both([], [{"a": 1}], aggregator="all")) == {"json_match:all": 0}
    assert scores(both([], [{"a": 1}])) == {"json_match:a": 0}


def test_extra_empty_record_is_an_unmatched_element() -> None:
    assert both([{"a": 1}, {}], [{"a": 1}]) == [
        {"key": f"json_match:{EMPTY_RECORD_KEY}", "score": 0, "comment": None, "metadata": None},
        {"key": "json_match:a", "score": 1, "comment": None, "metadata": None},
    ]
    assert scores(both([{"a": 1}], [{"a": 1}, {}], aggregator="average")) == {
        "json_match:average": 0
    }
    assert scores(
        both([{"a": 1}], [{"a": 1}, {}], aggregator="average", list_aggregator="average")
    ) == {"json_match:average": 0.5}
    # an element whose only keys are excluded is empty too
    assert scores(both([{"a": 1}, {"id": 3}], [{"a": 1}], exclude_keys=["id"])) == {
        f"json_match:{EMPTY_RECORD_KEY}": 0,
        "json_match:a": 1,
    }
    # ignored extras (subset: unpaired references) do not produce the key
    assert scores(both([{"a": 1}], [{"a": 1}, {}], list_match_mode="subset")) == {"json_match:a": 1}


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("outputs", "reference_outputs", "error", "match"),
    [
        (None, {"a": 1}, ValueError, r"`outputs`.*None"),
        ({"a": 1}, None, ValueError, r"`reference_outputs`.*None"),
        ([{"a": 1}], {"a": 1}, ValueError, r"`outputs` is a list but `reference_outputs` is a"),
        ({"a": 1}, [{"a": 1}], ValueError, r"`outputs` is a dict but `reference_outputs` is a"),
        ([{"a": 1}, 3], [{"a": 1}], TypeError, r"`outputs\[1\]` must be a dict"),
        ([{"a": 1}], ["x"], TypeError, r"`reference_outputs\[0\]` must be a dict"),
        ('{"a": 1}', {"a": 1}, TypeError, r"`outputs` must be a dict.*json.loads"),
        ({"a": 1}, 5, TypeError, r"`reference_outputs` must be a dict or a list of dicts"),
    ],
)
def test_bad_inputs(outputs: Any, reference_outputs: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        create_json_match_evaluator()(outputs=outputs, reference_outputs=reference_outputs)
    with pytest.raises(error, match=match):
        asyncio.run(
            create_async_json_match_evaluator()(
                outputs=outputs, reference_outputs=reference_outputs
            )
        )


def test_uncomparable_values_name_the_key() -> None:
    class Weird:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no")

        __hash__ = object.__hash__

    with pytest.raises(TypeError, match="key 'w'"):
        create_json_match_evaluator()(outputs={"w": Weird()}, reference_outputs={"w": 1})


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"aggregator": "mean"}, ValueError, r"`aggregator`.*None, 'average' or 'all'.*'mean'"),
        ({"list_aggregator": "any"}, ValueError, r"`list_aggregator`.*'average' or 'all'"),
        ({"list_aggregator": None}, ValueError, r"`list_aggregator`"),
        ({"list_match_mode": "unordered"}, ValueError, r"`list_match_mode`.*'same_elements'"),
        ({"rubric": {"a": "is it a fruit?"}}, ValueError, r"`judge`.*`model`"),
        ({"model": "openai:gpt-4o-mini"}, ValueError, r"non-empty `rubric`"),
        ({"judge": object()}, ValueError, r"non-empty `rubric`"),
        ({"model": "openai:gpt-4o-mini", "rubric": {}}, ValueError, r"non-empty `rubric`"),
        ({"exclude_keys": "id"}, TypeError, r"`exclude_keys`.*list"),
        ({"exclude_keys": [1]}, TypeError, r"`exclude_keys`"),
        ({"rubric": ["a"], "model": "m"}, TypeError, r"`rubric`"),
        ({"rubric": {"a": 1}, "model": "m"}, TypeError, r"`rubric`"),
        (
            {"rubric": {"a": "x"}, "model": "m", "exclude_keys": ["a"]},
            ValueError,
            r"both in `rubric` and in `exclude_keys`",
        ),
    ],
)
def test_creation_errors(options: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        create_json_match_evaluator(**options)
    with pytest.raises(error, match=match):
        create_async_json_match_evaluator(**options)


def test_factories_and_evaluators_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        create_json_match_evaluator("average")  # type: ignore[misc]
    evaluator = create_json_match_evaluator()
    with pytest.raises(TypeError):
        evaluator({"a": 1}, {"a": 1})  # type: ignore[misc]


# --------------------------------------------------------------------------- rubric plumbing


class FakeRubricJudge:
    """Grades a rubric key True when the output value contains the reference value."""

    def __init__(self) -> None:
        self.requests: list[RubricRequest] = []

    def verdicts(self, request: RubricRequest) -> dict[str, Any]:
        self.requests.append(request)
        return {
            key: {
                "score": str(request.reference_outputs.get(key, "")) in str(value),
                "reasoning": f"checked {key}",
            }
            for key, value in request.outputs.items()
        }

    def __call__(self, request: RubricRequest) -> Mapping[str, Any]:
        return self.verdicts(request)

    async def acall(self, request: RubricRequest) -> Mapping[str, Any]:
        await asyncio.sleep(0)
        return self.verdicts(request)


def rubric_evaluators(**options: Any) -> tuple[Any, Any, FakeRubricJudge, FakeRubricJudge]:
    core = _build_core(
        aggregator=options.get("aggregator"),
        list_aggregator=options.get("list_aggregator", "all"),
        rubric=options["rubric"],
        exclude_keys=options.get("exclude_keys"),
        judge=None,
        model="fake:model",
        use_reasoning=True,
        list_match_mode=options.get("list_match_mode", "same_elements"),
    )
    sync_judge, async_judge = FakeRubricJudge(), FakeRubricJudge()
    return (
        _sync_evaluator(core, sync_judge),
        _async_evaluator(core, async_judge.acall),
        sync_judge,
        async_judge,
    )


def test_rubric_keys_are_graded_in_one_batch_per_element() -> None:
    rubric = {"a": "contains the reference?", "c": "contains the reference?"}
    outputs = [
        {"a": "Mango, Bananas", "b": 2, "c": "xyz"},
        {"a": "Apples", "b": 2},
    ]
    reference = [
        {"a": "Bananas", "b": 2, "c": "q"},
        {"a": "Strawberries", "b": 2},
    ]
    sync_eval, async_eval, sync_judge, async_judge = rubric_evaluators(
        rubric=rubric, list_aggregator="average"
    )
    sync_result = sync_eval(outputs=outputs, reference_outputs=reference)
    async_result = asyncio.run(async_eval(outputs=outputs, reference_outputs=reference))
    assert sync_result == async_result
    assert scores(sync_result) == {
        "json_match:a": 0.5,
        "json_match:b": 1.0,
        "json_match:c": 0.0,
    }
    batches = sorted((sorted(r.outputs), sorted(r.criteria)) for r in sync_judge.requests)
    assert batches == [(["a"], ["a"]), (["a", "c"], ["a", "c"])]
    assert len(async_judge.requests) == 2
    # rubric keys do not drive pairing, and the reference values travel with the request
    first = next(r for r in sync_judge.requests if "c" in r.outputs)
    assert first.reference_outputs == {"a": "Bananas", "c": "q"}


def test_rubric_reasoning_becomes_the_comment_for_dict_inputs() -> None:
    sync_eval, async_eval, _, _ = rubric_evaluators(rubric={"a": "contains?"})
    out, ref = {"a": "Mango, Bananas", "b": 1}, {"a": "Mango", "b": 2}
    expected = [
        {"key": "json_match:a", "score": True, "comment": "checked a", "metadata": None},
        {"key": "json_match:b", "score": 0, "comment": None, "metadata": None},
    ]
    assert sync_eval(outputs=out, reference_outputs=ref) == expected
    assert asyncio.run(async_eval(outputs=out, reference_outputs=ref)) == expected


def test_rubric_booleans_count_as_numbers_in_aggregates() -> None:
    sync_eval, async_eval, _, _ = rubric_evaluators(
        rubric={"a": "contains?"}, aggregator="average", list_aggregator="all"
    )
    outputs = [{"a": "Mango, Bananas", "b": 2, "d": 1}, {"a": "Apples", "b": 2}]
    reference = [{"a": "Bananas", "b": 2, "d": 1}, {"a": "Strawberries", "b": 2}]
    for result in (
        sync_eval(outputs=outputs, reference_outputs=reference),
        asyncio.run(async_eval(outputs=outputs, reference_outputs=reference)),
    ):
        assert scores(result) == {"json_match:average": 0}
    sync_eval, _, _, _ = rubric_evaluators(
        rubric={"a": "contains?"}, aggregator="average", list_aggregator="average"
    )
    result = sync_eval(outputs=outputs, reference_outputs=reference)
    assert scores(result) == {"json_match:average": pytest.approx((1.0 + 0.5) / 2)}


def test_rubric_key_missing_from_outputs_scores_zero_without_a_call() -> None:
    sync_eval, _, judge, _ = rubric_evaluators(rubric={"a": "contains?"})
    result = sync_eval(outputs={"b": 1}, reference_outputs={"a": "x", "b": 1})
    assert scores(result) == {"json_match:a": 0, "json_match:b": 1}
    assert judge.requests == []


@pytest.mark.parametrize(
    ("reply", "error", "match"),
    [
        ({}, ValueError, "exactly the keys"),
        ({"a": True, "zzz": True}, ValueError, "exactly the keys"),
        ({"a": {"reasoning": "r"}}, ValueError, "no 'score'"),
        ({"a": 2}, ValueError, r"bool or a number in \[0, 1\]"),
        ({"a": "yes"}, ValueError, r"bool or a number"),
        (["a"], TypeError, "mapping"),
    ],
)
def test_bad_rubric_verdicts_raise(reply: Any, error: type, match: str) -> None:
    core = _build_core(
        aggregator=None,
        list_aggregator="all",
        rubric={"a": "x"},
        exclude_keys=None,
        judge=None,
        model="fake:model",
        use_reasoning=True,
        list_match_mode="same_elements",
    )
    evaluator = _sync_evaluator(core, lambda request: reply)
    with pytest.raises(error, match=match):
        evaluator(outputs={"a": 1}, reference_outputs={"a": 1})


# --------------------------------------------------------------------------- wrapper contract


def test_runs_through_the_evaluator_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = contract_module._run_evaluator_untyped

    def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    # The evaluator contract is the one caller of the wrapper, which it hands every call when
    # LangSmith is switched on.
    monkeypatch.setattr(contract_module, "_needs_langsmith", lambda: True)
    monkeypatch.setattr(contract_module, "_run_evaluator_untyped", spy)
    create_json_match_evaluator()(inputs={"q": 1}, outputs={"a": 1}, reference_outputs={"a": 1})
    assert calls[0]["run_name"] == "json_match_evaluator"
    assert calls[0]["inputs"] == {"q": 1}


async def test_async_runs_through_the_async_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = contract_module._arun_evaluator_untyped

    async def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return await real(**kwargs)

    monkeypatch.setattr(contract_module, "_needs_langsmith", lambda: True)
    monkeypatch.setattr(contract_module, "_arun_evaluator_untyped", spy)
    result = await create_async_json_match_evaluator(aggregator="all")(
        outputs=[{"a": 1}], reference_outputs=[{"a": 1}]
    )
    assert result == [{"key": "json_match:all", "score": 1, "comment": None, "metadata": None}]
    assert calls[0]["run_name"] == "json_match_evaluator"


def test_inputs_are_never_mutated() -> None:
    outputs = [{"a": [1, {"b": 2}], "c": {"d": 1}}, {"a": 3}, {}]
    reference = [{"a": 3, "x": None}, {"a": [1, {"b": 2}], "c": {"d": 2}}]
    snapshot = copy.deepcopy((outputs, reference))
    for options in ({}, {"aggregator": "average"}, {"list_match_mode": "ordered"}):
        both(outputs, reference, exclude_keys=["x"], **options)
    assert (outputs, reference) == snapshot


def test_long_lists_are_fast() -> None:
    outputs = [{"id": i, "name": f"n{i}", "v": i % 7} for i in range(150)]
    reference = [{"id": i, "name": f"n{i}", "v": i % 5} for i in reversed(range(150))]
    start = time.perf_counter()
    result = create_json_match_evaluator(list_aggregator="average")(
        outputs=outputs, reference_outputs=reference
    )
    elapsed = time.perf_counter() - start
    assert scores(result)["json_match:id"] == 1.0
    assert elapsed < 5.0


# --------------------------------------------------------------------------- properties

VALUES = st.sampled_from([0, 1, 2, 1.0, "x", "y", None, True, (1, 2), "1"]) | st.lists(
    st.integers(0, 2), max_size=2
)
RECORDS = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), VALUES, max_size=4)
RECORD_LISTS = st.lists(RECORDS, max_size=5)
OPTIONS = st.fixed_dictionaries(
    {
        "aggregator": st.sampled_from([None, "average", "all"]),
        "list_aggregator": st.sampled_from(["average", "all"]),
        "exclude_keys": st.sampled_from([None, ["d"], ["a", "c"]]),
    }
)


@settings(max_examples=150, deadline=None)
@given(
    outputs=RECORD_LISTS,
    reference=RECORD_LISTS,
    options=OPTIONS,
    mode=st.sampled_from(["same_elements", "subset", "superset"]),
    data=st.data(),
)
def test_scores_do_not_depend_on_list_order(
    outputs: list[dict[str, Any]],
    reference: list[dict[str, Any]],
    options: dict[str, Any],
    mode: str,
    data: st.DataObject,
) -> None:
    evaluator = create_json_match_evaluator(list_match_mode=mode, **options)
    baseline = evaluator(outputs=outputs, reference_outputs=reference)
    shuffled_outputs = data.draw(st.permutations(outputs))
    shuffled_reference = data.draw(st.permutations(reference))
    assert evaluator(outputs=shuffled_outputs, reference_outputs=shuffled_reference) == baseline


@settings(max_examples=150, deadline=None)
@given(
    outputs=RECORD_LISTS | RECORDS,
    reference=RECORD_LISTS | RECORDS,
    options=OPTIONS,
    mode=st.sampled_from(["same_elements", "subset", "superset", "ordered"]),
)
def test_sync_and_async_agree_on_every_input(
    outputs: Any, reference: Any, options: dict[str, Any], mode: str
) -> None:
    snapshot = copy.deepcopy((outputs, reference))
    sync_eval = create_json_match_evaluator(list_match_mode=mode, **options)
    async_eval = create_async_json_match_evaluator(list_match_mode=mode, **options)
    try:
        expected: Any = sync_eval(outputs=outputs, reference_outputs=reference)
    except (TypeError, ValueError) as exc:
        expected = (type(exc), str(exc))
    try:
        got: Any = asyncio.run(async_eval(outputs=outputs, reference_outputs=reference))
    except (TypeError, ValueError) as exc:
        got = (type(exc), str(exc))
    assert got == expected
    assert (outputs, reference) == snapshot
    if isinstance(expected, list):
        for result in expected:
            assert 0 <= result["score"] <= 1


def _equal_values(out: dict[str, Any], ref: dict[str, Any], excluded: set[str]) -> int:
    return sum(1 for k in out if k not in excluded and k in ref and out[k] == ref[k])


@settings(max_examples=200, deadline=None)
@given(outputs=RECORD_LISTS, reference=RECORD_LISTS)
def test_pairing_maximises_equal_values(
    outputs: list[dict[str, Any]], reference: list[dict[str, Any]]
) -> None:
    core = _build_core(
        aggregator=None,
        list_aggregator="all",
        rubric=None,
        exclude_keys=["d"],
        judge=None,
        model=None,
        use_reasoning=True,
        list_match_mode="same_elements",
    )
    pairs = core._pair_indices(outputs, reference)
    assert len(pairs) == min(len(outputs), len(reference))
    assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
    got = sum(_equal_values(outputs[i], reference[j], {"d"}) for i, j in pairs)
    small, large = (outputs, reference) if len(outputs) <= len(reference) else (reference, outputs)
    best = 0
    for chosen in itertools.permutations(range(len(large)), len(small)):
        total = sum(
            _equal_values(s, large[c], {"d"})
            if small is outputs
            else _equal_values(large[c], s, {"d"})
            for s, c in zip(small, chosen, strict=True)
        )
        best = max(best, total)
    assert got == best


@settings(max_examples=100, deadline=None)
@given(records=RECORD_LISTS, options=OPTIONS)
def test_identical_lists_score_one(records: list[dict[str, Any]], options: dict[str, Any]) -> None:
    result = create_json_match_evaluator(**options)(
        outputs=records, reference_outputs=copy.deepcopy(records)
    )
    assert all(r["score"] == 1 for r in result)


def test_readme_rubric_example_pairs_look_alike_records() -> None:
    # The README's LLM example: only "b" is compared exactly and it ties everywhere; the
    # rubric values ("a") decide which records belong together.
    outputs = [
        {"a": "Mango, Bananas", "b": 2},
        {"a": "Apples", "b": 2, "c": [1, 2, 3]},
    ]
    reference = [
        {"a": "Bananas, Mango", "b": 2, "d": "Not in outputs"},
        {"a": "Apples, Strawberries", "b": 2},
    ]
    fruit_verdicts = {"Mango, Bananas": True, "Apples": False}

    def grade(request: RubricRequest) -> dict[str, Any]:
        return {"a": {"score": fruit_verdicts[request.outputs["a"]], "reasoning": "r"}}

    requests: list[RubricRequest] = []

    def recording_grade(request: RubricRequest) -> dict[str, Any]:
        requests.append(request)
        return grade(request)

    for order in (outputs, list(reversed(outputs))):
        requests.clear()

        core = _build_core(
            aggregator="average",
            list_aggregator="all",
            rubric={"a": "Does the answer mention all the fruits in the reference answer?"},
            exclude_keys=None,
            judge=None,
            model="fake:model",
            use_reasoning=True,
            list_match_mode="same_elements",
        )
        result = _sync_evaluator(core, recording_grade)(outputs=order, reference_outputs=reference)
        # element 1: a=1, b=1, d=0 -> 2/3; element 2: a=0, b=1, c=0 -> 1/3; "all" -> 0
        assert scores(result) == {"json_match:average": 0}
        pairs = sorted((r.outputs["a"], r.reference_outputs["a"]) for r in requests)
        assert pairs == [("Apples", "Apples, Strawberries"), ("Mango, Bananas", "Bananas, Mango")]
        assert all(r.keys == ("a",) for r in requests)


class ValueJudge:
    """A deterministic rubric judge whose verdict depends only on the two values."""

    def __call__(self, request: RubricRequest) -> dict[str, Any]:
        return {
            k: {"score": repr(v) == repr(request.reference_outputs.get(k)), "reasoning": None}
            for k, v in request.outputs.items()
        }

    async def acall(self, request: RubricRequest) -> dict[str, Any]:
        return self(request)


@settings(max_examples=100, deadline=None)
@given(
    outputs=RECORD_LISTS,
    reference=RECORD_LISTS,
    options=OPTIONS,
    mode=st.sampled_from(["same_elements", "subset", "superset"]),
    data=st.data(),
)
def test_rubric_scores_are_order_invariant_and_twin_consistent(
    outputs: list[dict[str, Any]],
    reference: list[dict[str, Any]],
    options: dict[str, Any],
    mode: str,
    data: st.DataObject,
) -> None:
    exclude = [k for k in options["exclude_keys"] or [] if k != "b"]
    core = _build_core(
        aggregator=options["aggregator"],
        list_aggregator=options["list_aggregator"],
        rubric={"b": "judged"},
        exclude_keys=exclude,
        judge=None,
        model="fake:model",
        use_reasoning=True,
        list_match_mode=mode,
    )
    judge = ValueJudge()
    sync_eval = _sync_evaluator(core, judge)
    async_eval = _async_evaluator(core, judge.acall)
    baseline = sync_eval(outputs=outputs, reference_outputs=reference)
    assert asyncio.run(async_eval(outputs=outputs, reference_outputs=reference)) == baseline
    shuffled = (data.draw(st.permutations(outputs)), data.draw(st.permutations(reference)))
    assert sync_eval(outputs=shuffled[0], reference_outputs=shuffled[1]) == baseline
