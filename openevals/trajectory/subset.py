"""Deprecated: True when every output tool call also appears in the reference (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='subset', ...)`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals.trajectory.utils import _deprecated_evaluators, _legacy_scorer

__all__ = ["trajectory_subset", "trajectory_subset_async"]

_scorer = _legacy_scorer("subset")
trajectory_subset, trajectory_subset_async = _deprecated_evaluators(
    "trajectory_subset",
    "subset",
    "True when every output tool call also appears in the reference (arguments ignored).",
)

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
