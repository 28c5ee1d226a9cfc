"""Deprecated: True when every reference tool call also appears in the outputs (arguments ignored).

Use ``create_trajectory_match_evaluator(trajectory_match_mode='superset', ...)`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals.trajectory.utils import _deprecated_evaluators, _legacy_scorer

__all__ = ["trajectory_superset", "trajectory_superset_async"]

_scorer = _legacy_scorer("superset")
trajectory_superset, trajectory_superset_async = _deprecated_evaluators(
    "trajectory_superset",
    "superset",
    "True when every reference tool call also appears in the outputs (arguments ignored).",
)

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
