"""graph_trajectory_strict_match: agentevals' case on a real interrupted/resumed thread, plus
mismatches, shapes and the async twin."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.types import Command

from openevals.graph_trajectory import (
    extract_langgraph_trajectory_from_thread,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)
from openevals.testing import FakeOpenAIServer, chat_model
from tests.graph_trajectory.graphs import interrupting_search, react_agent

CONFIG = {"configurable": {"thread_id": "1"}}


def _thread(server: FakeOpenAIServer) -> Any:
    server.queue_chat(tool_calls=[{"name": "search", "arguments": {"query": "weather in sf"}}])
    server.queue_chat("It is rainy and 70 degrees in SF.")
    graph = react_agent(chat_model(server), [interrupting_search()])
    graph.invoke({"messages": [{"role": "user", "content": "what's the weather in sf?"}]}, CONFIG)
    graph.invoke(Command(resume="It is rainy and 70 degrees!"), CONFIG)
    return extract_langgraph_trajectory_from_thread(graph, CONFIG)


def test_agentevals_case_matches(fake_openai: FakeOpenAIServer) -> None:
    extracted = _thread(fake_openai)
    reference = {
        "results": [],
        "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]],
    }
    before = copy.deepcopy(reference)
    result = graph_trajectory_strict_match(
        outputs=extracted["outputs"], reference_outputs=reference
    )
    assert result == {
        "key": "graph_trajectory_strict_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    assert reference == before
    assert (
        asyncio.run(
            graph_trajectory_strict_match_async(
                outputs=extracted["outputs"], reference_outputs=reference
            )
        )
        == result
    )


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([["__start__", "agent", "tools", "__interrupt__"]], "1 turn(s) in outputs, 2 in"),
        ([["__start__", "agent", "__interrupt__", "tools"], ["agent"]], "turn 0 differs"),
        ([["__start__", "agent", "tools", "__interrupt__"], ["agent", "tools"]], "turn 1 differs"),
    ],
)
def test_mismatches_fail_with_the_turn_named(steps: list[list[str]], words: str) -> None:
    reference = {"steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]}
    result = graph_trajectory_strict_match(
        outputs={"results": [], "steps": steps}, reference_outputs=reference
    )
    assert result["score"] is False
    assert words in result["comment"]


def test_bad_shapes_raise() -> None:
    good = {"steps": [["a"]]}
    with pytest.raises(ValueError, match="needs both"):
        graph_trajectory_strict_match(outputs=None, reference_outputs=good)
    with pytest.raises(TypeError, match="`reference_outputs` must be a graph trajectory"):
        graph_trajectory_strict_match(outputs=good, reference_outputs=[["a"]])
    with pytest.raises(TypeError, match=r"`outputs\['steps'\]\[0\]`"):
        graph_trajectory_strict_match(outputs={"steps": ["a"]}, reference_outputs=good)
    with pytest.raises(ValueError, match="needs both"):
        asyncio.run(graph_trajectory_strict_match_async(outputs=good, reference_outputs=None))


_turns = st.lists(st.lists(st.sampled_from(["__start__", "agent", "tools", "x:y"]), max_size=4))


@settings(max_examples=80, deadline=None)
@given(a=_turns, b=_turns)
def test_property_strict_match_is_equality_of_steps(a: list[list[str]], b: list[list[str]]) -> None:
    result = graph_trajectory_strict_match(
        outputs={"results": [], "steps": a}, reference_outputs={"results": [1], "steps": b}
    )
    assert result["score"] is (a == b)
    assert (
        graph_trajectory_strict_match(outputs={"steps": a}, reference_outputs={"steps": a})["score"]
        is True
    )
