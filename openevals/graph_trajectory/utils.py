"""Read a LangGraph thread's checkpoint history as a graph trajectory.

A thread is split into turns: a turn ends at a checkpoint with nothing left to run or with a task
waiting on an interrupt. Going back in time from each such checkpoint, the tasks of the turn's
checkpoints are its steps (subgraph tasks prefixed with the subgraph's name, an interrupted task
preceded by ``"__interrupt__"``); the turn's result is the final state (only the last message when
the state has a ``messages`` list, ``{}`` for an interrupted turn); its input is the input
checkpoint's tasks' writes, or ``"__resuming__"`` for a turn that resumed an interrupt. Subgraph
histories are read recursively, through the graph's public ``get_state_history`` /
``aget_state_history``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from openevals._repr import show
from openevals.graph_trajectory.types import ExtractedLangGraphThreadTrajectory, GraphTrajectory

__all__ = [
    "aextract_langgraph_trajectory_from_thread",
    "extract_langgraph_trajectory_from_snapshots",
    "extract_langgraph_trajectory_from_thread",
]


def _namespace(config: Any) -> str:
    if not isinstance(config, Mapping):
        return ""
    configurable = config.get("configurable")
    if not isinstance(configurable, Mapping):
        return ""
    return str(configurable.get("checkpoint_ns") or "")


def _subgraph_configs(snapshot: Any) -> list[Any]:
    """The configs of the subgraph checkpoints a snapshot's tasks point at."""
    return [task.state for task in snapshot.tasks or () if _namespace(task.state)]


def _interrupted(snapshot: Any) -> bool:
    return any(task.interrupts for task in snapshot.tasks or ())


def _turn_result(snapshot: Any) -> Any:
    if _interrupted(snapshot):
        return {}
    values = snapshot.values
    if isinstance(values, Mapping) and isinstance(values.get("messages"), list):
        messages = values["messages"]
        if not messages:
            return {"messages": []}
        last = messages[-1]
        from langchain_core.messages import BaseMessage
        from langchain_core.messages.utils import convert_to_openai_messages

        if isinstance(last, BaseMessage):
            return {"messages": convert_to_openai_messages([last])}
        return {"messages": [last]}
    return values


def _task_steps(snapshot: Any) -> list[str]:
    namespace = _namespace(snapshot.config)
    parts = namespace.split(":")
    prefix = f"{parts[0]}:" if len(parts) > 1 else ""
    steps: list[str] = []
    for task in snapshot.tasks or ():
        if task.interrupts:
            steps.append("__interrupt__")
        steps.append(f"{prefix}{task.name}")
    return steps


def extract_langgraph_trajectory_from_snapshots(
    snapshots: Iterable[Any],
) -> ExtractedLangGraphThreadTrajectory:
    """The trajectory of a thread from its state snapshots, newest first (the order of
    ``graph.get_state_history``, with each subgraph's snapshots before the parent snapshot that
    runs it). Warns when the turns' inputs, results and steps do not line up."""
    history = list(snapshots)
    inputs: list[Any] = []
    results: list[Any] = []
    steps: list[list[str]] = []
    in_turn = False
    for i, snapshot in enumerate(history):
        if not snapshot.next or _interrupted(snapshot):
            in_turn = True
            results.append(_turn_result(snapshot))
            steps.append([])
        if not in_turn:
            continue
        if snapshot.tasks:
            steps[-1].extend(_task_steps(snapshot))
        metadata = snapshot.metadata
        if isinstance(metadata, Mapping) and metadata.get("source") == "input":
            inputs.extend({task.name: task.result} for task in snapshot.tasks or ())
        elif i + 1 < len(history) and _interrupted(history[i + 1]):
            inputs.append("__resuming__")
    inputs.reverse()
    results.reverse()
    steps.reverse()
    for turn in steps:
        turn.reverse()
    for label, other in (("results", results), ("steps", steps)):  # the first mismatch only
        if len(inputs) != len(other):
            warnings.warn(
                f"Trajectory parsing may be incomplete: inputs and {label} have different "
                f"lengths ({len(inputs)} and {len(other)})",
                stacklevel=2,
            )
            break
    trajectory = GraphTrajectory(inputs=[], results=results, steps=steps)
    return {"inputs": inputs, "outputs": trajectory}


def _check(graph: Any, config: Any, method: str) -> None:
    if not callable(getattr(graph, method, None)):
        raise TypeError(
            f"`graph` must be a compiled LangGraph graph with a checkpointer ({method}); got "
            f"{type(graph).__name__}"
        )
    if not isinstance(config, Mapping) or not isinstance(config.get("configurable"), Mapping):
        raise TypeError(
            "`config` must be the thread's config, e.g. {'configurable': {'thread_id': '1'}}; "
            f"got {show(config)}"
        )
    if config["configurable"].get("thread_id") is None:
        raise ValueError(
            "`config['configurable']` has no 'thread_id': name the thread to read, e.g. "
            f"{{'configurable': {{'thread_id': '1'}}}}; got {show(config)}"
        )


def _history(graph: Any, config: Any) -> list[Any]:
    found: list[Any] = []
    for snapshot in graph.get_state_history(config):
        for sub in _subgraph_configs(snapshot):
            found.extend(_history(graph, sub))
        found.append(snapshot)
    return found


async def _ahistory(graph: Any, config: Any) -> list[Any]:
    found: list[Any] = []
    async for snapshot in graph.aget_state_history(config):
        for sub in _subgraph_configs(snapshot):
            found.extend(await _ahistory(graph, sub))
        found.append(snapshot)
    return found


def extract_langgraph_trajectory_from_thread(
    graph: Any, config: Any
) -> ExtractedLangGraphThreadTrajectory:
    """The graph trajectory of the thread ``config`` names in ``graph`` (a compiled graph with a
    checkpointer): ``{"inputs": [...], "outputs": {"inputs": [], "results": [...], "steps":
    [[...], ...]}}``, one entry per turn. Raises TypeError for a graph without state history or a
    config without ``configurable``."""
    _check(graph, config, "get_state_history")
    return extract_langgraph_trajectory_from_snapshots(_history(graph, config))


async def aextract_langgraph_trajectory_from_thread(
    graph: Any, config: Any
) -> ExtractedLangGraphThreadTrajectory:
    """Async twin of :func:`extract_langgraph_trajectory_from_thread`."""
    _check(graph, config, "aget_state_history")
    return extract_langgraph_trajectory_from_snapshots(await _ahistory(graph, config))
