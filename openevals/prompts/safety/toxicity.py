"""``TOXICITY_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/safety/toxicity.txt``.
"""

from __future__ import annotations

from openevals.prompts.safety import TOXICITY_PROMPT

__all__ = ["TOXICITY_PROMPT"]
