"""Agent trajectories: overall accuracy (with or without a reference) and tool selection.

Texts are read from ``prompts/trajectory/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.trajectory.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "TOOL_SELECTION_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
]

TRAJECTORY_ACCURACY_PROMPT: str = load_prompt("trajectory/accuracy.txt")
TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE: str = load_prompt(
    "trajectory/accuracy_with_reference.txt"
)
TOOL_SELECTION_PROMPT: str = load_prompt("trajectory/tool_selection.txt")
