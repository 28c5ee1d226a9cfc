"""Run a snippet in a new interpreter, for the import-cost tests of the rag package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def assert_runs_in_fresh_python(code: str) -> None:
    """Run ``code`` with ``python -c`` at the repository root; fail with its stderr."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr
