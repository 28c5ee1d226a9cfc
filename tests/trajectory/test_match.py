"""Trajectory match evaluators: README examples, fixed bugs, overrides, inputs, errors, comments."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from openevals import create_async_trajectory_match_evaluator, create_trajectory_match_evaluator
from openevals.trajectory import match as match_module
from tests.trajectory.match_helpers import ai, tool, trajectory, user

MODES = ("strict", "unordered", "subset", "superset")
ARGS_MODES = ("exact", "ignore", "subset", "superset")


def evaluate(mode: str = "strict", args_mode: str = "exact", overrides: Any = None, **kw: Any):
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode,  # type: ignore[arg-type]
        tool_args_match_mode=args_mode,  # type: ignore[arg-type]
        tool_args_match_overrides=overrides,
    )
    return evaluator(**kw)


# --------------------------------------------------------------------------- README examples


SF = {"city": "San Francisco"}
SF_SUNNY = "It's 80 degrees and sunny in SF."
NOTHING_FUN = "Nothing fun is happening, you should stay indoors and read!"
FUN_QUESTION = "What is the weather in SF and is there anything fun happening?"


def _sf_weather_reference() -> list[dict[str, Any]]:
    """The reference trajectory of the README's strict and override examples."""
    return [
        user("What is the weather in San Francisco?"),
        ai(("get_weather", SF)),
        tool("It's 80 degrees and sunny in San Francisco."),
        ai(content="The weather in SF is 80˚ and sunny."),
    ]


def test_readme_strict_example() -> None:
    outputs = [
        user("What is the weather in SF?"),
        ai(("get_weather", SF), ("accuweather_forecast", SF)),
        tool(SF_SUNNY),
        ai(content="The weather in SF is 80 degrees and sunny."),
    ]
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="strict")
    result = evaluator(outputs=outputs, reference_outputs=_sf_weather_reference())
    assert result["key"] == "trajectory_strict_match"
    assert result["score"] is False
    # The public release leaves the comment empty; we say where and why the match failed.
    assert result["comment"] == (
        "first divergence at message 1: tool calls differ: 1 output tool call(s) not matched by "
        'any reference call in that message: accuweather_forecast({"city": "San Francisco"})'
    )


def test_readme_unordered_example() -> None:
    outputs = [
        user(FUN_QUESTION),
        ai(("get_weather", SF)),
        tool(SF_SUNNY),
        ai(("get_fun_activities", SF)),
        tool(NOTHING_FUN),
        ai(
            content="The weather in SF is 80 degrees and sunny, but there is nothing fun happening."
        ),
    ]
    reference_outputs = [
        user(FUN_QUESTION),
        ai(("get_fun_activities", SF), ("get_weather", SF)),
        tool(NOTHING_FUN),
        tool(SF_SUNNY),
        ai(content="In SF, it's 80˚ and sunny, but there is nothing fun happening."),
    ]
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="unordered")
    result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    assert result == {
        "key": "trajectory_unordered_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }


def _readme_subset_superset_example() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    both = {"city": "SF and London"}
    outputs = [
        user("What is the weather in SF and London?"),
        ai(("get_weather", both), ("accuweather_forecast", both)),
        tool("It's 80 degrees and sunny in SF, and 90 degrees and rainy in London."),
        tool("Unknown."),
        ai(
            content=(
                "The weather in SF is 80 degrees and sunny. In London, it's 90 degrees and rainy."
            )
        ),
    ]
    reference_outputs = [
        user("What is the weather in SF and London?"),
        ai(("get_weather", both)),
        tool("It's 80 degrees and sunny in San Francisco, and 90 degrees and rainy in London."),
        ai(content="The weather in SF is 80˚ and sunny. In London, it's 90˚ and rainy."),
    ]
    return outputs, reference_outputs


def test_readme_superset_example() -> None:
    outputs, reference_outputs = _readme_subset_superset_example()
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="superset")
    result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    assert result == {
        "key": "trajectory_superset_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }


def test_readme_subset_variant_of_the_same_example() -> None:
    # The README's "# or 'subset'": the output calls accuweather_forecast, which the reference
    # does not, so the output is not a subset of the reference.
    outputs, reference_outputs = _readme_subset_superset_example()
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="subset")
    result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    assert result["key"] == "trajectory_subset_match"
    assert result["score"] is False
    assert result["comment"] == (
        "outputs have 2 tool call(s), reference_outputs 1; 1 output tool call(s) not matched by "
        'any reference call: accuweather_forecast({"city": "SF and London"})'
    )
    # ... and the reference is a subset of the output.
    swapped = evaluator(outputs=reference_outputs, reference_outputs=outputs)
    assert swapped["score"] is True


def test_readme_override_example() -> None:
    outputs = [
        user("What is the weather in SF?"),
        ai(("get_weather", {"city": "san francisco"})),
        tool(SF_SUNNY),
        ai(content="The weather in SF is 80 degrees and sunny."),
    ]
    reference_outputs = _sf_weather_reference()
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="strict",
        tool_args_match_mode="exact",
        tool_args_match_overrides={
            "get_weather": lambda x, y: x["city"].lower() == y["city"].lower()
        },
    )
    result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
    assert result == {
        "key": "trajectory_strict_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    # Without the override the differing case fails.
    plain = create_trajectory_match_evaluator(trajectory_match_mode="strict")
    assert plain(outputs=outputs, reference_outputs=reference_outputs)["score"] is False


# --------------------------------------------------------------------------- B1: no greedy matching

B1_REF = [ai(("search", {"q": "x"}), ("search", {"q": "x", "lang": "en"}))]
B1_OUT = [ai(("search", {"q": "x", "lang": "en"}), ("search", {"q": "x"}))]


@pytest.mark.parametrize("mode", MODES)
def test_b1_superset_args_are_matched_optimally(mode: str) -> None:
    result = evaluate(mode, "superset", outputs=B1_OUT, reference_outputs=B1_REF)
    assert result["score"] is True
    assert result["comment"] is None
    assert result["key"] == f"trajectory_{mode}_match"


@pytest.mark.parametrize("mode", ["strict", "unordered", "superset"])
def test_b1_across_messages_and_in_subset_args_mode(mode: str) -> None:
    # Same trap with the calls spread over messages (non-strict) and the subset direction.
    out = [ai(("search", {"q": "x"})), ai(("search", {"q": "x", "lang": "en"}))]
    ref = [ai(("search", {"q": "x", "lang": "en"})), ai(("search", {"q": "x"}))]
    if mode == "strict":
        # order across messages matters in strict mode, so keep the layout and swap inside
        out, ref = B1_REF, B1_OUT
    assert evaluate(mode, "subset", outputs=out, reference_outputs=ref)["score"] is True


def test_b1_greedy_trap_with_three_calls() -> None:
    # ref0 {a} is accepted by out0 and out1; ref1 {a, b} only by out0; ref2 {c} by out2.
    ref = [ai(("f", {"a": 1}), ("f", {"a": 1, "b": 2}), ("f", {"c": 3}))]
    out = [ai(("f", {"a": 1, "b": 2}), ("f", {"a": 1, "z": 0}), ("f", {"c": 3, "d": 4}))]
    for mode in MODES:
        assert evaluate(mode, "superset", outputs=out, reference_outputs=ref)["score"] is True


def test_b1_trap_without_identical_calls() -> None:
    # No call is identical to another, so only a real matching finds the pairing
    # {"a"} -> {"a", "d"} and {"a", "b"} -> {"a", "b", "c"}.
    ref = [ai(("f", {"a": 1}), ("f", {"a": 1, "b": 2}))]
    out = [ai(("f", {"a": 1, "b": 2, "c": 3}), ("f", {"a": 1, "d": 4}))]
    for mode in ("strict", "unordered", "superset"):
        assert evaluate(mode, "superset", outputs=out, reference_outputs=ref)["score"] is True
    # and the mirror image in subset argument mode
    for mode in ("strict", "unordered", "subset"):
        assert evaluate(mode, "subset", outputs=ref, reference_outputs=out)["score"] is True
    flat_out = [ai(("f", {"a": 1, "b": 2, "c": 3})), ai(("f", {"a": 1, "d": 4}))]
    assert evaluate("superset", "superset", outputs=flat_out, reference_outputs=ref)["score"]


# --------------------------------------------------------------------------- multisets


def test_duplicate_calls_are_a_multiset() -> None:
    one = [ai(("search", {"q": "x"}))]
    two = [ai(("search", {"q": "x"})), ai(("search", {"q": "x"}))]
    # outputs call twice, reference once
    assert evaluate("unordered", outputs=two, reference_outputs=one)["score"] is False
    assert evaluate("superset", outputs=two, reference_outputs=one)["score"] is True
    assert evaluate("subset", outputs=two, reference_outputs=one)["score"] is False
    # outputs call once, reference twice
    assert evaluate("unordered", outputs=one, reference_outputs=two)["score"] is False
    assert evaluate("superset", outputs=one, reference_outputs=two)["score"] is False
    assert evaluate("subset", outputs=one, reference_outputs=two)["score"] is True
    assert evaluate("unordered", outputs=two, reference_outputs=two)["score"] is True


def test_duplicates_in_ignore_mode_still_count() -> None:
    out = [ai(("a", {"x": 1}), ("a", {"x": 2}), ("b", {}))]
    ref = [ai(("a", {"y": 9}), ("b", {"q": 1}), ("b", {}))]
    result = evaluate("unordered", "ignore", outputs=out, reference_outputs=ref)
    assert result["score"] is False
    assert "1 reference tool call(s) not matched" in result["comment"]
    assert "1 output tool call(s) not matched" in result["comment"]
    assert evaluate("superset", "ignore", outputs=out, reference_outputs=ref)["score"] is False
    assert evaluate("subset", "ignore", outputs=out[:1], reference_outputs=ref)["score"] is False


def test_zero_tool_calls_on_both_sides() -> None:
    for mode in MODES:
        result = evaluate(mode, outputs=[user("a")], reference_outputs=[user("b")])
        assert result["score"] is True, mode


def test_tool_names_must_match() -> None:
    out = [ai(("get_weather", {"city": "SF"}))]
    ref = [ai(("get_forecast", {"city": "SF"}))]
    for mode in MODES:
        for args_mode in ARGS_MODES:
            result = evaluate(mode, args_mode, outputs=out, reference_outputs=ref)
            assert result["score"] is False, (mode, args_mode)


# --------------------------------------------------------------------------- args modes


@pytest.mark.parametrize(
    ("args_mode", "out_args", "ref_args", "expected"),
    [
        ("exact", {"a": 1}, {"a": 1}, True),
        ("exact", {"a": 1}, {"a": 1, "b": 2}, False),
        ("exact", {"a": 1}, {"a": 1.0}, True),  # Python equality, as in the public release
        ("exact", {"a": {"b": [1, 2]}}, {"a": {"b": [1, 2]}}, True),
        ("exact", {"a": {"b": [1, 2]}}, {"a": {"b": [2, 1]}}, False),
        ("ignore", {"a": 1}, {"z": 9}, True),
        ("subset", {"a": 1}, {"a": 1, "b": 2}, True),
        ("subset", {"a": 1, "b": 2}, {"a": 1}, False),
        ("subset", {}, {"a": 1}, True),
        ("subset", {"a": 2}, {"a": 1, "b": 2}, False),
        ("superset", {"a": 1, "b": 2}, {"a": 1}, True),
        ("superset", {"a": 1}, {"a": 1, "b": 2}, False),
        ("superset", {"a": {"n": 1}, "b": 2}, {"a": {"n": 1}}, True),
        ("superset", {"a": {"n": 1, "m": 2}}, {"a": {"n": 1}}, False),  # values compared whole
    ],
)
def test_args_modes(args_mode: str, out_args: dict, ref_args: dict, expected: bool) -> None:
    out = [ai(("t", out_args))]
    ref = [ai(("t", ref_args))]
    for mode in MODES:
        result = evaluate(mode, args_mode, outputs=out, reference_outputs=ref)
        assert result["score"] is expected, mode
        # Same verdict when the matching has to go through the many-call path.
        many_out = [ai(("t", out_args), ("u", {}), ("u", {"k": 1}))]
        many_ref = [ai(("u", {"k": 1}), ("t", ref_args), ("u", {}))]
        result = evaluate(mode, args_mode, outputs=many_out, reference_outputs=many_ref)
        assert result["score"] is expected, (mode, "many")


def test_bool_and_int_compare_like_python() -> None:
    # {"a": True} == {"a": 1} in Python; canonical keys must agree with dict equality.
    out = [ai(("t", {"a": True}), ("t", {"a": 2}), ("t", {"a": 3}))]
    ref = [ai(("t", {"a": 1}), ("t", {"a": 2.0}), ("t", {"a": 3}))]
    assert evaluate("unordered", outputs=out, reference_outputs=ref)["score"] is True


def test_non_json_argument_values_fall_back_to_equality() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __init__(self, v: int) -> None:
            self.v = v

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Unhashable) and other.v == self.v

    def msg(*calls: tuple[str, dict]) -> dict:
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls],
        }

    out = [msg(("t", {"x": Unhashable(1)}), ("t", {"x": Unhashable(2)}), ("t", {"x": 3}))]
    ref = [msg(("t", {"x": Unhashable(2)}), ("t", {"x": 3}), ("t", {"x": Unhashable(1)}))]
    for args_mode in ("exact", "subset", "superset"):
        assert evaluate("unordered", args_mode, outputs=out, reference_outputs=ref)["score"]
    bad = [msg(("t", {"x": Unhashable(5)}), ("t", {"x": 3}), ("t", {"x": Unhashable(1)}))]
    assert not evaluate("unordered", outputs=out, reference_outputs=bad)["score"]


# --------------------------------------------------------------------------- overrides


def test_override_mode_string_per_tool() -> None:
    out = [ai(("search", {"q": "x", "page": 2}), ("fetch", {"url": "a"}))]
    ref = [ai(("search", {"q": "x"}), ("fetch", {"url": "a"}))]
    assert evaluate("strict", outputs=out, reference_outputs=ref)["score"] is False
    overrides = {"search": "superset"}
    assert evaluate("strict", overrides=overrides, outputs=out, reference_outputs=ref)["score"]
    overrides = {"search": "ignore"}
    assert evaluate("unordered", overrides=overrides, outputs=out, reference_outputs=ref)["score"]
    # The override applies to that tool only: fetch is still compared exactly.
    ref2 = [ai(("search", {"q": "x"}), ("fetch", {"url": "b"}))]
    assert not evaluate("strict", overrides=overrides, outputs=out, reference_outputs=ref2)["score"]
    # ... and an override can be stricter than the default mode.
    result = evaluate("strict", "ignore", {"fetch": "exact"}, outputs=out, reference_outputs=ref2)
    assert result["score"] is False


def test_override_field_paths_with_nested_dotted_paths() -> None:
    def call(city: str, date: str, extra: Any) -> list[dict[str, Any]]:
        return [ai(("book", {"city": city, "filters": {"date": date, "extra": extra}}))]

    overrides = {"book": ["city", "filters.date"]}
    ok = evaluate(
        "strict",
        overrides=overrides,
        outputs=call("Paris", "2024-05-01", 1),
        reference_outputs=call("Paris", "2024-05-01", 2),
    )
    assert ok["score"] is True
    wrong_date = evaluate(
        "strict",
        overrides=overrides,
        outputs=call("Paris", "2024-05-02", 1),
        reference_outputs=call("Paris", "2024-05-01", 1),
    )
    assert wrong_date["score"] is False


@pytest.mark.parametrize(
    ("out_args", "ref_args"),
    [
        ({"city": "Paris"}, {"city": "Paris", "filters": {"date": "d"}}),  # missing in output
        ({"city": "Paris", "filters": {"date": "d"}}, {"city": "Paris"}),  # missing in reference
        ({"city": "Paris", "filters": "d"}, {"city": "Paris", "filters": "d"}),  # not an object
        ({"filters": {"date": "d"}}, {"filters": {"date": "d"}}),  # both miss "city"
    ],
)
def test_override_field_path_missing_on_either_side_never_matches(
    out_args: dict, ref_args: dict
) -> None:
    overrides = {"book": ["city", "filters.date"]}
    for mode in MODES:
        result = evaluate(
            mode,
            overrides=overrides,
            outputs=[ai(("book", out_args))],
            reference_outputs=[ai(("book", ref_args))],
        )
        assert result["score"] is False, mode


def test_override_paths_work_with_many_calls_and_duplicates() -> None:
    overrides = {"t": ["k.id"]}
    out = [ai(("t", {"k": {"id": 1, "v": "a"}}), ("t", {"k": {"id": 1, "v": "b"}}), ("t", {}))]
    ref = [ai(("t", {"k": {"id": 1}}), ("t", {"k": {"id": 1, "w": 0}}))]
    assert evaluate("superset", overrides=overrides, outputs=out, reference_outputs=ref)["score"]
    result = evaluate("subset", overrides=overrides, outputs=out, reference_outputs=ref)
    assert result["score"] is False  # the {} call cannot match anything
    assert "t({})" in result["comment"]


def test_override_comparator_receives_output_then_reference() -> None:
    seen: list[tuple[dict, dict]] = []

    def comparator(output_args: dict, reference_args: dict) -> bool:
        seen.append((output_args, reference_args))
        return output_args["n"] >= reference_args["n"]

    out = [ai(("t", {"n": 5, "side": "out"}))]
    ref = [ai(("t", {"n": 3, "side": "ref"}))]
    for mode in MODES:
        seen.clear()
        result = evaluate(mode, overrides={"t": comparator}, outputs=out, reference_outputs=ref)
        assert result["score"] is True
        assert seen and all(o["side"] == "out" and r["side"] == "ref" for o, r in seen)


def test_override_comparator_is_solved_optimally() -> None:
    # A non-transitive comparator: numbers within 1 of each other.
    def near(o: dict, r: dict) -> bool:
        return abs(o["n"] - r["n"]) <= 1

    out = [ai(("t", {"n": 1}), ("t", {"n": 3}))]
    ref = [ai(("t", {"n": 2}), ("t", {"n": 0}))]
    # Greedy would take out n=1 -> ref n=2, leaving out n=3 unmatched; the matching 1-0, 3-2 works.
    for mode in MODES:
        assert evaluate(mode, overrides={"t": near}, outputs=out, reference_outputs=ref)["score"]


def test_comparator_errors_propagate() -> None:
    def broken(o: dict, r: dict) -> bool:
        raise KeyError("city")

    with pytest.raises(KeyError):
        evaluate(
            "strict",
            overrides={"t": broken},
            outputs=[ai(("t", {}))],
            reference_outputs=[ai(("t", {}))],
        )


def test_none_override_means_default_mode() -> None:
    out = [ai(("t", {"a": 1}))]
    ref = [ai(("t", {"a": 2}))]
    assert not evaluate("strict", overrides={"t": None}, outputs=out, reference_outputs=ref)[
        "score"
    ]


def test_overrides_are_snapshotted_at_creation() -> None:
    overrides: dict[str, Any] = {"t": "ignore"}
    evaluator = create_trajectory_match_evaluator(tool_args_match_overrides=overrides)
    overrides["t"] = "exact"
    overrides["extra"] = 42
    result = evaluator(outputs=[ai(("t", {"a": 1}))], reference_outputs=[ai(("t", {"a": 2}))])
    assert result["score"] is True


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "factory", [create_trajectory_match_evaluator, create_async_trajectory_match_evaluator]
)
def test_bad_modes_raise_at_creation(factory: Any) -> None:
    with pytest.raises(ValueError, match=r"trajectory_match_mode.*'strict'.*got 'loose'"):
        factory(trajectory_match_mode="loose")
    with pytest.raises(ValueError, match=r"tool_args_match_mode.*'exact'.*got 'fuzzy'"):
        factory(tool_args_match_mode="fuzzy")


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("fuzzy", r"\['get_weather'\] = 'fuzzy' is not a valid override"),
        ("", r"\['get_weather'\] = '' is not a valid override"),
        (42, r"\['get_weather'\] = 42 \(int\) is not a valid override"),
        ({"city": "exact"}, r"\['get_weather'\] = \{'city': 'exact'\} \(dict\)"),
        ([], r"\['get_weather'\] is an empty list"),
        (["city", 3], r"\['get_weather'\] contains 3"),
        (["city", ""], r"\['get_weather'\] contains ''"),
        (["filters..date"], r"\['get_weather'\] contains 'filters..date'"),
        ([".city"], r"contains '.city'"),
    ],
)
@pytest.mark.parametrize(
    "factory", [create_trajectory_match_evaluator, create_async_trajectory_match_evaluator]
)
def test_bad_override_values_raise_at_creation(value: Any, pattern: str, factory: Any) -> None:
    with pytest.raises(ValueError, match=pattern) as info:
        factory(tool_args_match_overrides={"get_weather": value})
    assert "tool_args_match_overrides" in str(info.value)
    assert "accepted" in str(info.value)


def test_bad_override_containers_raise_type_error() -> None:
    with pytest.raises(TypeError, match="tool_args_match_overrides must be a dict"):
        create_trajectory_match_evaluator(tool_args_match_overrides=["get_weather"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keys must be tool names"):
        create_trajectory_match_evaluator(tool_args_match_overrides={1: "exact"})  # type: ignore[dict-item]


def test_factories_and_evaluators_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        create_trajectory_match_evaluator("strict")  # type: ignore[misc]
    evaluator = create_trajectory_match_evaluator()
    with pytest.raises(TypeError):
        evaluator([], [])


# --------------------------------------------------------------------------- B2: bad arguments


@pytest.mark.parametrize("raw", ["", "not json", "{'a': 1}", '{"a": 1'])
@pytest.mark.parametrize("args_mode", ARGS_MODES)
def test_b2_invalid_json_arguments_name_side_index_and_tool(raw: str, args_mode: str) -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "t", "arguments": raw}}],
    }
    good = [user(), ai(("t", {}))]
    with pytest.raises(
        ValueError, match=r"`outputs` message 1, tool call 't': arguments are not valid JSON"
    ):
        evaluate("unordered", args_mode, outputs=[user(), bad], reference_outputs=good)
    with pytest.raises(
        ValueError,
        match=r"`reference_outputs` message 0, tool call 't': arguments are not valid JSON",
    ):
        evaluate("strict", args_mode, outputs=good, reference_outputs=[bad])


@pytest.mark.parametrize("raw", ["[1, 2]", "3", '"text"', "null"])
def test_b2_arguments_must_be_a_json_object(raw: str) -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "lookup", "arguments": raw}}],
    }
    with pytest.raises(
        ValueError,
        match=r"`outputs` message 0, tool call 'lookup': arguments must be a JSON object",
    ):
        evaluate("superset", "ignore", outputs=[bad], reference_outputs=[])


def test_invalid_arguments_raise_even_after_a_divergence() -> None:
    # Errors never depend on where a strict comparison would have stopped.
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "t", "arguments": "x"}}],
    }
    with pytest.raises(ValueError, match="message 2"):
        evaluate("strict", outputs=[user(), ai(("a", {})), bad], reference_outputs=[tool()])


def test_langchain_form_dict_with_string_args_is_validated() -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "t", "args": "nope", "id": "1"}],
    }
    with pytest.raises(ValueError, match=r"`outputs` message 0, tool call 't'"):
        evaluate("unordered", outputs=[bad], reference_outputs=[])


def test_tool_call_without_a_name() -> None:
    bad = {"role": "assistant", "content": "", "tool_calls": [{"function": {"arguments": "{}"}}]}
    with pytest.raises(
        ValueError, match=r"`reference_outputs` message 0: tool call 0 has no tool name"
    ):
        evaluate("unordered", outputs=[], reference_outputs=[bad])
    bad2 = {"role": "assistant", "content": "", "tool_calls": [{"id": "x"}]}
    with pytest.raises(ValueError, match=r"`outputs` message 0: .*neither 'function'"):
        evaluate("unordered", outputs=[bad2], reference_outputs=[])


def test_arguments_of_wrong_type() -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "t", "arguments": 5}}],
    }
    with pytest.raises(
        ValueError,
        match=r"`outputs` message 0, tool call 't': arguments must be a JSON object string or a dict, got int",
    ):
        evaluate("unordered", outputs=[bad], reference_outputs=[])


def test_missing_arguments_mean_no_arguments() -> None:
    no_args = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "t"}}]}
    assert evaluate("strict", outputs=[no_args], reference_outputs=[ai(("t", {}))])["score"] is True


@pytest.mark.parametrize(
    ("outputs", "error", "pattern"),
    [
        (42, TypeError, r"`outputs` must be a trajectory.*got int"),
        ({"foo": 1}, ValueError, r"`outputs` must be a trajectory.*'foo'"),
        ([42], TypeError, r"`outputs` message 0: expected a chat message"),
        (
            [user(), {"content": "no role"}],
            ValueError,
            r"`outputs` message 1: message dicts need a 'role'",
        ),
    ],
)
def test_malformed_trajectories(outputs: Any, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        evaluate("unordered", outputs=outputs, reference_outputs=[])


# --------------------------------------------------------------------------- input forms


def _lc_trajectory() -> list[Any]:
    return [
        SystemMessage("be brief"),
        HumanMessage("weather in SF and NYC?"),
        AIMessage(
            content="",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "SF"}, "id": "c1"},
                {"name": "get_weather", "args": {"city": "NYC", "units": "F"}, "id": "c2"},
            ],
        ),
        ToolMessage("sunny", tool_call_id="c1"),
        ToolMessage("rainy", tool_call_id="c2"),
        AIMessage("SF is sunny, NYC rainy."),
    ]


def _openai_trajectory() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather in SF and NYC?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"units": "F", "city": "NYC"}',
                    },
                },
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "SF"}},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "rainy"},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny in SF and rainy in NYC.", "tool_calls": []},
    ]


def _alias_trajectory() -> list[dict[str, Any]]:
    # dict messages with LangChain-style roles and LangChain-form tool calls
    return [
        {"role": "system", "content": "x"},
        {"role": "human", "content": "q"},
        {
            "role": "ai",
            "content": "",
            "tool_calls": [
                {"name": "get_weather", "args": {"city": "NYC", "units": "F"}, "id": "c2"},
                {"name": "get_weather", "args": {"city": "SF"}},
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": "c2"},
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
        {"role": "ai", "content": "done", "tool_calls": None},
    ]


@pytest.mark.parametrize("mode", MODES)
def test_langchain_openai_and_alias_forms_are_equivalent(mode: str) -> None:
    forms = [
        _lc_trajectory(),
        _openai_trajectory(),
        _alias_trajectory(),
        {"messages": _lc_trajectory()},
    ]
    for out in forms:
        for ref in forms:
            result = evaluate(mode, outputs=out, reference_outputs=ref)
            assert result["score"] is True, (mode, out, ref)


def test_single_message_and_tuple_inputs() -> None:
    message = ai(("t", {"a": 1}))
    assert evaluate("strict", outputs=message, reference_outputs=[message])["score"] is True
    assert evaluate("strict", outputs=(message,), reference_outputs={"messages": [message]})[
        "score"
    ]
    lc = AIMessage(content="", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "1"}])
    assert evaluate("superset", outputs=lc, reference_outputs=message)["score"] is True


def test_none_is_an_empty_trajectory() -> None:
    assert evaluate("unordered", outputs=None, reference_outputs=[])["score"] is True
    assert evaluate("superset", outputs=None, reference_outputs=[ai(("t", {}))])["score"] is False


def test_inputs_are_never_mutated() -> None:
    openai_form = _openai_trajectory()
    alias_form = _alias_trajectory()
    lc_form = _lc_trajectory()
    container = {"messages": _lc_trajectory()}
    snapshot = copy.deepcopy((openai_form, alias_form, lc_form, container))
    lc_dumps = [m.model_dump() for m in lc_form]
    overrides = {"get_weather": lambda o, r: o.get("city") == r.get("city")}
    for mode in MODES:
        for args_mode in ARGS_MODES:
            for out, ref in [
                (openai_form, alias_form),
                (lc_form, container),
                (alias_form, lc_form),
            ]:
                evaluate(mode, args_mode, outputs=out, reference_outputs=ref)
                evaluate(mode, args_mode, overrides, outputs=out, reference_outputs=ref)
    assert (openai_form, alias_form, lc_form, container) == snapshot
    assert [m.model_dump() for m in lc_form] == lc_dumps
    # dict-valued arguments are not copied, but they are not modified either
    assert openai_form[2]["tool_calls"][1]["function"]["arguments"] == {"city": "SF"}


def test_extra_keyword_arguments_are_accepted() -> None:
    result = evaluate(
        "strict", outputs=[user()], reference_outputs=[user()], inputs={"q": 1}, foo=2
    )
    assert result["score"] is True


# --------------------------------------------------------------------------- strict mode details


def test_strict_ignores_content_but_not_roles() -> None:
    out = [user("What is the weather?"), ai(("w", {}), content="let me check"), tool("80F")]
    ref = [user("Weather??"), ai(("w", {})), tool("eighty")]
    assert evaluate("strict", outputs=out, reference_outputs=ref)["score"] is True
    result = evaluate("strict", outputs=out, reference_outputs=[user(), ai(("w", {})), user()])
    assert result["score"] is False
    assert result["comment"] == (
        "first divergence at message 2: role differs (outputs 'tool', reference_outputs 'user')"
    )


def test_strict_order_inside_a_message_is_free_but_not_across_messages() -> None:
    a, b = ("a", {"x": 1}), ("b", {"y": 2})
    assert evaluate("strict", outputs=[ai(a, b)], reference_outputs=[ai(b, a)])["score"] is True
    result = evaluate("strict", outputs=[ai(a), ai(b)], reference_outputs=[ai(b), ai(a)])
    assert result["score"] is False
    assert result["comment"] == (
        "first divergence at message 0: tool calls differ: 1 reference tool call(s) not matched "
        'by any output call in that message: b({"y": 2}); 1 output tool call(s) not matched by '
        'any reference call in that message: a({"x": 1})'
    )
    assert evaluate("unordered", outputs=[ai(a), ai(b)], reference_outputs=[ai(b), ai(a)])["score"]


def test_strict_tool_call_presence() -> None:
    empty_list = {"role": "assistant", "content": "", "tool_calls": []}
    none_calls = {"role": "assistant", "content": "", "tool_calls": None}
    absent = {"role": "assistant", "content": "x"}
    for left in (empty_list, none_calls, absent):
        for right in (empty_list, none_calls, absent):
            assert evaluate("strict", outputs=[left], reference_outputs=[right])["score"] is True
    result = evaluate("strict", outputs=[absent], reference_outputs=[ai(("t", {}))])
    assert result["comment"] == (
        "first divergence at message 0: reference_outputs has tool calls but outputs has none"
    )
    result = evaluate("strict", outputs=[ai(("t", {}))], reference_outputs=[none_calls])
    assert result["comment"] == (
        "first divergence at message 0: outputs has tool calls but reference_outputs has none"
    )


def test_strict_length_mismatch_comments() -> None:
    out = [user(), ai(("t", {}))]
    result = evaluate("strict", outputs=out, reference_outputs=[*out, tool()])
    assert result["score"] is False
    assert result["comment"] == (
        "first divergence at message 2: outputs has 2 messages, reference_outputs has 3 "
        "(length mismatch)"
    )
    result = evaluate("strict", outputs=[tool(), *out], reference_outputs=out)
    assert result["comment"] == (
        "first divergence at message 0: role differs (outputs 'tool', reference_outputs 'user'); "
        "also outputs has 3 messages, reference_outputs has 2 (length mismatch)"
    )


def test_strict_with_more_calls_per_message_uses_the_general_matcher() -> None:
    calls = [("t", {"n": i % 2}) for i in range(5)] + [("u", {})]
    shuffled = calls[::-1]
    assert evaluate("strict", outputs=[ai(*calls)], reference_outputs=[ai(*shuffled)])["score"]
    result = evaluate(
        "strict", outputs=[ai(*calls)], reference_outputs=[ai(*calls[:-1], ("t", {"n": 0}))]
    )
    assert result["score"] is False
    assert "u({})" in result["comment"] and 't({"n": 0})' in result["comment"]


# --------------------------------------------------------------------------- comments


def test_comment_lists_unmatched_calls_per_mode() -> None:
    out = [ai(("a", {"x": 1}), ("b", {}))]
    ref = [ai(("a", {"x": 2}))]
    superset = evaluate("superset", outputs=out, reference_outputs=ref)
    assert superset == {
        "key": "trajectory_superset_match",
        "score": False,
        "comment": (
            "outputs have 2 tool call(s), reference_outputs 1; 1 reference tool call(s) not "
            'matched by any output call: a({"x": 2})'
        ),
        "metadata": None,
    }
    subset = evaluate("subset", outputs=out, reference_outputs=ref)
    assert subset["comment"] == (
        "outputs have 2 tool call(s), reference_outputs 1; 2 output tool call(s) not matched by "
        'any reference call: a({"x": 1}), b({})'
    )
    unordered = evaluate("unordered", outputs=out, reference_outputs=ref)
    assert unordered["comment"] == (
        "outputs have 2 tool call(s), reference_outputs 1; 1 reference tool call(s) not matched "
        'by any output call: a({"x": 2}); 2 output tool call(s) not matched by any reference '
        'call: a({"x": 1}), b({})'
    )


def test_comment_is_shortened_for_long_lists_and_long_arguments() -> None:
    ref = [ai(*[("t", {"i": i}) for i in range(12)])]
    result = evaluate("superset", outputs=[], reference_outputs=ref)
    assert result["comment"].endswith(
        't({"i": 0}), t({"i": 1}), t({"i": 2}), t({"i": 3}), t({"i": 4}), ... and 7 more'
    )
    long = [ai(("t", {"text": "y" * 1000}))]
    result = evaluate("superset", outputs=[], reference_outputs=long)
    assert len(result["comment"]) < 400
    assert "...)" in result["comment"]


def test_success_has_no_comment_in_every_mode() -> None:
    traj = trajectory([[("a", {"x": 1}), ("b", {"y": [1, 2]})], [("a", {"x": 1})]])
    for mode in MODES:
        for args_mode in ARGS_MODES:
            result = evaluate(mode, args_mode, outputs=traj, reference_outputs=copy.deepcopy(traj))
            assert result["score"] is True
            assert result["comment"] is None
            assert result["key"] == f"trajectory_{mode}_match"


# --------------------------------------------------------------------------- async, imports, speed


ASYNC_CASES = [
    ("strict", "exact", None, B1_OUT, B1_REF),
    ("superset", "superset", None, B1_OUT, B1_REF),
    ("unordered", "exact", None, [ai(("a", {}))], [ai(("a", {}), ("a", {}))]),
    ("subset", "ignore", None, [ai(("a", {"x": 1}))], [ai(("b", {}))]),
    ("strict", "exact", {"a": ["x"]}, [ai(("a", {"x": 1, "y": 2}))], [ai(("a", {"x": 1}))]),
    ("strict", "exact", None, [user(), tool()], [user()]),
]


@pytest.mark.parametrize(("mode", "args_mode", "overrides", "out", "ref"), ASYNC_CASES)
async def test_async_evaluator_matches_sync(
    mode: str, args_mode: str, overrides: Any, out: Any, ref: Any
) -> None:
    async_evaluator = create_async_trajectory_match_evaluator(
        trajectory_match_mode=mode,  # type: ignore[arg-type]
        tool_args_match_mode=args_mode,  # type: ignore[arg-type]
        tool_args_match_overrides=overrides,
    )
    expected = evaluate(mode, args_mode, overrides, outputs=out, reference_outputs=ref)
    assert await async_evaluator(outputs=out, reference_outputs=ref) == expected


async def test_async_errors_match_sync() -> None:
    bad = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "t", "arguments": "?"}}],
    }
    evaluator = create_async_trajectory_match_evaluator(trajectory_match_mode="unordered")
    with pytest.raises(ValueError, match=r"`outputs` message 0, tool call 't'"):
        await evaluator(outputs=[bad], reference_outputs=[])
    with pytest.raises(TypeError):
        await evaluator(outputs=5, reference_outputs=[])


def test_importing_match_evaluators_loads_no_llm_code() -> None:
    code = (
        "import sys\n"
        "import openevals.trajectory\n"
        "from openevals.trajectory import create_trajectory_match_evaluator\n"
        "from openevals.trajectory import strict, unordered, subset, superset, utils\n"
        "heavy = [m for m in ('openevals.trajectory.llm', 'openevals.llm', 'openai',\n"
        "         'langchain_openai', 'langsmith.testing') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "fn = openevals.trajectory.create_trajectory_llm_as_judge\n"
        "assert 'openevals.trajectory.llm' in sys.modules\n"
        "assert fn is sys.modules['openevals.trajectory.llm'].create_trajectory_llm_as_judge\n"
        "assert callable(openevals.trajectory.create_async_trajectory_llm_as_judge)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_unknown_attribute_of_trajectory_package() -> None:
    import openevals.trajectory as pkg

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pkg.nope  # noqa: B018
    assert set(pkg.__all__) == {
        "create_trajectory_match_evaluator",
        "create_async_trajectory_match_evaluator",
        "create_trajectory_llm_as_judge",
        "create_async_trajectory_llm_as_judge",
        "create_trajectory_tool_permission_evaluator",
        "create_async_trajectory_tool_permission_evaluator",
    }
    assert set(pkg.__all__) <= set(dir(pkg))


def test_args_are_parsed_once_per_distinct_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_loads = json.loads

    def counting_loads(text: str, *a: Any, **kw: Any) -> Any:
        calls.append(text)
        return real_loads(text, *a, **kw)

    monkeypatch.setattr(match_module.json, "loads", counting_loads)
    out = [ai(*[("t", {"i": i}) for i in range(6)])]
    ref = [ai(*[("t", {"i": i}) for i in reversed(range(6))])]
    assert evaluate("unordered", "superset", outputs=out, reference_outputs=ref)["score"]
    assert sorted(calls) == sorted({json.dumps({"i": i}) for i in range(6)})


def test_thousand_call_trajectories_are_fast() -> None:
    from benchmarks.trajectory_workload import build

    pairs = build(1000)
    for mode in MODES:
        outputs, reference = pairs[mode]
        for args_mode in ARGS_MODES:
            evaluator = create_trajectory_match_evaluator(
                trajectory_match_mode=mode,  # type: ignore[arg-type]
                tool_args_match_mode=args_mode,  # type: ignore[arg-type]
            )
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                result = evaluator(outputs=outputs, reference_outputs=reference)
                best = min(best, time.perf_counter() - start)
            assert result["score"] is True, (mode, args_mode)
            assert best < 0.2, (mode, args_mode, best)


# --------------------------------------------------------------------------- split modules, depth


def test_match_module_keeps_every_name_it_had() -> None:
    from openevals.trajectory import match as m

    for name in (
        "ArgsComparator", "ArgsRule", "MatchConfig", "ParsedArgs", "ParsedMessage", "ToolCall",
        "TOOL_ARGS_MATCH_MODES", "TRAJECTORY_MATCH_MODES", "ToolArgsMatchMode",
        "ToolArgsMatchOverrides", "TrajectoryMatchMode", "create_async_trajectory_match_evaluator",
        "create_trajectory_match_evaluator", "evaluate_trajectories", "flatten_calls",
        "make_scorer", "match_tool_calls", "parse_trajectory",
    ):  # fmt: skip
        assert getattr(m, name) is not None, name
    assert set(m.__all__) == {
        "ToolArgsMatchMode",
        "ToolArgsMatchOverrides",
        "TrajectoryMatchMode",
        "create_async_trajectory_match_evaluator",
        "create_trajectory_match_evaluator",
    }


def _nest(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": [value]}
    return value


async def test_langchain_form_calls_with_deep_arguments_are_read_in_place() -> None:
    # "ai" role and {"name", "args"} calls used to go through a JSON round trip that recursed.
    def message(args: Any) -> dict[str, Any]:
        return {"role": "ai", "content": "", "tool_calls": [{"name": "f", "args": args}]}

    for mode in MODES:
        same = evaluate(
            mode,
            outputs=[message({"q": _nest(2_500)})],
            reference_outputs=[message({"q": _nest(2_500)})],
        )
        assert same["score"] is True, mode
    evaluator = create_async_trajectory_match_evaluator(trajectory_match_mode="unordered")
    differs = await evaluator(
        outputs=[message({"q": _nest(2_500)})], reference_outputs=[message({"q": _nest(2_499)})]
    )
    assert differs["score"] is False
    assert len(differs["comment"]) < 1_000  # argument texts are shortened in comments
    assert 'f({"q": {"k": [{"k": [' in differs["comment"]


def test_deep_json_argument_text_is_parsed() -> None:
    text = '{"q": ' + "[" * 3_000 + "1" + "]" * 3_000 + "}"
    call = {"type": "function", "function": {"name": "f", "arguments": text}}
    out = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    assert evaluate("strict", outputs=out, reference_outputs=list(out))["score"]
