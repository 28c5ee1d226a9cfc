"""Every Python example in docs/sections/trajectory.md prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "sections" / "trajectory.md"
# A ```python block immediately followed by a plain ``` block holding its printed output.
EXAMPLE = re.compile(r"```python\n((?:(?!```).)*)```\n\n```\n((?:(?!```).)*)```", re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    return EXAMPLE.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_examples() -> None:
    assert len(_examples()) >= 7


@pytest.mark.parametrize(("code", "expected"), _examples())
def test_doc_example_prints_the_documented_result(code: str, expected: str) -> None:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__"})
    assert buffer.getvalue() == expected
