"""Keep credentials out of results, files, reports, summaries and progress output.

Error messages from HTTP clients and user code may quote API keys or ``Authorization`` headers, and
a target or evaluator may echo one into an output or a comment. :class:`Redactor` replaces

* the literal values of environment variables whose names say they hold a secret (a name part
  ending in ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``PASSPHRASE``,
  ``CREDENTIAL(S)`` or equal to ``AUTH``, e.g. ``OPENAI_API_KEY``, ``HF_TOKEN``,
  ``DB_PASSWORD``; not ``TOKENIZERS_PARALLELISM``, ``AUTHOR`` or ``SSH_AUTH_SOCK``, and only
  values of 8+ characters), anywhere in a record, and
* in error messages also ``Bearer ...`` tokens, ``Authorization: ...`` / ``api_key=...``
  assignments and OpenAI-style ``sk-...`` keys

with ``[REDACTED]``. The batch runner applies it once, where records are made
(:mod:`openevals.evaluation.records`); every sink reads those records.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "Redactor", "is_secret_name"]

REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 8
_SECRET_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL")
_SECRET_WORDS = frozenset({"AUTH", "CREDENTIALS"})
# A last name part that says the value is a location or a switch, not the secret itself.
_NOT_A_SECRET_TAIL = frozenset(
    {"SOCK", "SOCKET", "PATH", "FILE", "DIR", "HOME", "URL", "ENDPOINT", "HOST", "PORT", "TYPE"}
)
_NAME_PARTS = re.compile(r"[^A-Z0-9]+")
_PATTERNS = (
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(
        r"(?i)((?:authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token)"
        r"[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',;}]{4,}"
    ),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)
_MAX_DEPTH = 200


def _make_scan() -> Any:
    """A function turning a value into its JSON text, as fast as the standard library allows.

    The C encoder of :mod:`json`, built once and without cycle markers (a cycle then raises
    ``RecursionError``, and :meth:`Redactor.data` walks such a value instead); the pure-Python
    encoder where the C one is missing.
    """
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return json.JSONEncoder(ensure_ascii=False, default=str).encode
    scan = make(None, str, encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(scan(value, 0))


_scan = _make_scan()


def is_secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret (see the module docs)."""
    parts = [p for p in _NAME_PARTS.split(name.upper()) if p]
    if not parts or parts[-1] in _NOT_A_SECRET_TAIL:
        return False
    if len(parts) > 1 and parts[-1] == "PWD":  # MYSQL_PWD, DB_PWD; not PWD / OLDPWD (a folder)
        return True
    return any(p in _SECRET_WORDS or p.endswith(_SECRET_SUFFIXES) for p in parts)


class Redactor:
    """Replaces known secret values (and, in error text, credential-looking patterns)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        secrets: set[str] = set()
        for name, value in env.items():
            if isinstance(name, str) and isinstance(value, str) and is_secret_name(name):
                # A value read from a file may carry a newline the secret itself does not.
                secrets.update(v for v in (value, value.strip()) if len(v) >= _MIN_SECRET_LEN)
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted(secrets, key=len, reverse=True)
        # Each secret as it appears inside a JSON string (escaping is per character, so a string
        # holds the secret exactly when its JSON form holds this).
        self._in_json = [json.dumps(s, ensure_ascii=False)[1:-1] for s in self.secrets]

    def values(self, text: str) -> str:
        """Replace the literal secret values only (cheap; safe on JSON text)."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def json_text(self, text: str) -> str:
        """Replace secret values inside JSON text (as JSON escapes them; the text stays valid)."""
        for secret in self._in_json:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def text(self, text: str) -> str:
        """Replace secret values and credential-looking patterns (for error messages)."""
        text = self.values(text)
        text = _PATTERNS[0].sub(f"Bearer {REDACTED}", text)
        text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{REDACTED}", text)
        return _PATTERNS[2].sub(f"sk-{REDACTED}", text)

    def data(self, value: Any) -> Any:
        """``value`` with secret values replaced in every string, dict key and nested container.

        Returns ``value`` itself when nothing had to change (the common case costs one pass and no
        copies); otherwise a copy where only the changed containers are new (lists and tuples
        become lists, other mappings become dicts). Nothing passed in is mutated. Other objects
        are checked as their ``str``; a cycle, or nesting deeper than 200 levels, is searched
        without recursion and, only if it holds a secret, replaced by its redacted ``repr``.
        """
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.values(value)
        try:  # one pass in C: most records hold no secret and come back as they are
            text = _scan(value)
        except Exception:  # a cycle, very deep nesting, an object without text: walk it
            return self._data(value, 0, set())
        if not any(s in text for s in self._in_json):
            return value
        return self._data(value, 0, set())

    def _data(self, value: Any, depth: int, path: set[int]) -> Any:
        if isinstance(value, str):
            return self.values(value) if any(s in value for s in self.secrets) else value
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        if not isinstance(value, (Mapping, list, tuple)):
            return self._opaque(value)
        if depth >= _MAX_DEPTH or id(value) in path:
            return self._opaque(value)
        path.add(id(value))
        try:
            if isinstance(value, Mapping):
                changed = False
                out: dict[Any, Any] = {}
                for key, item in value.items():
                    new_key = self._data(key, depth + 1, path) if isinstance(key, str) else key
                    new_item = self._data(item, depth + 1, path)
                    changed = changed or new_key is not key or new_item is not item
                    out[new_key] = new_item
                return out if changed else value
            items = [self._data(item, depth + 1, path) for item in value]
            if any(new is not old for new, old in zip(items, value, strict=True)):
                return items
            return value
        finally:
            path.discard(id(value))

    def _opaque(self, value: Any) -> Any:
        """A value the walk does not enter (an object, a cycle, or nesting past 200 levels):
        kept as it is unless it holds a secret, else replaced by its redacted text."""
        if isinstance(value, (Mapping, list, tuple)):
            if not self._holds_secret(value):
                return value
            try:
                return self.values(repr(value))
            except RecursionError:  # too deep to print: nothing of it can be kept
                return REDACTED
        try:
            text = str(value)
        except RecursionError:
            return REDACTED
        except Exception:  # no text form at all, so no sink can print it either
            return value
        return self.values(text) if any(s in text for s in self.secrets) else value

    def _holds_secret(self, value: Any) -> bool:
        """Whether a secret occurs anywhere in ``value`` (iterative: any depth, cycles)."""
        stack = [value]
        seen: set[int] = set()
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if any(s in item for s in self.secrets):
                    return True
            elif isinstance(item, (Mapping, list, tuple)):
                if id(item) in seen:
                    continue
                seen.add(id(item))
                if isinstance(item, Mapping):
                    stack.extend(item.keys())
                    stack.extend(item.values())
                else:
                    stack.extend(item)
            elif (
                not isinstance(item, (int, float, bool))
                and item is not None
                and self._opaque(item) is not item
            ):
                return True
        return False
