"""Deprecated: True for the same roles in the same order
with the same tool calls per message.

Use ``create_trajectory_match_evaluator(trajectory_match_mode='strict', ...)`` instead.
"""

from __future__ import annotations

from typing import Any, cast

from openevals._contract import arun_scorer, attach_info, run_scorer
from openevals.trajectory.match import make_scorer
from openevals.trajectory.utils import _deprecated_config, _scorer_for_mode, deprecated_info
from openevals.types import EvaluatorResult, ToolArgsMatchMode, ToolArgsMatchOverrides

__all__ = ["trajectory_strict_match", "trajectory_strict_match_async"]

_KEY = "trajectory_strict_match"
_INFO = deprecated_info(_KEY)


def _scorer(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
    **kwargs: Any,
) -> bool:
    """The verdict alone (public-release helper name)."""
    return _scorer_for_mode(
        "strict",
        outputs=outputs,
        reference_outputs=reference_outputs,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )


def trajectory_strict_match(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_call_args_exact_match: bool = True,
    **kwargs: Any,
) -> EvaluatorResult:
    """Deprecated. True for the same roles in the same order
    with the same tool calls per message.

    Tool-call arguments must be equal when ``tool_call_args_exact_match`` (default), else only
    tool names are compared. Key ``trajectory_strict_match``. Emits ``DeprecationWarning``.
    """
    config = _deprecated_config(
        _KEY, "strict", "exact" if tool_call_args_exact_match else "ignore", kwargs
    )
    result = run_scorer(
        _INFO,
        make_scorer(config),
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)


async def trajectory_strict_match_async(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_call_args_exact_match: bool = True,
    **kwargs: Any,
) -> EvaluatorResult:
    """Deprecated async twin of :func:`trajectory_strict_match`."""
    config = _deprecated_config(
        _KEY + "_async", "strict", "exact" if tool_call_args_exact_match else "ignore", kwargs
    )
    result = await arun_scorer(
        _INFO,
        make_scorer(config),
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)


attach_info(trajectory_strict_match, _INFO)
attach_info(trajectory_strict_match_async, _INFO.as_async())
