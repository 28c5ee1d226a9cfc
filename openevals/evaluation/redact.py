"""Keep credentials out of results files, reports and logs.

Error messages from HTTP clients and user code may quote API keys or ``Authorization`` headers.
:class:`Redactor` replaces

* the literal values of environment variables whose names look secret (``*KEY*``, ``*TOKEN*``,
  ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``, ``*AUTH*``; values of 8+ characters), and
* (in free text such as error messages) ``Bearer ...`` tokens, ``Authorization: ...`` /
  ``api_key=...`` assignments and OpenAI-style ``sk-...`` keys

with ``[REDACTED]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_SECRET_LEN = 8
_PATTERNS = (
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(
        r"(?i)((?:authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token)"
        r"[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',;}]{4,}"
    ),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)


class Redactor:
    """Replaces known secret values (and, in text, credential-looking patterns)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        secrets = {
            value
            for name, value in env.items()
            if _SECRET_NAME.search(name)
            and isinstance(value, str)
            and len(value) >= _MIN_SECRET_LEN
        }
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted(secrets, key=len, reverse=True)

    def values(self, text: str) -> str:
        """Replace the literal secret values only (cheap; safe on JSON text)."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def text(self, text: str) -> str:
        """Replace secret values and credential-looking patterns (for error messages)."""
        text = self.values(text)
        text = _PATTERNS[0].sub(f"Bearer {REDACTED}", text)
        text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{REDACTED}", text)
        return _PATTERNS[2].sub(f"sk-{REDACTED}", text)
