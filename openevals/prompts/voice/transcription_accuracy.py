"""``TRANSCRIPTION_ACCURACY_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/voice/transcription_accuracy.txt``.
"""

from __future__ import annotations

from openevals.prompts.voice import TRANSCRIPTION_ACCURACY_PROMPT

__all__ = ["TRANSCRIPTION_ACCURACY_PROMPT"]
