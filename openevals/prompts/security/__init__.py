"""Security threats in inputs and outputs (True = threat or leak detected).

Read from ``prompts/security/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

PII_LEAKAGE_PROMPT: str = load_prompt("security/pii_leakage.txt")
PROMPT_INJECTION_PROMPT: str = load_prompt("security/prompt_injection.txt")
CODE_INJECTION_PROMPT: str = load_prompt("security/code_injection.txt")

__all__ = prompt_names(globals())
