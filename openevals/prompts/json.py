"""Prompts for JSON match with a rubric: several keys of one element graded at once.

Texts are read from ``prompts/json/`` when this module is imported."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "JSON_MATCH_SYSTEM_PROMPT",
    "JSON_MATCH_USER_PROMPT",
]

JSON_MATCH_SYSTEM_PROMPT: str = load_prompt("json/rubric_system.txt")
JSON_MATCH_USER_PROMPT: str = load_prompt("json/rubric_user.txt")
