"""Multi-turn conversations; LANGUAGE_DETECTION and SUPPORT_INTENT return a category.

Read from ``prompts/conversation/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

PERCEIVED_ERROR_PROMPT: str = load_prompt("conversation/perceived_error.txt")
WINS_PROMPT: str = load_prompt("conversation/wins.txt")
TASK_COMPLETION_PROMPT: str = load_prompt("conversation/task_completion.txt")
KNOWLEDGE_RETENTION_PROMPT: str = load_prompt("conversation/knowledge_retention.txt")
USER_SATISFACTION_PROMPT: str = load_prompt("conversation/user_satisfaction.txt")
AGENT_TONE_PROMPT: str = load_prompt("conversation/agent_tone.txt")
LANGUAGE_DETECTION_PROMPT: str = load_prompt("conversation/language_detection.txt")
SUPPORT_INTENT_PROMPT: str = load_prompt("conversation/support_intent.txt")

__all__ = prompt_names(globals())
