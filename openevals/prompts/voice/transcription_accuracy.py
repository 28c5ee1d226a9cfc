"""``TRANSCRIPTION_ACCURACY_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.voice import TRANSCRIPTION_ACCURACY_PROMPT

__all__ = ["TRANSCRIPTION_ACCURACY_PROMPT"]
