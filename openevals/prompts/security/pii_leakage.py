"""``PII_LEAKAGE_PROMPT`` at the module path openevals 0.2.2 used.

Text: ``prompts/security/pii_leakage.txt``.
"""

from __future__ import annotations

from openevals.prompts.security import PII_LEAKAGE_PROMPT

__all__ = ["PII_LEAKAGE_PROMPT"]
