"""Deprecated: True when every reference tool call also
appears in the output (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='superset', ...)`` instead.
"""

from __future__ import annotations

from typing import Any, cast

from openevals.trajectory.match import make_scorer
from openevals.trajectory.utils import _deprecated_config, _scorer_for_mode
from openevals.types import EvaluatorResult, ToolArgsMatchMode, ToolArgsMatchOverrides
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = ["trajectory_superset", "trajectory_superset_async"]

_KEY = "trajectory_superset"


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
        "superset",
        outputs=outputs,
        reference_outputs=reference_outputs,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )


def trajectory_superset(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """Deprecated. True when every reference tool call also
    appears in the output (arguments ignored).

    Key ``trajectory_superset``. Emits ``DeprecationWarning``.
    """
    config = _deprecated_config(_KEY, "superset", "ignore", kwargs)
    result = _run_evaluator(
        run_name=_KEY,
        scorer=make_scorer(config),
        feedback_key=_KEY,
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)


async def trajectory_superset_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """Deprecated async twin of :func:`trajectory_superset`."""
    config = _deprecated_config(_KEY + "_async", "superset", "ignore", kwargs)
    result = await _arun_evaluator(
        run_name=_KEY,
        scorer=make_scorer(config),
        feedback_key=_KEY,
        outputs=outputs,
        reference_outputs=reference_outputs,
        **kwargs,
    )
    return cast(EvaluatorResult, result)
