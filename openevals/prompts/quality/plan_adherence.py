"""``PLAN_ADHERENCE_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/quality/plan_adherence.txt``.
"""

from __future__ import annotations

from openevals.prompts.quality import PLAN_ADHERENCE_PROMPT

__all__ = ["PLAN_ADHERENCE_PROMPT"]
