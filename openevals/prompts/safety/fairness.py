"""``FAIRNESS_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/safety/fairness.txt``.
"""

from __future__ import annotations

from openevals.prompts.safety import FAIRNESS_PROMPT

__all__ = ["FAIRNESS_PROMPT"]
