"""Importing the batch runner, its package and the CLI loads no model, LangChain or rich code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("openai", "langchain_openai", "langchain_core", "langsmith", "rich", "torch", "httpx")
LAZY = ("numpy", "jinja2")  # statistics and the report load them when they are used


def test_runner_and_cli_imports_are_light() -> None:
    code = (
        "import json, sys\n"
        "import openevals.evaluation, openevals.evaluation.runner, openevals.cli\n"
        "from openevals.evaluation import evaluate, EvaluationResult\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = {name.split(".")[0] for name in json.loads(proc.stdout)}
    assert not loaded & {*HEAVY, *LAZY}, sorted(loaded & {*HEAVY, *LAZY})
