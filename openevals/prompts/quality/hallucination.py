"""``HALLUCINATION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import HALLUCINATION_PROMPT

__all__ = ["HALLUCINATION_PROMPT"]
