"""Strict match of graph trajectories: the same steps, turn by turn, in the same order."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, NamedTuple

from openevals._contract import EvaluatorInfo, pair_evaluators
from openevals._repr import show
from openevals._structure import encode_json

__all__ = ["graph_trajectory_strict_match", "graph_trajectory_strict_match_async"]


class Turn(NamedTuple):
    """One turn: its node names as given (for comments) and as compared (:func:`_node`)."""

    nodes: list[Any]
    keys: list[Any]


def _steps(value: Any, name: str) -> list[Turn]:
    if value is None:
        raise ValueError(
            "graph_trajectory_strict_match needs both `outputs` and `reference_outputs` (graph "
            f"trajectories with a 'steps' list); `{name}` is None"
        )
    if not isinstance(value, Mapping) or "steps" not in value:
        raise TypeError(
            f"`{name}` must be a graph trajectory, a dict with a 'steps' list of lists of node "
            f"names (e.g. extract_langgraph_trajectory_from_thread(...)['outputs']); got "
            f"{type(value).__name__}"
        )
    steps = value["steps"]
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
        raise TypeError(
            f"`{name}['steps']` must be a list of lists of node names; got {show(steps)}"
        )
    turns: list[Turn] = []
    for i, turn in enumerate(steps):
        if isinstance(turn, (str, bytes)) or not isinstance(turn, Sequence):
            raise TypeError(
                f"`{name}['steps'][{i}]` must be a list of node names; got {type(turn).__name__}"
            )
        keys = [_node(node, f"{name}['steps'][{i}][{j}]") for j, node in enumerate(turn)]
        turns.append(Turn(list(turn), keys))
    return turns


def _node(node: Any, where: str) -> Any:
    """A node name as compared: a string as it is; anything else by its JSON text, encoded at any
    depth (a value that contains itself raises ValueError naming ``where`` and the cycle)."""
    if isinstance(node, str):
        return node
    try:
        return encode_json(node, where)
    except TypeError:  # not JSON: compared as itself (a scalar object, an enum, ...)
        return node if isinstance(node, Hashable) else show(node)


def _nodes(turn: list[Any]) -> str:
    """A turn's node names, every one shown (each one bounded)."""
    return "[" + ", ".join(show(node) for node in turn) + "]"


TurnCheck = Callable[[Turn, Turn], "str | None"]


def compare_turns(
    outputs: Any, reference_outputs: Any, check: TurnCheck
) -> tuple[bool, str | None]:
    """Compare two graph trajectories turn by turn: ``check(turn, reference_turn)`` says how a
    turn fails (the comment goes after ``"turn N "``) or None. Other turn counts never match."""
    got = _steps(outputs, "outputs")
    want = _steps(reference_outputs, "reference_outputs")
    if len(got) != len(want):
        return False, f"{len(got)} turn(s) in outputs, {len(want)} in reference_outputs"
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        why = check(a, b)
        if why is not None:
            return False, f"turn {i} {why}"
    return True, None


def strict_turn(got: Turn, want: Turn) -> str | None:
    if got.keys == want.keys:
        return None
    return f"differs: {_nodes(got.nodes)} vs reference {_nodes(want.nodes)}"


def _score(*, outputs: Any, reference_outputs: Any) -> tuple[bool, str | None]:
    return compare_turns(outputs, reference_outputs, strict_turn)


_INFO = EvaluatorInfo(
    run_name="graph_trajectory_strict_match",
    feedback_keys=("graph_trajectory_strict_match",),
    pure=True,
)
_DOC = """True when ``outputs`` took exactly the steps of ``reference_outputs``: the same number of
    turns and, in each turn, the same node names in the same order (key
    ``graph_trajectory_strict_match``; a mismatch says which turn differs in the comment). Both are
    graph trajectories (``{"steps": [[...], ...]}``; ``results`` and ``inputs`` are not compared).
    Raises ValueError when either is None, TypeError for another shape."""

graph_trajectory_strict_match, graph_trajectory_strict_match_async = pair_evaluators(
    _score, _INFO, name="graph_trajectory_strict_match", module=__name__, doc=_DOC, async_doc=_DOC
)
