"""Voice and audio (pass the audio as ``attachments``).

Texts are read from ``prompts/voice/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.voice.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

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
