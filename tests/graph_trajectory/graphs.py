"""Small real LangGraph graphs with an in-memory checkpointer, for the graph-trajectory tests."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict


class InnerState(TypedDict):
    my_key: Annotated[str, operator.add]
    my_other_key: str


class OuterState(TypedDict):
    my_key: Annotated[str, operator.add]


def nested_interrupt_graph() -> Any:
    """An outer graph running a subgraph (which stops before its second node) in parallel with
    a plain node, then a final node."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import StateGraph

    def inner_1(state: InnerState) -> dict[str, Any]:
        return {"my_key": "got here", "my_other_key": state["my_key"]}

    def inner_2(state: InnerState) -> dict[str, Any]:
        return {"my_key": " and there", "my_other_key": state["my_key"]}

    inner = StateGraph(InnerState)
    inner.add_node("inner_1", inner_1)
    inner.add_node("inner_2", inner_2)
    inner.add_edge("inner_1", "inner_2")
    inner.set_entry_point("inner_1")
    inner.set_finish_point("inner_2")

    def outer_1(state: OuterState) -> dict[str, Any]:
        return {"my_key": " and parallel"}

    def outer_2(state: OuterState) -> dict[str, Any]:
        return {"my_key": " and back again"}

    graph = StateGraph(OuterState)
    graph.add_node("inner", inner.compile(interrupt_before=["inner_2"]))
    graph.add_node("outer_1", outer_1)
    graph.add_node("outer_2", outer_2)
    graph.add_edge("__start__", "inner")
    graph.add_edge("__start__", "outer_1")
    graph.add_edge(["inner", "outer_1"], "outer_2")
    graph.set_finish_point("outer_2")
    return graph.compile(checkpointer=InMemorySaver())


NESTED_EXPECTED = {
    "inputs": [{"__start__": {"my_key": ""}}, {"__start__": {"my_key": ""}}],
    "outputs": {
        "inputs": [],
        "results": [
            {"my_key": "got here and there", "my_other_key": "got here"},
            {"my_key": "got here and there and parallel and back again"},
        ],
        "steps": [
            ["__start__", "outer_1", "inner", "inner:__start__", "inner:inner_1", "inner:inner_2"],
            ["outer_2"],
        ],
    },
}
"""agentevals' expected extraction of the nested graph's thread (its test_graph_trajectory_utils)."""


def react_agent(chat: Any, tools: list[Any], prompt: str | None = None) -> Any:
    """A LangGraph ReAct agent on ``chat`` with an in-memory checkpointer."""
    import warnings

    from langgraph.checkpoint.memory import InMemorySaver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(chat, tools=tools, checkpointer=InMemorySaver(), prompt=prompt)


def interrupting_search() -> Any:
    """A search tool that asks a human for the answer (an interrupt)."""
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def search(query: str) -> str:
        """Call to surf the web."""
        return str(interrupt("Tell me the answer to the question."))

    return search
