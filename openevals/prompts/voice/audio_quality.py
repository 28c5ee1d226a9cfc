"""``AUDIO_QUALITY_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/voice/audio_quality.txt``.
"""

from __future__ import annotations

from openevals.prompts.voice import AUDIO_QUALITY_PROMPT

__all__ = ["AUDIO_QUALITY_PROMPT"]
