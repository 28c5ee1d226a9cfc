"""``HALLUCINATION_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/quality/hallucination.txt``.
"""

from __future__ import annotations

from openevals.prompts.quality import HALLUCINATION_PROMPT

__all__ = ["HALLUCINATION_PROMPT"]
