"""Voice and audio (pass the audio as ``attachments``).

Texts are read from ``prompts/voice/`` when this module is imported."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "AUDIO_QUALITY_PROMPT",
    "TRANSCRIPTION_ACCURACY_PROMPT",
    "USER_INTERRUPTS_PROMPT",
    "VOCAL_AFFECT_PROMPT",
]

AUDIO_QUALITY_PROMPT: str = load_prompt("voice/audio_quality.txt")
TRANSCRIPTION_ACCURACY_PROMPT: str = load_prompt("voice/transcription_accuracy.txt")
USER_INTERRUPTS_PROMPT: str = load_prompt("voice/user_interrupts.txt")
VOCAL_AFFECT_PROMPT: str = load_prompt("voice/vocal_affect.txt")
