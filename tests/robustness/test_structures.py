"""Cyclic and very deep values for every structural evaluator, sync and async (issue 16, item 2).

Comparisons (exact match, Levenshtein, JSON match, trajectory match) handle acyclic values of any
depth and reject a value that contains itself with a ``ValueError`` naming the parameter; the
multiturn simulator rejects reply messages that contain themselves or nest more than
``MAX_DEPTH`` levels. Nothing raises ``RecursionError``, and the inputs are never modified.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from openevals import exact_match, exact_match_async
from openevals._structure import (
    MAX_DEPTH,
    _iterative_equal,
    _iterative_json,
    _iterative_loads,
    check,
    encode_json,
    equal,
    load_json,
)
from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator
from openevals.simulators import run_multiturn_simulation, run_multiturn_simulation_async
from openevals.string import levenshtein_distance, levenshtein_distance_async
from openevals.trajectory import (
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)

DEEP = 2_000  # the depth the issue reports; Python's own recursion gives up near 1,000


# --------------------------------------------------------------------------- bad values


def nest(depth: int, kind: str = "list", leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        if kind == "list":
            value = [value]
        elif kind == "dict":
            value = {"k": value}
        elif kind == "tuple":
            value = (value,)
        else:  # alternate dicts and lists, with a sibling at every level
            value = {"k": value, "n": level} if level % 2 else [value, "x"]
    return value


def deep_values() -> dict[str, Callable[[], Any]]:
    """Acyclic values nested far beyond Python's recursion limit (fresh on every call)."""
    return {
        "list-2000": lambda: nest(DEEP, "list"),
        "dict-2000": lambda: nest(DEEP, "dict"),
        "tuple-2000": lambda: nest(DEEP, "tuple"),
        "mixed-2000": lambda: nest(DEEP, "mixed"),
        "list-10000": lambda: nest(10_000, "list"),
    }


def self_dict() -> Any:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def self_list() -> Any:
    value: list[Any] = [1]
    value.append(value)
    return value


def two_step() -> Any:
    a: dict[str, Any] = {"name": "a"}
    b: list[Any] = ["b", a]
    a["next"] = b
    return a


def cycle_below_deep() -> Any:
    inner: dict[str, Any] = {"leaf": True}
    inner["back"] = inner
    return nest(50, "dict", inner)


def long_cycle() -> Any:
    head: list[Any] = []
    tail = head
    for _ in range(1_500):  # longer than Python's recursion limit
        nxt: list[Any] = []
        tail.append(nxt)
        tail = nxt
    tail.append(head)
    return head


CYCLIC: dict[str, Callable[[], Any]] = {
    "self-dict": self_dict,
    "self-list": self_list,
    "two-step": two_step,
    "cycle-below-depth-50": cycle_below_deep,
    "cycle-of-1500": long_cycle,
}


def snapshot(value: Any) -> str:
    """A text form of an acyclic value of any depth (to check it was not modified)."""
    return encode_json(value, "value")


# --------------------------------------------------------------------------- runners


def run(evaluator: Callable[..., Any], is_async: bool, **kwargs: Any) -> Any:
    if is_async:
        return asyncio.run(evaluator(**kwargs))
    return evaluator(**kwargs)


SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])

STRING_EVALUATORS = {
    "exact_match": (exact_match, exact_match_async),
    "levenshtein": (levenshtein_distance, levenshtein_distance_async),
}


def json_match(is_async: bool, **options: Any) -> Callable[..., Any]:
    factory = create_async_json_match_evaluator if is_async else create_json_match_evaluator
    return factory(**options)


def trajectory_match(is_async: bool, **options: Any) -> Callable[..., Any]:
    if is_async:
        return create_async_trajectory_match_evaluator(**options)
    return create_trajectory_match_evaluator(**options)


def call_message(args: Any, form: str = "openai") -> dict[str, Any]:
    if form == "langchain":
        call: dict[str, Any] = {"name": "lookup", "args": args, "id": "1"}
    else:
        call = {"type": "function", "function": {"name": "lookup", "arguments": args}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


# --------------------------------------------------------------------------- exact / levenshtein


@SYNC_ASYNC
@pytest.mark.parametrize("name", sorted(STRING_EVALUATORS))
@pytest.mark.parametrize("case", sorted(deep_values()))
def test_string_evaluators_compare_deep_values(name: str, case: str, is_async: bool) -> None:
    evaluator = STRING_EVALUATORS[name][is_async]
    outputs, same, other = deep_values()[case](), deep_values()[case](), {"shallow": 1}
    before = snapshot(outputs)
    identical = run(evaluator, is_async, outputs=outputs, reference_outputs=same)
    different = run(evaluator, is_async, outputs=outputs, reference_outputs=other)
    assert identical["score"] in (True, 1.0)
    assert different["score"] in (False, 0.0) or different["score"] < 0.5
    assert snapshot(outputs) == before


@SYNC_ASYNC
@pytest.mark.parametrize("name", sorted(STRING_EVALUATORS))
@pytest.mark.parametrize("case", sorted(CYCLIC))
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_string_evaluators_reject_cycles(name: str, case: str, side: str, is_async: bool) -> None:
    evaluator = STRING_EVALUATORS[name][is_async]
    value = CYCLIC[case]()
    kwargs = {"outputs": {"a": 1}, "reference_outputs": {"a": 1}, side: value}
    with pytest.raises(ValueError, match=rf"^`{side}` contains itself: {side}.* refers back to"):
        run(evaluator, is_async, **kwargs)


def test_deep_text_is_the_json_text() -> None:
    # Below Python's limit the native encoder runs; the iterative one must give the same text.
    value = nest(400, "mixed", {"é": [1.5, None, True, math.inf]})
    assert _iterative_json(value, "v", sort_keys=True, ensure_ascii=True) == json.dumps(
        value, sort_keys=True
    )
    deep = nest(DEEP, "mixed", "leaf")
    text = encode_json(deep, "v")
    assert text.startswith('{"k": [{"k": [') and text.endswith('"x"], "n": 1999}')
    assert text.count("leaf") == 1


# --------------------------------------------------------------------------- JSON match


@SYNC_ASYNC
@pytest.mark.parametrize("case", sorted(deep_values()))
def test_json_match_compares_deep_values(case: str, is_async: bool) -> None:
    make = deep_values()[case]
    outputs = [{"id": 1, "payload": make()}, {"id": 2, "payload": "x"}]
    reference = [{"id": 2, "payload": "x"}, {"id": 1, "payload": make()}]
    before = snapshot(outputs)
    evaluator = json_match(is_async)
    assert run(evaluator, is_async, outputs=outputs, reference_outputs=reference) == [
        {"key": "json_match:id", "score": 1, "comment": None, "metadata": None},
        {"key": "json_match:payload", "score": 1, "comment": None, "metadata": None},
    ]
    single = run(
        evaluator, is_async, outputs={"p": make()}, reference_outputs={"p": nest(3, "list")}
    )
    assert single == [{"key": "json_match:p", "score": 0, "comment": None, "metadata": None}]
    assert snapshot(outputs) == before


@SYNC_ASYNC
@pytest.mark.parametrize("case", sorted(CYCLIC))
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_json_match_rejects_cycles(case: str, side: str, is_async: bool) -> None:
    records = {"outputs": [{"v": 1}, {"v": 2}], "reference_outputs": [{"v": 2}, {"v": 1}]}
    records[side] = [{"v": 1}, {"v": CYCLIC[case]()}]
    with pytest.raises(ValueError, match=rf"`{side}\[1\]` contains itself: {side}\[1\]\['v'\]"):
        run(json_match(is_async), is_async, **records)
    # dict inputs: two separately built cycles can only be compared by looking inside them
    value, twin = CYCLIC[case](), CYCLIC[case]()
    with pytest.raises(ValueError, match=r"contains itself"):
        run(json_match(is_async), is_async, outputs={"v": value}, reference_outputs={"v": twin})
    assert value is not twin


@SYNC_ASYNC
def test_json_match_rubric_prompt_renders_deep_and_rejects_cyclic(is_async: bool) -> None:
    from openevals.json._rubric import _value_lines

    deep = nest(DEEP, "list")
    assert _value_lines({"k": deep}, "outputs").startswith("k: [[[[")
    with pytest.raises(ValueError, match=r"`outputs\['k'\]` contains itself"):
        _value_lines({"k": self_list()}, "outputs")


# --------------------------------------------------------------------------- trajectory match

ARG_FORMS = ["dict", "json-text", "langchain-dict", "langchain-message"]


def trajectory_with(args: Any, form: str) -> list[Any]:
    if form == "json-text":
        return [call_message(json.dumps(args) if not isinstance(args, str) else args)]
    if form == "langchain-dict":
        return [call_message(args, "langchain")]
    if form == "langchain-message":
        return [AIMessage(content="", tool_calls=[{"name": "lookup", "args": args, "id": "1"}])]
    return [call_message(args)]


def deep_json_text(depth: int) -> str:
    return '{"q": ' + "[" * depth + '"x"' + "]" * depth + "}"


@SYNC_ASYNC
@pytest.mark.parametrize("form", ARG_FORMS)
@pytest.mark.parametrize(
    ("mode", "args_mode"),
    [("strict", "exact"), ("superset", "subset"), ("subset", "superset")],
)
def test_trajectory_match_compares_deep_arguments(
    form: str, mode: str, args_mode: str, is_async: bool
) -> None:
    evaluator = trajectory_match(
        is_async, trajectory_match_mode=mode, tool_args_match_mode=args_mode
    )
    if form == "json-text":
        out, same, other = deep_json_text(DEEP), deep_json_text(DEEP), deep_json_text(DEEP - 1)
    else:
        out, same, other = ({"q": nest(DEEP)}, {"q": nest(DEEP)}, {"q": nest(DEEP - 1)})
    outputs = trajectory_with(out, form)
    before = snapshot(out)
    hit = run(evaluator, is_async, outputs=outputs, reference_outputs=trajectory_with(same, form))
    miss = run(evaluator, is_async, outputs=outputs, reference_outputs=trajectory_with(other, form))
    assert hit["score"] is True
    assert miss["score"] is False
    assert "lookup(" in miss["comment"]
    assert snapshot(out) == before


@SYNC_ASYNC
@pytest.mark.parametrize("override", [["q"], "exact", "subset"])
def test_trajectory_overrides_compare_deep_arguments(override: Any, is_async: bool) -> None:
    evaluator = trajectory_match(
        is_async,
        trajectory_match_mode="unordered",
        tool_args_match_overrides={"lookup": override},
    )
    same = run(
        evaluator,
        is_async,
        outputs=[call_message({"q": nest(DEEP, "dict")})],
        reference_outputs=[call_message({"q": nest(DEEP, "dict")})],
    )
    assert same["score"] is True


@SYNC_ASYNC
@pytest.mark.parametrize("case", sorted(CYCLIC))
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
@pytest.mark.parametrize("args_mode", ["exact", "subset", "superset"])
def test_trajectory_match_rejects_cyclic_arguments(
    case: str, side: str, args_mode: str, is_async: bool
) -> None:
    evaluator = trajectory_match(
        is_async, trajectory_match_mode="unordered", tool_args_match_mode=args_mode
    )
    kwargs = {
        "outputs": [call_message({"q": 1})],
        "reference_outputs": [call_message({"q": 1})],
        side: [call_message({"q": CYCLIC[case]()})],
    }
    with pytest.raises(ValueError, match=rf"`{side}\[0\] tool call 'lookup' arguments.*contains"):
        run(evaluator, is_async, **kwargs)


# --------------------------------------------------------------------------- simulator


def _app_returning(message: Any) -> Callable[..., Any]:
    def app(message_in: Any, *, thread_id: str) -> Any:
        return message

    return app


SIM_BAD: dict[str, Callable[[], Any]] = {
    "deep-content-list": lambda: {"role": "assistant", "content": nest(DEEP)},
    "deep-content-dict": lambda: {"role": "assistant", "content": nest(DEEP, "dict")},
    "deep-tool-args": lambda: call_message(nest(DEEP, "dict")),
    "just-over-limit": lambda: {"role": "assistant", "content": nest(MAX_DEPTH, "list")},
    "cyclic-content": lambda: {"role": "assistant", "content": self_dict()},
    "cyclic-list-content": lambda: {"role": "assistant", "content": self_list()},
    "cyclic-message": lambda: two_step(),
    "deep-langchain": lambda: AIMessage(
        content="", tool_calls=[{"name": "lookup", "args": {"q": nest(DEEP)}, "id": "1"}]
    ),
}


@SYNC_ASYNC
@pytest.mark.parametrize("case", sorted(SIM_BAD))
def test_simulator_rejects_cyclic_or_too_deep_app_replies(case: str, is_async: bool) -> None:
    runner = run_multiturn_simulation_async if is_async else run_multiturn_simulation
    reply = SIM_BAD[case]()
    with pytest.raises(ValueError, match=r"the app at turn 1 \(message 0\)") as caught:
        run(runner, is_async, app=_app_returning(reply), user=["hi"], max_turns=1)
    text = str(caught.value)
    assert ("contains itself" in text) or (f"{MAX_DEPTH} levels" in text), text


@SYNC_ASYNC
def test_simulator_rejects_deep_fixed_user_replies(is_async: bool) -> None:
    runner = run_multiturn_simulation_async if is_async else run_multiturn_simulation
    bad = {"role": "user", "content": nest(DEEP, "dict")}
    with pytest.raises(ValueError, match=r"the user at turn 1 .*`user_reply\[0\]` is nested"):
        run(runner, is_async, app=_app_returning("ok"), user=[bad], max_turns=1)


@SYNC_ASYNC
def test_simulator_records_messages_up_to_the_limit(is_async: bool) -> None:
    runner = run_multiturn_simulation_async if is_async else run_multiturn_simulation
    reply = {"role": "assistant", "content": nest(MAX_DEPTH - 1, "list", "deep")}
    before = snapshot(reply)
    result = run(runner, is_async, app=_app_returning(reply), user=["hi"], max_turns=1)
    assert result["trajectory"][-1]["content"] == reply["content"]
    assert snapshot(reply) == before


# --------------------------------------------------------------------------- properties

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=25)
@given(value=_JSON, depth=st.integers(0, 2_500), kind=st.sampled_from(["list", "dict", "mixed"]))
def test_any_depth_is_compared_like_python(value: Any, depth: int, kind: str) -> None:
    deep = nest(depth, kind, [value])
    twin = nest(depth, kind, [value])
    assert exact_match(outputs=deep, reference_outputs=twin)["score"] is True
    assert equal(deep, twin, "a", "b") is _iterative_equal(deep, twin)
    text = encode_json(deep, "v")
    assert encode_json(load_json(text), "v") == text


@settings(max_examples=60)
@given(value=_JSON, sort_keys=st.booleans(), ascii_only=st.booleans())
def test_iterative_json_matches_the_c_encoder(
    value: Any, sort_keys: bool, ascii_only: bool
) -> None:
    expected = json.dumps(value, sort_keys=sort_keys, ensure_ascii=ascii_only)
    assert _iterative_json(value, "v", sort_keys=sort_keys, ensure_ascii=ascii_only) == expected
    assert json.dumps(_iterative_loads(expected)) == json.dumps(json.loads(expected))


@settings(max_examples=80)
@given(text=st.text(alphabet='[]{}",: 0123456789.-eEtrufalsnNIiy\\', max_size=20))
def test_iterative_parser_accepts_and_rejects_like_json_loads(text: str) -> None:
    try:
        expected: Any = json.dumps(json.loads(text))
    except ValueError:
        expected = ValueError
    try:
        got: Any = json.dumps(_iterative_loads(text))
    except ValueError:
        got = ValueError
    assert got == expected


@settings(max_examples=60)
@given(left=_JSON, right=_JSON)
def test_iterative_equality_is_python_equality(left: Any, right: Any) -> None:
    assert _iterative_equal(left, right) == (left == right)
    assert _iterative_equal(left, left) == (left == left)


@settings(max_examples=40)
@given(
    value=_JSON,
    depth=st.integers(1, 40),
    where=st.sampled_from(["dict", "list"]),
    evaluator=st.sampled_from(["exact", "levenshtein", "json", "trajectory"]),
)
def test_a_planted_cycle_is_always_named(
    value: Any, depth: int, where: str, evaluator: str
) -> None:
    container: Any = {"v": value} if where == "dict" else [value]
    root = nest(depth, "mixed", container)
    if where == "dict":
        container["loop"] = root
    else:
        container.append(root)
    with pytest.raises(ValueError, match="contains itself") as caught:
        if evaluator == "exact":
            exact_match(outputs=root, reference_outputs=1)
        elif evaluator == "levenshtein":
            levenshtein_distance(outputs=root, reference_outputs="x")
        elif evaluator == "json":
            create_json_match_evaluator()(outputs=[{"r": root}], reference_outputs=[{"r": 1}])
        else:
            create_trajectory_match_evaluator(trajectory_match_mode="unordered")(
                outputs=[call_message({"r": root})], reference_outputs=[call_message({"r": 1})]
            )
    assert "outputs" in str(caught.value)


def test_check_reports_depth_with_the_limit_and_a_short_path() -> None:
    with pytest.raises(ValueError) as caught:
        check(nest(DEEP, "dict"), "outputs", max_depth=MAX_DEPTH)
    text = str(caught.value)
    assert f"more than {MAX_DEPTH} levels" in text
    assert "more levels" in text and len(text) < 400
    check(nest(MAX_DEPTH - 1, "dict"), "outputs", max_depth=MAX_DEPTH)  # within the limit


def test_iterative_equality_of_a_scalar_is_its_own_comparison() -> None:
    nan = float("nan")
    assert _iterative_equal(nan, nan) is False
    assert _iterative_equal([nan], [nan]) == ([nan] == [nan])
    same = [nan]
    assert _iterative_equal(same, same) == (same == same)
