"""The shapes of a LangGraph thread's graph trajectory (agentevals' ``GraphTrajectory`` and
``ExtractedLangGraphThreadTrajectory``)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

__all__ = ["ExtractedLangGraphThreadTrajectory", "GraphTrajectory"]


class GraphTrajectory(TypedDict):
    """One thread as turns: per turn its result and the nodes that ran (``steps``, oldest first;
    subgraph nodes as ``"subgraph:node"``, an interrupt as ``"__interrupt__"``)."""

    inputs: list[Any] | None
    results: list[Any]
    steps: list[list[str]]


class ExtractedLangGraphThreadTrajectory(TypedDict):
    """What :func:`extract_langgraph_trajectory_from_thread` returns: the turns' inputs (a resumed
    turn's input is ``"__resuming__"``) and the trajectory."""

    inputs: list[Any]
    outputs: GraphTrajectory
