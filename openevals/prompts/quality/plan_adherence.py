"""``PLAN_ADHERENCE_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import PLAN_ADHERENCE_PROMPT

__all__ = ["PLAN_ADHERENCE_PROMPT"]
