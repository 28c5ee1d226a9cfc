"""Deprecated: True for the same roles in the same order
with the same tool calls per message.

Use ``create_trajectory_match_evaluator(trajectory_match_mode='strict', ...)`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from openevals._contract import arun_scorer, attach_info, run_scorer
from openevals.trajectory.utils import _deprecated_run, _legacy_scorer, deprecated_info
from openevals.types import EvaluatorResult

__all__ = ["trajectory_strict_match", "trajectory_strict_match_async"]

_KEY = "trajectory_strict_match"
_INFO = deprecated_info(_KEY)


_scorer = _legacy_scorer("strict", "exact")


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
    args_mode = "exact" if tool_call_args_exact_match else "ignore"
    args = (_KEY, "strict", args_mode, outputs, reference_outputs, kwargs)
    return cast(EvaluatorResult, _deprecated_run(run_scorer, _INFO, *args))


async def trajectory_strict_match_async(
    *,
    outputs: Any,
    reference_outputs: Any,
    tool_call_args_exact_match: bool = True,
    **kwargs: Any,
) -> EvaluatorResult:
    """Deprecated async twin of :func:`trajectory_strict_match`."""
    args_mode = "exact" if tool_call_args_exact_match else "ignore"
    args = (_KEY + "_async", "strict", args_mode, outputs, reference_outputs, kwargs)
    return cast(EvaluatorResult, await _deprecated_run(arun_scorer, _INFO, *args))


attach_info(trajectory_strict_match, _INFO)
attach_info(trajectory_strict_match_async, _INFO.as_async())

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
