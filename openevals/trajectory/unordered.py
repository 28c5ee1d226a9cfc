"""Deprecated: True when both trajectories make the same tool
calls, in any order (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='unordered', ...)`` instead.
"""

from __future__ import annotations

from typing import Any, cast

from openevals.trajectory.match import make_scorer
from openevals.trajectory.utils import _deprecated_config, _scorer_for_mode
from openevals.types import EvaluatorResult, ToolArgsMatchMode, ToolArgsMatchOverrides
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = ["trajectory_unordered_match", "trajectory_unordered_match_async"]

_KEY = "trajectory_unordered_match"


def _scorer(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_args_match_mode: ToolArgsMatchMode = "ignore",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
    **kwargs: Any,
) -> bool:
    """The verdict alone (public-release helper name)."""
    return _scorer_for_mode(
        "unordered",
        outputs=outputs,
        reference_outputs=reference_outputs,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )


def trajectory_unordered_match(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """Deprecated. True when both trajectories make the same tool
    calls, in any order (arguments ignored).

    Key ``trajectory_unordered_match``. Emits ``DeprecationWarning``.
    """
    config = _deprecated_config(_KEY, "unordered", "ignore", kwargs)
    result = _run_evaluator(
        run_name=_KEY,
        scorer=make_scorer(config),
        feedback_key=_KEY,
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)


async def trajectory_unordered_match_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """Deprecated async twin of :func:`trajectory_unordered_match`."""
    config = _deprecated_config(_KEY + "_async", "unordered", "ignore", kwargs)
    result = await _arun_evaluator(
        run_name=_KEY,
        scorer=make_scorer(config),
        feedback_key=_KEY,
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)
