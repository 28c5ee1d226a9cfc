"""Deprecated: True when every output tool call also appears in the reference (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='subset', ...)`` instead.
"""

from __future__ import annotations

from openevals.trajectory.utils import _deprecated_evaluators, _legacy_scorer

__all__ = ["trajectory_subset", "trajectory_subset_async"]

_scorer = _legacy_scorer("subset")
trajectory_subset, trajectory_subset_async = _deprecated_evaluators(
    "trajectory_subset",
    "subset",
    "True when every output tool call also appears in the reference (arguments ignored).",
)
