"""Robustness of the steps evaluator: bad inputs (issue 12.8) and large levels (issue 16.8).

Every bad input must raise ``TypeError``/``ValueError`` naming the parameter (never another
exception, never a score) and leave the inputs untouched; large levels must finish quickly.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.rag.steps import (
    MAX_RECALL_PAIRS,
    create_async_steps_evaluator,
    create_steps_evaluator,
)

SPARQL = "application/sparql-results+json"
GOOD_REFERENCE: list[list[dict[str, Any]]] = [
    [
        {"name": "q", "output": "1"},
        {"name": "q", "output": "{}", "output_media_type": "application/json"},
    ]
]
GOOD_OUTPUTS: list[dict[str, Any]] = [{"name": "q", "output": "1", "status": "success"}]


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"name": "q"}
    value["self"] = value
    return {"name": "q", "args": value}


def _cyclic_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


# --------------------------------------------------------------------------- outputs=None (12.8)


def test_outputs_none_raises_type_error_naming_outputs() -> None:
    evaluator = create_steps_evaluator()
    with pytest.raises(TypeError, match=r"^`outputs` must be a list of step dicts.*got NoneType"):
        evaluator(outputs=None, reference_outputs=GOOD_REFERENCE)
    with pytest.raises(TypeError, match="`outputs`"):
        evaluator(reference_outputs=GOOD_REFERENCE)  # not passed at all
    with pytest.raises(TypeError, match=r"`outputs\['actual_steps'\]` must be a list"):
        evaluator(outputs={"actual_steps": None}, reference_outputs=GOOD_REFERENCE)
    # an empty run is still a valid 0.0
    assert evaluator(outputs=[], reference_outputs=GOOD_REFERENCE)["score"] == 0.0


async def test_outputs_none_raises_in_the_async_twin_too() -> None:
    evaluator = create_async_steps_evaluator(levels="all")
    with pytest.raises(TypeError, match=r"^`outputs` must be a list of step dicts.*got NoneType"):
        await evaluator(outputs=None, reference_outputs=GOOD_REFERENCE)


# --------------------------------------------------------------------------- bad inputs

BAD_OUTPUTS: list[tuple[Any, type[Exception], str]] = [
    (None, TypeError, "`outputs` must be a list"),
    ("steps", TypeError, "`outputs` must be a list"),
    (b"steps", TypeError, "`outputs` must be a list"),
    (42, TypeError, "`outputs` must be a list"),
    (3.5, TypeError, "`outputs` must be a list"),
    ({"q", "r"}, TypeError, "`outputs` must be a list"),
    ({"answer": "x"}, ValueError, "`outputs` is a dict"),
    ({"actual_steps": None}, TypeError, r"`outputs\['actual_steps'\]`"),
    ({"steps": "q"}, TypeError, r"`outputs\['steps'\]`"),
    ([None], TypeError, r"outputs\[0\] must be a step dict"),
    (["q"], TypeError, r"outputs\[0\] must be a step dict"),
    ([1], TypeError, r"outputs\[0\] must be a step dict"),
    ([[{"name": "q"}]], TypeError, r"outputs\[0\] must be a step dict"),
    ([{}], ValueError, r"outputs\[0\] needs a non-empty string 'name'"),
    ([{"name": ""}], ValueError, r"outputs\[0\] needs a non-empty"),
    ([{"name": 3}], ValueError, r"outputs\[0\] needs a non-empty"),
    ([{"name": None, "output": "1"}], ValueError, r"outputs\[0\] needs a non-empty"),
    ([{"name": "q"}, "q"], TypeError, r"outputs\[1\] must be a step dict"),
    ([{"name": "retrieval", "args": {"k": 0}}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "retrieval", "args": {"k": -3}}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "retrieval", "args": {"k": 1.5}}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "retrieval", "args": {"k": "5"}}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "retrieval", "args": {"k": False}}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "retrieval", "args": '{"k": []}'}], ValueError, r"outputs\[0\]\['args'\]\['k'\]"),
    ([{"name": "q", "args": _nested(3000)}], ValueError, "`outputs` holds a value nested too"),
    ([{"name": "q", "output": _nested(3000)}], ValueError, "`outputs` holds a value nested"),
    ([{"name": "q", "output": "[" * 5000}], ValueError, "`outputs` holds a value nested"),
    ([_cyclic()], ValueError, "`outputs` holds a value nested"),
    ([{"name": "q", "output": _cyclic_list()}], ValueError, "`outputs` holds a value nested"),
]

BAD_REFERENCES: list[tuple[Any, type[Exception], str]] = [
    (None, TypeError, "`reference_outputs` must be a non-empty list"),
    ("q", TypeError, "`reference_outputs` must be a non-empty list"),
    (42, TypeError, "`reference_outputs` must be a non-empty list"),
    ([], TypeError, "`reference_outputs` must be a non-empty list"),
    ({"question": "x"}, ValueError, "`reference_outputs` is a dict"),
    ({"reference_steps": None}, TypeError, "`reference_outputs` must be a non-empty list"),
    ({"reference_steps": []}, TypeError, "`reference_outputs` must be a non-empty list"),
    ([[]], ValueError, r"reference_outputs\[0\] is an empty level"),
    ([[{"name": "q"}], []], ValueError, r"reference_outputs\[1\] is an empty level"),
    ([[{"name": "q"}], {"name": "r"}], TypeError, "mixes step dicts and levels"),
    ([None], TypeError, "mixes step dicts and levels"),
    ([[None]], TypeError, r"reference_outputs\[0\]\[0\] must be a step dict"),
    ([["q"]], TypeError, r"reference_outputs\[0\]\[0\] must be a step dict"),
    ([[{"args": {}}]], ValueError, r"reference_outputs\[0\]\[0\] needs a non-empty"),
    ([[{"name": ""}]], ValueError, r"reference_outputs\[0\]\[0\] needs a non-empty"),
    ([[{"name": "q", "output": "1", "output_media_type": 1}]], TypeError, "output_media_type"),
    ([[{"name": "q", "output": "1", "ordered": "yes"}]], TypeError, r"\['ordered'\]"),
    ([[{"name": "q", "output": "1", "required_columns": "a"}]], TypeError, "required_columns"),
    ([[{"name": "q", "output": "1", "required_columns": []}]], TypeError, "required_columns"),
    ([[{"name": "q", "output": "1", "required_columns": [1]}]], TypeError, "required_columns"),
    ([[{"name": "q", "output": "x", "output_media_type": SPARQL}]], ValueError, "SPARQL results"),
    ([[{"name": "q", "output": "[1]", "output_media_type": SPARQL}]], ValueError, "SPARQL"),
    ([[{"name": "q", "output": "{", "output_media_type": "application/json"}]], ValueError,
     "not valid JSON"),
    ([[{"name": "q", "output": "", "output_media_type": "text/csv"}]], ValueError, "not a table"),
    ([[{"name": "q", "output": "a,b\n1,2", "output_media_type": "text/csv",
        "required_columns": ["c"]}]], ValueError, r"names \['c'\]"),
    ([[{"name": "retrieval", "output": "x"}]], ValueError, "relevant contexts"),
    ([[{"name": "retrieval", "output": []}]], ValueError, "lists no context"),
    ([[{"name": "retrieval", "output": [{"id": None}]}]], ValueError, "no string or int id"),
    ([[{"name": "retrieval", "output": {"id": "u1"}}]], ValueError, "relevant contexts"),
    ([[{"name": "q", "args": _nested(3000)}]], ValueError, "`reference_outputs` holds a value"),
    ([[_cyclic()]], ValueError, "`reference_outputs` holds a value nested"),
    ([[{"name": "q", "output": "[" * 5000, "output_media_type": "application/json"}]],
     ValueError, "`reference_outputs` holds a value nested"),
]  # fmt: skip

BAD_OPTIONS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"levels": "every"}, ValueError, "`levels`"),
    ({"levels": None}, ValueError, "`levels`"),
    ({"levels": ["all"]}, ValueError, "`levels`"),
    ({"retrieval_steps": "retrieval"}, TypeError, "`retrieval_steps`"),
    ({"retrieval_steps": None}, TypeError, "`retrieval_steps`"),
    ({"retrieval_steps": [""]}, TypeError, "`retrieval_steps`"),
    ({"retrieval_steps": [None]}, TypeError, "`retrieval_steps`"),
    ({"retrieval_steps": {"retrieval": True}}, TypeError, "`retrieval_steps`"),
    ({"retrieval_steps": 3}, TypeError, "`retrieval_steps`"),
    ({"compare_args": "yes"}, TypeError, "`compare_args`"),
    ({"compare_args": None}, TypeError, "`compare_args`"),
    ({"feedback_key": ""}, TypeError, "`feedback_key`"),
    ({"feedback_key": 1}, TypeError, "`feedback_key`"),
]


@pytest.mark.parametrize(("outputs", "exc", "pattern"), BAD_OUTPUTS)
@pytest.mark.parametrize("levels", ["last", "all"])
def test_bad_outputs(outputs: Any, exc: type[Exception], pattern: str, levels: str) -> None:
    kept = copy.deepcopy(outputs) if not _is_cyclic(outputs) else None
    with pytest.raises(exc, match=pattern):
        create_steps_evaluator(levels=levels)(outputs=outputs, reference_outputs=GOOD_REFERENCE)  # type: ignore[arg-type]
    with pytest.raises(exc, match=pattern):
        asyncio.run(
            create_async_steps_evaluator(levels=levels)(  # type: ignore[arg-type]
                outputs=outputs, reference_outputs=GOOD_REFERENCE
            )
        )
    if kept is not None:
        assert outputs == kept


@pytest.mark.parametrize(("reference", "exc", "pattern"), BAD_REFERENCES)
def test_bad_reference_outputs(reference: Any, exc: type[Exception], pattern: str) -> None:
    kept = copy.deepcopy(reference) if not _is_cyclic(reference) else None
    with pytest.raises(exc, match=pattern):
        create_steps_evaluator()(outputs=GOOD_OUTPUTS, reference_outputs=reference)
    if kept is not None:
        assert reference == kept


@pytest.mark.parametrize(("options", "exc", "pattern"), BAD_OPTIONS)
def test_bad_options(options: dict[str, Any], exc: type[Exception], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        create_steps_evaluator(**options)
    with pytest.raises(exc, match=pattern):
        create_async_steps_evaluator(**options)


def _is_cyclic(value: Any) -> bool:
    try:
        copy.deepcopy(value)
        json.dumps(value)
    except (RecursionError, ValueError, TypeError):
        return True
    return False


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "q", "1", "retrieval"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "output", "args", "status", "k", "output_media_type",
                         "required_columns", "ordered", "actual_steps", "reference_steps"]),
        inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(outputs=json_values, reference=json_values, levels=st.sampled_from(["last", "all"]))
def test_arbitrary_json_gives_a_score_or_a_clear_error(
    outputs: Any, reference: Any, levels: str
) -> None:
    kept = copy.deepcopy((outputs, reference))
    try:
        result = create_steps_evaluator(levels=levels)(  # type: ignore[arg-type]
            outputs=outputs, reference_outputs=reference
        )
    except (TypeError, ValueError) as exc:
        assert "outputs" in str(exc) or "reference_outputs" in str(exc)
    else:
        assert 0.0 <= result["score"] <= 1.0  # type: ignore[operator]
    assert (outputs, reference) == kept


# --------------------------------------------------------------------------- large levels (16.8)


def _sparql(rows: list[tuple[str, str]]) -> str:
    bindings = [
        {"s": {"type": "uri", "value": s}, "n": {"type": "literal", "value": n}} for s, n in rows
    ]
    return json.dumps({"head": {"vars": ["s", "n"]}, "results": {"bindings": bindings}})


def _timed(evaluator: Any, outputs: Any, reference: Any) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    result = evaluator(outputs=outputs, reference_outputs=reference)
    return result, time.perf_counter() - start


def test_a_level_of_1000_sparql_steps_is_fast() -> None:
    results = [[(f"urn:{i}:{r}", f"name {i}") for r in range(1 + i % 3)] for i in range(1000)]
    reference = [
        [{"name": "sparql_query", "output": _sparql(rows), "output_media_type": SPARQL,
          "required_columns": ["s", "n"]} for rows in results]
    ]  # fmt: skip
    actual = [
        {"name": "sparql_query", "output": _sparql(rows[::-1]), "status": "success", "id": i}
        for i, rows in reversed(list(enumerate(results)))
    ]
    failed = [{**step, "status": "error", "id": f"e{step['id']}"} for step in actual[::7]]
    result, seconds = _timed(create_steps_evaluator(), failed + actual, reference)
    assert result["score"] == 1.0
    assert result["metadata"]["matched"] == 1000
    assert seconds < 4.0, seconds  # today: ~0.05 s; before the fix: not done after 8 s
    # each reference step got the step that returned its rows
    for match in result["metadata"]["matches"]:
        assert match["actual_id"] == match["reference_index"]


def test_a_level_of_1000_interchangeable_steps_is_fast() -> None:
    reference = [[{"name": "calc", "output": str(i % 5)} for i in range(1000)]]
    actual = [{"name": "calc", "output": str(i % 4), "status": "success"} for i in range(1000)]
    result, seconds = _timed(create_steps_evaluator(), actual, reference)
    assert result["score"] == 0.8  # values 0-3 fully matched (200 each), no step returned "4"
    assert seconds < 2.0, seconds
    # the latest steps serve: every unused step comes before every used step of its value
    used = {m["actual_index"] for m in result["metadata"]["matches"]}
    assert used == set(range(1000)) - set(range(0, 1000 - 800))  # the last 800
    assert seconds < 2.0


def test_many_levels_of_1000_steps_with_levels_all() -> None:
    reference = [
        [{"name": f"step{level}", "args": {"i": i}} for i in range(200)] for level in range(5)
    ]
    actual = [
        {"name": f"step{level}", "args": {"i": i}, "status": "success"}
        for level in range(5)
        for i in range(200)
    ]
    result, seconds = _timed(create_steps_evaluator(levels="all"), actual, reference)
    assert result["score"] == 1.0
    assert result["metadata"]["level_scores"] == [1.0] * 5
    assert seconds < 2.0, seconds


def test_too_many_retrieval_pairs_raise_a_clear_error_at_once() -> None:
    n = int(MAX_RECALL_PAIRS**0.5) + 1
    ids = json.dumps([{"id": "u1"}])
    reference = [[{"name": "retrieval", "output": ids} for _ in range(n)]]
    actual = [{"name": "retrieval", "output": ids} for _ in range(n)]
    start = time.perf_counter()
    with pytest.raises(
        ValueError, match=r"reference_outputs\[0\] has \d+ reference 'retrieval'"
    ) as info:
        create_steps_evaluator()(outputs=actual, reference_outputs=reference)
    assert time.perf_counter() - start < 1.0
    assert "retrieval_steps=()" in str(info.value)
    # the same level compared by equality has no limit
    result = create_steps_evaluator(retrieval_steps=())(outputs=actual, reference_outputs=reference)
    assert result["score"] == 1.0


def test_a_dense_retrieval_level_finishes() -> None:
    n = 200  # 40,000 pairs, nearly all sharing ids (the dense worst case)
    reference = [[{"name": "retrieval", "output": [f"u{i % 7}", f"u{i % 11}"]} for i in range(n)]]
    actual = [{"name": "retrieval", "output": [f"u{i % 5}", f"u{i % 11}", "u3"]} for i in range(n)]
    result, seconds = _timed(create_steps_evaluator(), actual, reference)
    assert 0.0 < result["score"] <= 1.0
    assert seconds < 4.0, seconds


# --------------------------------------------------------------------------- large CSV cells (27.4)

BIG = 200_000  # over csv's default field limit of 131,072 characters


@pytest.mark.parametrize(
    ("media_type", "sep"), [("text/csv", ","), ("text/tab-separated-values", "\t")]
)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_cell_over_128_kb_is_scored_on_both_sides(
    media_type: str, sep: str, is_async: bool
) -> None:
    import csv

    limit = csv.field_size_limit()
    cell = "x" * BIG
    table = sep.join(["id", "text"]) + "\n" + sep.join(["1", cell])
    reference = [[{"name": "t", "output": table, "output_media_type": media_type}]]
    same = [{"name": "t", "output": table, "status": "success"}]
    other = [{"name": "t", "output": table.replace("xx", "xy", 1), "status": "success"}]
    factory = create_async_steps_evaluator if is_async else create_steps_evaluator
    evaluator = factory()

    def score(outputs: Any) -> Any:
        result = evaluator(outputs=outputs, reference_outputs=reference)
        if is_async:
            result = asyncio.run(result)
        return result["score"]

    assert score(same) == 1.0
    assert score(other) == 0.0
    assert csv.field_size_limit() == limit  # the process-wide limit is restored


def test_a_large_output_cell_against_a_small_reference_is_scored() -> None:
    reference = [[{"name": "t", "output": "id,text\n1,a", "output_media_type": "text/csv"}]]
    outputs = [{"name": "t", "output": "id,text\n1," + "a" * BIG, "status": "success"}]
    result = create_steps_evaluator()(outputs=outputs, reference_outputs=reference)
    assert result["score"] == 0.0


def test_a_caller_lowered_field_limit_is_left_as_it_was() -> None:
    import csv

    previous = csv.field_size_limit(1000)
    try:
        table = "id,text\n1," + "a" * 5000
        reference = [[{"name": "t", "output": table, "output_media_type": "text/csv"}]]
        outputs = [{"name": "t", "output": table, "status": "success"}]
        assert create_steps_evaluator()(outputs=outputs, reference_outputs=reference)["score"] == 1
        assert csv.field_size_limit() == 1000
    finally:
        csv.field_size_limit(previous)
