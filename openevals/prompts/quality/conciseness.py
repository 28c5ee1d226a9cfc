"""``CONCISENESS_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/quality/conciseness.txt``.
"""

from __future__ import annotations

from openevals.prompts.quality import CONCISENESS_PROMPT

__all__ = ["CONCISENESS_PROMPT"]
