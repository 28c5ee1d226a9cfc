"""Prompts for JSON match with a rubric: several keys of one element graded at once.

Texts are read from ``prompts/json/`` when this module is imported.

``JSON_MATCH_SYSTEM_PROMPT`` is the system message: how the criteria and values are laid out and how
to grade each key. ``JSON_MATCH_USER_PROMPT`` is the user message, a ``str.format`` template with
``{rubric}`` (one ``Key: <name>, Criteria: <text>`` line per graded key), ``{outputs}`` and
``{reference_outputs}`` (one ``<key>: <value>`` line each). ``SYSTEM_PROMPT`` and ``USER_PROMPT``
are the same two strings under the names openevals 0.2.2 gave them in ``openevals.json.match``.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

JSON_MATCH_SYSTEM_PROMPT: str = load_prompt("json/rubric_system.txt")
JSON_MATCH_USER_PROMPT: str = load_prompt("json/rubric_user.txt")

SYSTEM_PROMPT: str = JSON_MATCH_SYSTEM_PROMPT
USER_PROMPT: str = JSON_MATCH_USER_PROMPT

__all__ = prompt_names(globals())
