"""Prompts for the LLM code-extraction strategy (a structured ``{"code": ...}`` answer).

Texts are read from ``prompts/code/`` when this module is imported."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

LLM_EXTRACTION_SYSTEM_PROMPT: str = load_prompt("code/extraction_system.txt")
LLM_EXTRACTION_USER_PROMPT: str = load_prompt("code/extraction_user.txt")

__all__ = prompt_names(globals())
