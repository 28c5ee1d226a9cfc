"""``TRAJECTORY_ACCURACY_PROMPT`` and ``TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE`` at the module
path openevals 0.2.2 used.

Text: ``prompts/trajectory/accuracy.txt`` and ``prompts/trajectory/accuracy_with_reference.txt``.
"""

from __future__ import annotations

from openevals.prompts.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)

__all__ = ["TRAJECTORY_ACCURACY_PROMPT", "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE"]
