"""Judges the CLI tests load with ``--judge-function tests.trust.judges:NAME``."""

from __future__ import annotations

from typing import Any


def wordy(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
    """Passes right answers, and anything long enough to look thorough (a length bias)."""
    text = str(outputs)
    return {"key": "correct", "score": "wrong" not in text.lower() or len(text) > 200}


def fair(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
    return {"key": "correct", "score": "wrong" not in str(outputs).lower()}
