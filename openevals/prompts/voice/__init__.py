"""Voice and audio (pass the audio as ``attachments``).

Read from ``prompts/voice/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

AUDIO_QUALITY_PROMPT: str = load_prompt("voice/audio_quality.txt")
TRANSCRIPTION_ACCURACY_PROMPT: str = load_prompt("voice/transcription_accuracy.txt")
USER_INTERRUPTS_PROMPT: str = load_prompt("voice/user_interrupts.txt")
VOCAL_AFFECT_PROMPT: str = load_prompt("voice/vocal_affect.txt")

__all__ = prompt_names(globals())
