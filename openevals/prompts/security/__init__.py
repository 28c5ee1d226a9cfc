"""Security threats in inputs and outputs (True = threat or leak detected).

Texts are read from ``prompts/security/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.security.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "CODE_INJECTION_PROMPT",
    "PII_LEAKAGE_PROMPT",
    "PROMPT_INJECTION_PROMPT",
]

PII_LEAKAGE_PROMPT: str = load_prompt("security/pii_leakage.txt")
PROMPT_INJECTION_PROMPT: str = load_prompt("security/prompt_injection.txt")
CODE_INJECTION_PROMPT: str = load_prompt("security/code_injection.txt")
