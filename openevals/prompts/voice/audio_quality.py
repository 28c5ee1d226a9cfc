"""``AUDIO_QUALITY_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.voice import AUDIO_QUALITY_PROMPT

__all__ = ["AUDIO_QUALITY_PROMPT"]
