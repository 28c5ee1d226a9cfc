"""Graph trajectories matched by mode (agentevals #49): strict, unordered, subset, superset."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openevals.graph_trajectory import (
    create_async_graph_trajectory_match_evaluator,
    create_graph_trajectory_match_evaluator,
    graph_trajectory_strict_match,
)

MODES = ("strict", "unordered", "subset", "superset")
REFERENCE = {"results": [], "steps": [["__start__", "agent", "tools", "agent"], ["agent"]]}


def _score(mode: str, steps: list[list[str]], reference: Any = REFERENCE) -> dict[str, Any]:
    evaluator = create_graph_trajectory_match_evaluator(trajectory_match_mode=mode)  # type: ignore[arg-type]
    result: dict[str, Any] = evaluator(outputs={"steps": steps}, reference_outputs=reference)
    return result


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([["__start__", "agent", "tools", "agent"], ["agent"]], (True, True, True, True)),
        ([["agent", "__start__", "agent", "tools"], ["agent"]], (False, True, True, True)),
        ([["__start__", "agent"], ["agent"]], (False, False, True, False)),
        (
            [["__start__", "agent", "tools", "agent", "search"], ["agent"]],
            (False, False, False, True),
        ),
        ([["__start__", "agent", "tools"], ["agent", "search"]], (False, False, False, False)),
    ],
    ids=["same", "reordered", "fewer", "more", "swapped"],
)
def test_each_mode(steps: list[list[str]], expected: tuple[bool, ...]) -> None:
    got = tuple(_score(mode, steps)["score"] for mode in MODES)
    assert got == expected
    assert [_score(m, steps)["key"] for m in MODES] == [
        f"graph_trajectory_{m}_match" for m in MODES
    ]


def test_comments_name_the_turn_and_the_nodes() -> None:
    fewer = _score("superset", [["__start__", "agent"], ["agent"]])
    assert fewer["comment"] == "turn 0 lacks reference nodes: 'agent', 'tools'"
    more = _score("subset", [["__start__", "agent", "agent", "agent", "tools"], ["agent"]])
    assert more["comment"] == "turn 0 has nodes not in the reference: 'agent'"
    turns = _score("unordered", [["agent"]])
    assert turns["comment"] == "1 turn(s) in outputs, 2 in reference_outputs"
    assert _score("unordered", REFERENCE["steps"])["comment"] is None


def test_strict_mode_is_the_strict_match() -> None:
    steps = [["__start__", "tools"], ["agent"]]
    assert (
        _score("strict", steps)["score"]
        == (
            graph_trajectory_strict_match(outputs={"steps": steps}, reference_outputs=REFERENCE)[
                "score"
            ]
        )
    )


def test_bad_mode_and_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="trajectory_match_mode must be one of"):
        create_graph_trajectory_match_evaluator(trajectory_match_mode="loose")  # type: ignore[arg-type]
    evaluator = create_graph_trajectory_match_evaluator(trajectory_match_mode="subset")
    with pytest.raises(ValueError, match="reference_outputs"):
        evaluator(outputs={"steps": []}, reference_outputs=None)
    with pytest.raises(TypeError, match="outputs"):
        evaluator(outputs=["agent"], reference_outputs=REFERENCE)


def test_async_twin_gives_the_same_results() -> None:
    for mode in MODES:
        evaluator = create_async_graph_trajectory_match_evaluator(trajectory_match_mode=mode)  # type: ignore[arg-type]
        steps = [["__start__", "agent"], ["agent"]]
        got = asyncio.run(evaluator(outputs={"steps": steps}, reference_outputs=REFERENCE))
        assert got == _score(mode, steps)


NODES = st.sampled_from(["a", "b", "c", "__start__"])
THREADS = st.lists(st.lists(NODES, max_size=6), min_size=1, max_size=3)


@given(THREADS, THREADS)
def test_mode_relations(output: list[list[str]], reference: list[list[str]]) -> None:
    ref = {"steps": reference}
    score = {mode: _score(mode, output, ref)["score"] for mode in MODES}
    assert score["unordered"] == (score["subset"] and score["superset"])
    if score["strict"]:
        assert score["unordered"]
    assert (
        _score("subset", output, ref)["score"]
        == _score("superset", reference, {"steps": output})["score"]
    )


@given(THREADS, st.randoms(use_true_random=False))
def test_unordered_ignores_order_within_turns(thread: list[list[str]], rng: random.Random) -> None:
    shuffled = [rng.sample(turn, len(turn)) for turn in thread]
    assert all(_score(mode, shuffled, {"steps": thread})["score"] for mode in MODES[1:])


def _deep(depth: int) -> Any:
    node: Any = "leaf"
    for _ in range(depth):
        node = [node]
    return node


def test_deep_and_cyclic_nodes_are_compared_without_recursion() -> None:
    """issue 43: a 2,000-deep or self-containing step raised RecursionError."""
    deep = {"steps": [["agent", _deep(3000)]]}
    for mode in MODES:
        assert _score(mode, deep["steps"], deep)["score"] is True
    assert graph_trajectory_strict_match(outputs=deep, reference_outputs=deep)["score"] is True
    other = {"steps": [["agent", _deep(2999)]]}
    assert graph_trajectory_strict_match(outputs=deep, reference_outputs=other)["score"] is False
    cyclic: list[Any] = ["agent"]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match=r"outputs\['steps'\]\[0\]\[1\]"):
        graph_trajectory_strict_match(outputs={"steps": [cyclic]}, reference_outputs=deep)
    with pytest.raises(ValueError, match="reference_outputs"):
        _score("unordered", [["agent"]], {"steps": [cyclic]})
