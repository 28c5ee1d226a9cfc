"""Deprecated: True when both trajectories make the same tool calls, in any order (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='unordered', ...)`` instead.
"""

from __future__ import annotations

from openevals.trajectory.utils import _deprecated_evaluators, _legacy_scorer

__all__ = ["trajectory_unordered_match", "trajectory_unordered_match_async"]

_scorer = _legacy_scorer("unordered")
trajectory_unordered_match, trajectory_unordered_match_async = _deprecated_evaluators(
    "trajectory_unordered_match",
    "unordered",
    "True when both trajectories make the same tool calls, in any order (arguments ignored).",
)
