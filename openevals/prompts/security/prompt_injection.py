"""``PROMPT_INJECTION_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/security/prompt_injection.txt``.
"""

from __future__ import annotations

from openevals.prompts.security import PROMPT_INJECTION_PROMPT

__all__ = ["PROMPT_INJECTION_PROMPT"]
