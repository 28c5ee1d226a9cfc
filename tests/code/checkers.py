"""Skip markers for tests that need a real type checker (both are dev dependencies)."""

from __future__ import annotations

import pytest

from openevals.code._typecheck import find_executable


def _missing(name: str) -> bool:
    try:
        find_executable(name)
    except FileNotFoundError:
        return True
    return False


requires_mypy = pytest.mark.skipif(
    _missing("mypy"), reason="mypy is not installed here (pip install mypy)"
)
requires_pyright = pytest.mark.skipif(
    _missing("pyright"), reason="pyright is not installed here (pip install pyright)"
)
