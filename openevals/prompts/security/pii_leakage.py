"""``PII_LEAKAGE_PROMPT`` at the module path openevals 0.2.2 used."""

from openevals.prompts.security import PII_LEAKAGE_PROMPT

__all__ = ["PII_LEAKAGE_PROMPT"]
