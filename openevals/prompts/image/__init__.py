"""Image content (pass the image as ``attachments``; True = content detected).

Read from ``prompts/image/`` on import; see :mod:`openevals.prompts` for the submodules.
"""

from __future__ import annotations

from openevals.prompts._loader import load_prompt, prompt_names

EXPLICIT_CONTENT_PROMPT: str = load_prompt("image/explicit_content.txt")
SENSITIVE_IMAGERY_PROMPT: str = load_prompt("image/sensitive_imagery.txt")

__all__ = prompt_names(globals())
