"""Property tests: the trajectory matcher against a brute-force reference and its invariants."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from openevals import create_async_trajectory_match_evaluator, create_trajectory_match_evaluator
from tests.trajectory.match_helpers import (
    ARG_MATCHERS,
    Call,
    brute_strict,
    brute_verdict,
    trajectory,
)

MODES = ("strict", "unordered", "subset", "superset")
FLAT_MODES = ("unordered", "subset", "superset")
ARGS_MODES = ("exact", "ignore", "subset", "superset")

PROPERTY_SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

_EVALUATORS: dict[tuple[str, str], Any] = {}


def verdict(mode: str, args_mode: str, outputs: Any, reference_outputs: Any) -> bool:
    key = (mode, args_mode)
    if key not in _EVALUATORS:
        _EVALUATORS[key] = create_trajectory_match_evaluator(
            trajectory_match_mode=mode,  # type: ignore[arg-type]
            tool_args_match_mode=args_mode,  # type: ignore[arg-type]
        )
    result = _EVALUATORS[key](outputs=outputs, reference_outputs=reference_outputs)
    assert (result["comment"] is None) is result["score"]
    return bool(result["score"])


# Few names, keys and values so that calls collide, contain each other and repeat.
values = st.one_of(
    st.integers(0, 2),
    st.sampled_from(["s", "t"]),
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 1), max_size=2),
    st.fixed_dictionaries({"n": st.integers(0, 1)}),
)
args_st = st.dictionaries(st.sampled_from(["x", "y", "z"]), values, max_size=3)
call_st = st.tuples(st.sampled_from(["a", "b", "c"]), args_st)
calls_st = st.lists(call_st, max_size=5)
groups_st = st.lists(st.lists(call_st, min_size=0, max_size=3), max_size=3)


def flat(groups: list[list[Call]]) -> list[Call]:
    return [c for g in groups for c in g]


def regroup(calls: list[Call], sizes: list[int]) -> list[list[Call]]:
    """Split ``calls`` into consecutive groups using ``sizes`` (the rest goes into a last group)."""
    groups, start = [], 0
    for size in sizes:
        groups.append(calls[start : start + size])
        start += size
    groups.append(calls[start:])
    return [g for g in groups if g]


@st.composite
def related_call_lists(draw: st.DrawFn) -> tuple[list[Call], list[Call]]:
    """A pair of call lists that is often related (shared, dropped, extra or mutated calls)."""
    base = draw(calls_st)
    out = [c for c in base if draw(st.integers(0, 5))]  # drop some
    ref = [c for c in base if draw(st.integers(0, 5))]
    out += draw(st.lists(call_st, max_size=2))
    ref += draw(st.lists(call_st, max_size=2))
    out = draw(st.permutations(out))
    return list(out), list(ref)


@given(pair=related_call_lists(), sizes=st.lists(st.integers(1, 3), max_size=3))
@PROPERTY_SETTINGS
def test_flat_modes_agree_with_brute_force(
    pair: tuple[list[Call], list[Call]], sizes: list[int]
) -> None:
    out_calls, ref_calls = pair
    outputs = trajectory(regroup(out_calls, sizes))
    reference = trajectory([ref_calls])
    for mode in FLAT_MODES:
        for args_mode in ARGS_MODES:
            expected = brute_verdict(mode, out_calls, ref_calls, ARG_MATCHERS[args_mode])
            assert verdict(mode, args_mode, outputs, reference) is expected, (mode, args_mode)


# Arguments that are subsets of one small item set: containment relations everywhere, which is
# where first-fit matching goes wrong.
nested_args = st.sets(st.sampled_from(["w", "x", "y", "z"]), max_size=4).map(
    lambda keys: {k: 1 for k in sorted(keys)}
)
nested_call = st.tuples(st.just("t"), nested_args)


@given(out=st.lists(nested_call, max_size=6), ref=st.lists(nested_call, max_size=6))
@PROPERTY_SETTINGS
def test_containment_modes_agree_with_brute_force(out: list[Call], ref: list[Call]) -> None:
    outputs, reference = trajectory([out]), trajectory([ref])
    for mode in FLAT_MODES:
        for args_mode in ("subset", "superset"):
            expected = brute_verdict(mode, out, ref, ARG_MATCHERS[args_mode])
            assert verdict(mode, args_mode, outputs, reference) is expected, (mode, args_mode)


@st.composite
def related_groups(draw: st.DrawFn) -> tuple[list[list[Call]], list[list[Call]]]:
    out = draw(groups_st)
    if draw(st.booleans()):
        return out, draw(groups_st)
    ref = []
    for group in out:
        group = list(draw(st.permutations(group)))
        if group and draw(st.integers(0, 3)) == 0:
            group[draw(st.integers(0, len(group) - 1))] = draw(call_st)
        ref.append(group)
    return out, ref


@given(pair=related_groups())
@PROPERTY_SETTINGS
def test_strict_agrees_with_brute_force(pair: tuple[list[list[Call]], list[list[Call]]]) -> None:
    out_groups, ref_groups = pair
    outputs, reference = trajectory(out_groups), trajectory(ref_groups)
    for args_mode in ARGS_MODES:
        expected = brute_strict(out_groups, ref_groups, ARG_MATCHERS[args_mode])
        assert verdict("strict", args_mode, outputs, reference) is expected, args_mode


@given(
    pair=related_call_lists(),
    data=st.data(),
    sizes=st.lists(st.integers(1, 3), max_size=3),
)
@PROPERTY_SETTINGS
def test_permuting_output_calls_changes_nothing(
    pair: tuple[list[Call], list[Call]], data: st.DataObject, sizes: list[int]
) -> None:
    out_calls, ref_calls = pair
    permuted = list(data.draw(st.permutations(out_calls)))
    reference = trajectory([ref_calls])
    for mode in FLAT_MODES:
        for args_mode in ARGS_MODES:
            a = verdict(mode, args_mode, trajectory([out_calls]), reference)
            b = verdict(mode, args_mode, trajectory(regroup(permuted, sizes)), reference)
            assert a is b, (mode, args_mode)


@given(pair=related_call_lists())
@PROPERTY_SETTINGS
def test_unordered_is_subset_and_superset(pair: tuple[list[Call], list[Call]]) -> None:
    outputs, reference = trajectory([pair[0]]), trajectory([pair[1]])
    for args_mode in ARGS_MODES:
        unordered = verdict("unordered", args_mode, outputs, reference)
        both = verdict("subset", args_mode, outputs, reference) and verdict(
            "superset", args_mode, outputs, reference
        )
        assert unordered is both, args_mode


@given(pair=related_call_lists())
@PROPERTY_SETTINGS
def test_subset_and_superset_are_duals(pair: tuple[list[Call], list[Call]]) -> None:
    outputs, reference = trajectory([pair[0]]), trajectory([pair[1]])
    dual_args = {"exact": "exact", "ignore": "ignore", "subset": "superset", "superset": "subset"}
    for args_mode, dual in dual_args.items():
        assert verdict("subset", args_mode, outputs, reference) is verdict(
            "superset", dual, reference, outputs
        ), args_mode


@given(groups=groups_st)
@PROPERTY_SETTINGS
def test_a_trajectory_always_matches_itself(groups: list[list[Call]]) -> None:
    traj = trajectory(groups)
    for mode in MODES:
        for args_mode in ARGS_MODES:
            assert verdict(mode, args_mode, traj, traj), (mode, args_mode)
            assert verdict(mode, args_mode, traj, copy.deepcopy(traj)), (mode, args_mode)


# --------------------------------------------------------------------------- overrides


def near(o: dict[str, Any], r: dict[str, Any]) -> bool:
    """Not transitive: a greedy first-fit matcher gets this wrong."""
    return abs(o.get("n", 0) - r.get("n", 0)) <= 1


def same_x_path(o: dict[str, Any], r: dict[str, Any]) -> bool:
    """Reference semantics of the field-path override ``["x", "y.n"]``."""

    def get(d: dict[str, Any], path: list[str]) -> Any:
        for part in path:
            if not isinstance(d, dict) or part not in d:
                raise KeyError(part)
            d = d[part]
        return d

    try:
        return all(get(o, p) == get(r, p) for p in (["x"], ["y", "n"]))
    except KeyError:
        return False


near_call = st.tuples(st.sampled_from(["a", "b"]), st.fixed_dictionaries({"n": st.integers(0, 4)}))
path_values = st.one_of(st.integers(0, 1), st.fixed_dictionaries({"n": st.integers(0, 1)}))
path_call = st.tuples(
    st.sampled_from(["a", "b"]),
    st.dictionaries(st.sampled_from(["x", "y", "z"]), path_values, max_size=3),
)


@given(
    out=st.lists(near_call, max_size=5),
    ref=st.lists(near_call, max_size=5),
)
@PROPERTY_SETTINGS
def test_comparator_overrides_agree_with_brute_force(out: list[Call], ref: list[Call]) -> None:
    for mode in FLAT_MODES:
        evaluator = create_trajectory_match_evaluator(
            trajectory_match_mode=mode,  # type: ignore[arg-type]
            tool_args_match_overrides={"a": near, "b": near},
        )
        result = evaluator(outputs=trajectory([out]), reference_outputs=trajectory([ref]))
        assert result["score"] is brute_verdict(mode, out, ref, near), mode


@given(out=st.lists(path_call, max_size=5), ref=st.lists(path_call, max_size=5))
@PROPERTY_SETTINGS
def test_path_overrides_agree_with_brute_force(out: list[Call], ref: list[Call]) -> None:
    for mode in FLAT_MODES:
        evaluator = create_trajectory_match_evaluator(
            trajectory_match_mode=mode,  # type: ignore[arg-type]
            tool_args_match_overrides={"a": ["x", "y.n"], "b": ["x", "y.n"]},
        )
        result = evaluator(outputs=trajectory([out]), reference_outputs=trajectory([ref]))
        assert result["score"] is brute_verdict(mode, out, ref, same_x_path), mode


# --------------------------------------------------------------------------- input forms, async


def as_langchain(messages: list[dict[str, Any]]) -> list[Any]:
    converted: list[Any] = []
    for m in messages:
        if m["role"] == "user":
            converted.append(HumanMessage(m["content"]))
        elif m["role"] == "tool":
            converted.append(ToolMessage(m["content"], tool_call_id="x"))
        else:
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"]),
                    "id": f"id{i}",
                }
                for i, c in enumerate(m.get("tool_calls") or [])
            ]
            converted.append(AIMessage(content=m["content"], tool_calls=calls))
    return converted


@given(pair=related_groups())
@settings(max_examples=40, deadline=None)
def test_langchain_messages_give_the_same_verdicts(
    pair: tuple[list[list[Call]], list[list[Call]]],
) -> None:
    outputs, reference = trajectory(pair[0]), trajectory(pair[1])
    lc_outputs = as_langchain(outputs)
    for mode in MODES:
        for args_mode in ARGS_MODES:
            expected = verdict(mode, args_mode, outputs, reference)
            assert verdict(mode, args_mode, lc_outputs, reference) is expected
            assert verdict(mode, args_mode, {"messages": lc_outputs}, reference) is expected


@given(pair=related_groups())
@settings(max_examples=40, deadline=None)
def test_async_evaluators_agree_with_sync(
    pair: tuple[list[list[Call]], list[list[Call]]],
) -> None:
    outputs, reference = trajectory(pair[0]), trajectory(pair[1])

    async def run_all() -> list[Any]:
        results = []
        for mode in MODES:
            for args_mode in ARGS_MODES:
                evaluator = create_async_trajectory_match_evaluator(
                    trajectory_match_mode=mode,  # type: ignore[arg-type]
                    tool_args_match_mode=args_mode,  # type: ignore[arg-type]
                )
                results.append(await evaluator(outputs=outputs, reference_outputs=reference))
        return results

    expected = [
        create_trajectory_match_evaluator(
            trajectory_match_mode=mode,  # type: ignore[arg-type]
            tool_args_match_mode=args_mode,  # type: ignore[arg-type]
        )(outputs=outputs, reference_outputs=reference)
        for mode in MODES
        for args_mode in ARGS_MODES
    ]
    assert asyncio.run(run_all()) == expected


# --------------------------------------------------------------------------- fast path == normalizer


@st.composite
def mixed_form_messages(draw: st.DrawFn) -> list[Any]:
    """Messages in the many accepted spellings (dict roles, aliases, both tool-call forms)."""
    messages: list[Any] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["user", "human", "tool", "assistant", "ai", "lc_ai", "typed"]))
        if kind in ("user", "human", "tool"):
            messages.append({"role": kind, "content": draw(st.sampled_from(["x", None]))})
        elif kind == "typed":
            messages.append({"type": "human", "content": "x"})
        else:
            calls = draw(st.lists(call_st, max_size=3))
            if kind == "lc_ai":
                messages.append(
                    AIMessage(
                        "",
                        tool_calls=[
                            {"name": n, "args": a, "id": f"i{i}"} for i, (n, a) in enumerate(calls)
                        ],
                    )
                )
                continue
            forms = []
            for name, args in calls:
                form = draw(st.sampled_from(["openai_str", "openai_dict", "langchain"]))
                if form == "openai_str":
                    forms.append({"function": {"name": name, "arguments": json.dumps(args)}})
                elif form == "openai_dict":
                    forms.append({"function": {"name": name, "arguments": args}})
                else:
                    forms.append({"name": name, "args": args})
            message: dict[str, Any] = {"role": kind, "content": ""}
            if forms or draw(st.booleans()):
                message["tool_calls"] = forms
            messages.append(message)
    return messages


@given(messages=mixed_form_messages(), container=st.booleans())
@settings(max_examples=80, deadline=None)
def test_direct_reading_agrees_with_the_shared_normalizer(
    messages: list[Any], container: bool
) -> None:
    from openevals._messages import normalize_to_openai_messages_list
    from openevals.trajectory.match import parse_trajectory

    snapshot = copy.deepcopy(messages)
    value: Any = {"messages": messages} if container else messages
    direct = parse_trajectory(value, "outputs")
    via_normalizer = parse_trajectory(normalize_to_openai_messages_list(value), "outputs")
    assert [(m.role, [(c.name, c.args) for c in m.calls]) for m in direct] == [
        (m.role, [(c.name, c.args) for c in m.calls]) for m in via_normalizer
    ]
    assert messages == snapshot
