"""``CODE_CORRECTNESS_PROMPT`` and ``CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS`` at the module
path openevals 0.2.2 used.

Text: ``prompts/quality/code_correctness.txt`` and
``prompts/quality/code_correctness_with_reference.txt``.
"""

from __future__ import annotations

from openevals.prompts.quality import (
    CODE_CORRECTNESS_PROMPT,
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
)

__all__ = ["CODE_CORRECTNESS_PROMPT", "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS"]
