"""Agent trajectories: overall accuracy (with or without a reference), tool selection, and the
accuracy of a LangGraph thread's graph trajectory.

Read from ``prompts/trajectory/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

TRAJECTORY_ACCURACY_PROMPT: str = load_prompt("trajectory/accuracy.txt")
TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE: str = load_prompt(
    "trajectory/accuracy_with_reference.txt"
)
TOOL_SELECTION_PROMPT: str = load_prompt("trajectory/tool_selection.txt")
GRAPH_TRAJECTORY_ACCURACY_PROMPT: str = load_prompt("trajectory/graph_accuracy.txt")

__all__ = prompt_names(globals())
