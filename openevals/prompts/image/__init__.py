"""Image content (pass the image as ``attachments``; True = content detected).

Texts are read from ``prompts/image/`` when this package is imported. Each prompt also has
its own submodule, ``openevals.prompts.image.<name>`` (the module paths of openevals 0.2.2),
which re-exports the constant defined here."""

from __future__ import annotations

from openevals.prompts._loader import load_prompt

__all__ = [
    "EXPLICIT_CONTENT_PROMPT",
    "SENSITIVE_IMAGERY_PROMPT",
]

EXPLICIT_CONTENT_PROMPT: str = load_prompt("image/explicit_content.txt")
SENSITIVE_IMAGERY_PROMPT: str = load_prompt("image/sensitive_imagery.txt")
