"""Cyclic tool-call arguments on both sides of a trajectory (issue 27, item 5).

Arguments that have no canonical form (they hold a value that is not plain JSON) are compared
pair by pair with ``==``; when both sides contain themselves that comparison recursed and the
error named only "output tool-call arguments". The error must name the side (``outputs`` /
``reference_outputs``), the message index and the tool, in every argument mode and override.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.robustness.test_structures import SYNC_ASYNC, call_message, run, trajectory_match

pytestmark = pytest.mark.usefixtures("tracing_off")


class Opaque:
    """Not plain JSON and not hashable: the matcher falls back to pairwise ``==``."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque)


def cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"obj": Opaque()}
    value["self"] = value
    return value


def deep(depth: int = 3_000) -> dict[str, Any]:
    value: dict[str, Any] = {"obj": Opaque()}
    for _ in range(depth):
        value = {"obj": Opaque(), "self": value}
    return value


def trajectory(args: Any, index: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "hi"}] * index + [call_message(args)]


MODES = [
    {"tool_args_match_mode": "exact"},
    {"tool_args_match_mode": "subset"},
    {"tool_args_match_mode": "superset"},
    {"tool_args_match_overrides": {"lookup": ["self"]}},
    {"tool_args_match_overrides": {"lookup": "subset"}},
]
MODE_IDS = ["exact", "subset", "superset", "paths", "override-subset"]


@SYNC_ASYNC
@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("match_mode", ["strict", "unordered"])
def test_cycles_on_both_sides_name_outputs_message_and_tool(
    options: dict[str, Any], match_mode: str, is_async: bool
) -> None:
    evaluator = trajectory_match(is_async, trajectory_match_mode=match_mode, **options)
    with pytest.raises(ValueError, match=r"`outputs\[2\] tool call 'lookup' arguments") as caught:
        run(
            evaluator,
            is_async,
            outputs=trajectory(cyclic(), 2),
            reference_outputs=trajectory(cyclic(), 2),
        )
    assert "contains itself" in str(caught.value)
    assert "output tool-call arguments" not in str(caught.value)


@SYNC_ASYNC
@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_a_cycle_against_a_deep_value_names_its_own_side(
    options: dict[str, Any], side: str, is_async: bool
) -> None:
    evaluator = trajectory_match(is_async, trajectory_match_mode="unordered", **options)
    other = "reference_outputs" if side == "outputs" else "outputs"
    kwargs = {side: trajectory(cyclic(), 1), other: trajectory(deep(), 1)}
    with pytest.raises(ValueError, match=rf"`{side}\[1\] tool call 'lookup' arguments.*contains"):
        run(evaluator, is_async, **kwargs)
