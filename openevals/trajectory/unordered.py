"""Deprecated: True when both trajectories make the same tool calls, in any order (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='unordered', ...)`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals.trajectory.utils import _deprecated_evaluators, _legacy_scorer

__all__ = ["trajectory_unordered_match", "trajectory_unordered_match_async"]

_scorer = _legacy_scorer("unordered")
trajectory_unordered_match, trajectory_unordered_match_async = _deprecated_evaluators(
    "trajectory_unordered_match",
    "unordered",
    "True when both trajectories make the same tool calls, in any order (arguments ignored).",
)

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
