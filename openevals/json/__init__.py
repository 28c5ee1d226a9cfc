"""Structured-output evaluators: compare a dict (or a list of dicts) with a reference."""

from __future__ import annotations

from openevals.json.match import create_async_json_match_evaluator, create_json_match_evaluator
from openevals.prompts.json import JSON_MATCH_SYSTEM_PROMPT as SYSTEM_PROMPT
from openevals.prompts.json import JSON_MATCH_USER_PROMPT as USER_PROMPT

__all__ = [
    "SYSTEM_PROMPT",
    "USER_PROMPT",
    "create_async_json_match_evaluator",
    "create_json_match_evaluator",
]
