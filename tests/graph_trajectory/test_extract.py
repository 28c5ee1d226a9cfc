"""Extraction of graph trajectories from real LangGraph threads (in-memory checkpointer), with
agentevals' cases and expected results, interrupts and resumed threads included."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from langgraph.types import Command

from openevals.exact import exact_match
from openevals.graph_trajectory import (
    aextract_langgraph_trajectory_from_thread,
    extract_langgraph_trajectory_from_snapshots,
    extract_langgraph_trajectory_from_thread,
)
from openevals.testing import FakeOpenAIServer, chat_model
from tests.graph_trajectory.graphs import (
    NESTED_EXPECTED,
    interrupting_search,
    nested_interrupt_graph,
    react_agent,
)

CONFIG = {"configurable": {"thread_id": "1"}}
QUESTION = {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}


def test_nested_subgraph_interrupt_matches_agentevals() -> None:
    app = nested_interrupt_graph()
    app.invoke({"my_key": ""}, CONFIG)
    final = app.invoke(None, CONFIG)
    assert final == {"my_key": "got here and there and parallel and back again"}
    extracted = extract_langgraph_trajectory_from_thread(app, CONFIG)
    assert extracted == NESTED_EXPECTED
    assert exact_match(outputs=extracted, reference_outputs=NESTED_EXPECTED)["score"] is True


def test_nested_subgraph_interrupt_async_matches_agentevals() -> None:
    async def run() -> Any:
        app = nested_interrupt_graph()
        await app.ainvoke({"my_key": ""}, CONFIG)
        await app.ainvoke(None, CONFIG)
        return await aextract_langgraph_trajectory_from_thread(app, CONFIG)

    assert asyncio.run(run()) == NESTED_EXPECTED


def _weather_agent(server: FakeOpenAIServer) -> Any:
    server.queue_chat(tool_calls=[{"name": "search", "arguments": {"query": "weather in sf"}}])
    server.queue_chat("It is rainy and 70 degrees in SF.")
    return react_agent(chat_model(server), [interrupting_search()])


EXPECTED_REACT_STEPS = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]


def test_react_agent_interrupted_and_resumed(fake_openai: FakeOpenAIServer) -> None:
    graph = _weather_agent(fake_openai)
    graph.invoke(QUESTION, CONFIG)
    halfway = extract_langgraph_trajectory_from_thread(graph, CONFIG)
    assert halfway["outputs"]["steps"] == [["__start__", "agent", "tools", "__interrupt__"]]
    assert halfway["outputs"]["results"] == [{}]
    graph.invoke(Command(resume="It is rainy and 70 degrees!"), CONFIG)
    extracted = extract_langgraph_trajectory_from_thread(graph, CONFIG)
    assert extracted == {
        "inputs": [{"__start__": QUESTION}, "__resuming__"],
        "outputs": {
            "inputs": [],
            "results": [
                {},
                {
                    "messages": [
                        {"role": "assistant", "content": "It is rainy and 70 degrees in SF."}
                    ]
                },
            ],
            "steps": EXPECTED_REACT_STEPS,
        },
    }


def test_react_agent_async_extraction_equals_sync(fake_openai: FakeOpenAIServer) -> None:
    graph = _weather_agent(fake_openai)

    async def run() -> Any:
        await graph.ainvoke(QUESTION, CONFIG)
        await graph.ainvoke(Command(resume="It is rainy and 70 degrees!"), CONFIG)
        return await aextract_langgraph_trajectory_from_thread(graph, CONFIG)

    extracted = asyncio.run(run())
    assert extracted == extract_langgraph_trajectory_from_thread(graph, CONFIG)
    assert extracted["outputs"]["steps"] == EXPECTED_REACT_STEPS


def test_several_turns_without_interrupts(fake_openai: FakeOpenAIServer) -> None:
    from langchain_core.tools import tool

    @tool
    def lookup(city: str) -> str:
        """Look up the weather."""
        return f"sunny in {city}"

    fake_openai.queue_chat(tool_calls=[{"name": "lookup", "arguments": {"city": "SF"}}])
    fake_openai.queue_chat("Sunny in SF.")
    fake_openai.queue_chat("You're welcome.")
    graph = react_agent(chat_model(fake_openai), [lookup])
    graph.invoke(QUESTION, CONFIG)
    graph.invoke({"messages": [{"role": "user", "content": "thanks"}]}, CONFIG)
    extracted = extract_langgraph_trajectory_from_thread(graph, CONFIG)
    assert extracted["outputs"]["steps"] == [
        ["__start__", "agent", "tools", "agent"],
        ["__start__", "agent"],
    ]
    assert extracted["inputs"] == [
        {"__start__": QUESTION},
        {"__start__": {"messages": [{"role": "user", "content": "thanks"}]}},
    ]
    assert [r["messages"][0]["content"] for r in extracted["outputs"]["results"]] == [
        "Sunny in SF.",
        "You're welcome.",
    ]


def test_state_without_messages_is_the_result() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        n: int

    builder = StateGraph(State)
    builder.add_node("double", lambda s: {"n": s["n"] * 2})
    builder.set_entry_point("double")
    builder.set_finish_point("double")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"n": 2}, CONFIG)
    assert extract_langgraph_trajectory_from_thread(graph, CONFIG) == {
        "inputs": [{"__start__": {"n": 2}}],
        "outputs": {"inputs": [], "results": [{"n": 4}], "steps": [["__start__", "double"]]},
    }


def test_unknown_thread_is_empty_and_bad_arguments_raise() -> None:
    graph = nested_interrupt_graph()
    empty = extract_langgraph_trajectory_from_thread(graph, {"configurable": {"thread_id": "x"}})
    assert empty == {"inputs": [], "outputs": {"inputs": [], "results": [], "steps": []}}
    with pytest.raises(TypeError, match="`graph` must be a compiled LangGraph graph"):
        extract_langgraph_trajectory_from_thread(object(), CONFIG)
    with pytest.raises(TypeError, match="`config` must be the thread's config"):
        extract_langgraph_trajectory_from_thread(graph, {"thread_id": "1"})
    with pytest.raises(TypeError, match="`config`"):
        asyncio.run(aextract_langgraph_trajectory_from_thread(graph, None))
    # issue 43: a config without thread_id raised a bare KeyError: 'thread_id'.
    with pytest.raises(ValueError, match="has no 'thread_id'"):
        extract_langgraph_trajectory_from_thread(graph, {"configurable": {}})
    with pytest.raises(ValueError, match="has no 'thread_id'"):
        asyncio.run(aextract_langgraph_trajectory_from_thread(graph, {"configurable": {}}))


def test_misaligned_snapshots_warn() -> None:
    graph = nested_interrupt_graph()
    graph.invoke({"my_key": ""}, CONFIG)
    graph.invoke(None, CONFIG)
    history = list(graph.get_state_history(CONFIG))
    # Only the newest snapshot: a finished turn whose input checkpoint is missing.
    with pytest.warns(UserWarning, match="inputs and results have different lengths"):
        extracted = extract_langgraph_trajectory_from_snapshots(history[:1])
    assert extracted["outputs"]["results"] == [NESTED_EXPECTED["outputs"]["results"][1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        extract_langgraph_trajectory_from_thread(graph, CONFIG)
