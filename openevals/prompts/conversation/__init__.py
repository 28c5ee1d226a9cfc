"""Multi-turn conversations; LANGUAGE_DETECTION and SUPPORT_INTENT return a category.

Texts are read from ``prompts/conversation/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.conversation.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "AGENT_TONE_PROMPT",
    "KNOWLEDGE_RETENTION_PROMPT",
    "LANGUAGE_DETECTION_PROMPT",
    "PERCEIVED_ERROR_PROMPT",
    "SUPPORT_INTENT_PROMPT",
    "TASK_COMPLETION_PROMPT",
    "USER_SATISFACTION_PROMPT",
    "WINS_PROMPT",
]

PERCEIVED_ERROR_PROMPT: str = load_prompt("conversation/perceived_error.txt")
WINS_PROMPT: str = load_prompt("conversation/wins.txt")
TASK_COMPLETION_PROMPT: str = load_prompt("conversation/task_completion.txt")
KNOWLEDGE_RETENTION_PROMPT: str = load_prompt("conversation/knowledge_retention.txt")
USER_SATISFACTION_PROMPT: str = load_prompt("conversation/user_satisfaction.txt")
AGENT_TONE_PROMPT: str = load_prompt("conversation/agent_tone.txt")
LANGUAGE_DETECTION_PROMPT: str = load_prompt("conversation/language_detection.txt")
SUPPORT_INTENT_PROMPT: str = load_prompt("conversation/support_intent.txt")
