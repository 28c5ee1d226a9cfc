"""``LANGUAGE_DETECTION_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.conversation import LANGUAGE_DETECTION_PROMPT

__all__ = ["LANGUAGE_DETECTION_PROMPT"]
