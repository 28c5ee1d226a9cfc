"""``CODE_INJECTION_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/security/code_injection.txt``.
"""

from __future__ import annotations

from openevals.prompts.security import CODE_INJECTION_PROMPT

__all__ = ["CODE_INJECTION_PROMPT"]
