"""File names and shell commands the E2B evaluators use inside the sandbox."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

__all__ = [
    "DEFAULT_PROJECT_DIRECTORY",
    "IMPORT_PROBE",
    "OUTPUTS_FILE",
    "PYRIGHT_COMMAND",
    "install_command",
    "probe_command",
    "project_path",
    "run_command",
]

DEFAULT_PROJECT_DIRECTORY = "openevals"
"""Where the code is written when no ``sandbox_project_directory`` is given (relative to home)."""

OUTPUTS_FILE = "outputs.py"
"""The file the code under evaluation is written to, inside the project directory."""

IMPORT_PROBE = """\
import importlib.util, sys
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except Exception:
        found = False
    if not found:
        print(name)
"""
"""Prints the module names (from argv) the sandbox's Python cannot import; nothing is imported
except parent packages of dotted names. Modules in the project directory count as present."""

PYRIGHT_COMMAND = (
    "(command -v pyright >/dev/null 2>&1 || npm install -g pyright >&2) && "
    f"pyright --outputjson --level error {OUTPUTS_FILE}"
)
"""Type-check the outputs file, installing pyright with npm first if the sandbox lacks it."""


def project_path(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}"


def probe_command(python: str, modules: Sequence[str]) -> str:
    """Command printing which of ``modules`` the sandbox's ``python`` cannot find."""
    names = " ".join(shlex.quote(m) for m in modules)
    return f"{python} -c {shlex.quote(IMPORT_PROBE)} {names}"


def install_command(python: str, distributions: Sequence[str]) -> str:
    """``pip install`` of ``distributions`` into the environment of ``python``."""
    names = " ".join(shlex.quote(d) for d in distributions)
    return f"{python} -m pip install --quiet --disable-pip-version-check {names}"


def run_command(execution_command: str) -> str:
    """Run the outputs file with ``execution_command`` (e.g. ``python``)."""
    return f"{execution_command} {OUTPUTS_FILE}"
