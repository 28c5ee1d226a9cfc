"""Graph trajectories matched by mode, as agent trajectories are: strict, unordered, subset, superset.

Threads are compared turn by turn (a thread with another number of turns never matches). Within a
turn, ``strict`` wants the same node names in the same order; ``unordered`` the same nodes in any
order (the same count of each); ``subset`` only nodes the reference turn ran (no more often than
it did); ``superset`` at least every node the reference turn ran. agentevals #49 asked for these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any, Literal, cast, get_args

from openevals._contract import EvaluatorInfo
from openevals._declare import async_twin, evaluator_for
from openevals._repr import show
from openevals.graph_trajectory.strict import Turn, TurnCheck, compare_turns, strict_turn
from openevals.types import EvaluatorResult

__all__ = [
    "GraphTrajectoryMatchMode",
    "create_async_graph_trajectory_match_evaluator",
    "create_graph_trajectory_match_evaluator",
]

GraphTrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset"]
_MODES: tuple[str, ...] = get_args(GraphTrajectoryMatchMode)


def _counts(turn: Turn) -> Counter[Hashable]:
    return Counter(turn.keys)  # nodes as compared: strings, or their JSON text


def _names(counts: Counter[Hashable]) -> str:
    return ", ".join(show(node) + (f" x{n}" if n > 1 else "") for node, n in counts.items())


def _turn_check(mode: str) -> TurnCheck:
    """How a turn fails under ``mode`` (see :func:`compare_turns`)."""
    if mode == "strict":
        return strict_turn

    def check(got: Turn, want: Turn) -> str | None:
        extra = _counts(got) - _counts(want) if mode != "superset" else Counter()
        missing = _counts(want) - _counts(got) if mode != "subset" else Counter()
        parts = [f"has nodes not in the reference: {_names(extra)}"] if extra else []
        parts += [f"lacks reference nodes: {_names(missing)}"] if missing else []
        return "; ".join(parts) if parts else None

    return check


def _scorer(mode: str) -> Callable[..., tuple[bool, str | None]]:
    check = _turn_check(mode)

    def score(*, outputs: Any, reference_outputs: Any) -> tuple[bool, str | None]:
        return compare_turns(outputs, reference_outputs, check)

    return score


def _checked(mode: Any) -> str:
    if mode not in _MODES:
        raise ValueError(
            f"trajectory_match_mode must be one of {show(list(_MODES))}; got {show(mode)}"
        )
    return cast(str, mode)


def _evaluator(trajectory_match_mode: Any, *, is_async: bool) -> Any:
    mode = _checked(trajectory_match_mode)
    key = f"graph_trajectory_{mode}_match"
    return evaluator_for(
        is_async,
        _scorer(mode),
        EvaluatorInfo(run_name=key, feedback_keys=(key,), pure=True),
        paired=True,
        name="_agraph_trajectory_match" if is_async else "_graph_trajectory_match",
        module=__name__,
    )


def create_graph_trajectory_match_evaluator(
    *, trajectory_match_mode: GraphTrajectoryMatchMode = "strict"
) -> Callable[..., EvaluatorResult]:
    """Build an evaluator comparing a graph trajectory with a reference one, turn by turn.

    Args:
        trajectory_match_mode: ``"strict"`` (each turn runs the reference turn's nodes in the same
            order), ``"unordered"`` (the same nodes, each as often, in any order), ``"subset"``
            (only nodes the reference turn ran, each at most as often) or ``"superset"`` (every
            node of the reference turn, at least as often; others may run too).

    The evaluator takes ``outputs`` and ``reference_outputs``, graph trajectories
    (``{"steps": [[node, ...], ...]}``, e.g. ``extract_langgraph_trajectory_from_thread(...)
    ['outputs']``), and returns ``{"key": "graph_trajectory_<mode>_match", "score": bool,
    "comment": ...}``: a failed match names the turn and the nodes extra or missing. Threads with
    different numbers of turns never match. Raises ValueError for an unknown mode (here) or a
    missing trajectory, TypeError for another shape (at the call).
    """
    return cast(Callable[..., EvaluatorResult], _evaluator(trajectory_match_mode, is_async=False))


create_async_graph_trajectory_match_evaluator = async_twin(
    create_graph_trajectory_match_evaluator,
    lambda options: _evaluator(options["trajectory_match_mode"], is_async=True),
    returns="Callable[..., Any]",
    note="same options and results",
)
