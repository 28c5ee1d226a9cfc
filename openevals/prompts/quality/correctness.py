"""``CORRECTNESS_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/quality/correctness.txt``.
"""

from __future__ import annotations

from openevals.prompts.quality import CORRECTNESS_PROMPT

__all__ = ["CORRECTNESS_PROMPT"]
