"""``ANSWER_RELEVANCE_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.quality import ANSWER_RELEVANCE_PROMPT

__all__ = ["ANSWER_RELEVANCE_PROMPT"]
