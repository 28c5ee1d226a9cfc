"""A package that depends on openevals, run on ours: agentevals 0.0.9 imports and passes its tests.

agentevals imports names from ``openevals.llm``, ``openevals.types`` and ``openevals.utils`` that
0.2.2 binds as a side effect of its own imports (``ChatCompletionMessage``, ``Optional``, ...).
This script unpacks the agentevals sdist (its source and tests; ``--no-deps``: nothing of it
replaces our package), imports every agentevals module against ours, and runs the tests that need
no model: ``test_trajectory.py`` and ``test_trajectory_async.py`` (the ``*_llm*`` files call
OpenAI). Every endpoint is a closed port, as in ``run_upstream_tests.py``. ``make compat`` runs it::

    python scripts/run_dependents_tests.py --sdist .cache/compat/agentevals-0.0.9.tar.gz
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from run_upstream_tests import offline_env

REPO = Path(__file__).resolve().parents[1]
OFFLINE_TESTS = ("test_trajectory.py", "test_trajectory_async.py")


def unpack(sdist: Path, into: Path) -> Path:
    """The sdist's top folder (``agentevals-0.0.9/``) under ``into``."""
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, required=True, help="agentevals-0.0.9.tar.gz")
    parser.add_argument("--python", default=sys.executable, help="the venv with our package")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dependents-") as scratch:
        top = unpack(args.sdist, Path(scratch))
        env = offline_env({"PYTHONPATH": f"{REPO}:{top}"})
        modules = sorted(
            ".".join(p.relative_to(top).with_suffix("").parts).removesuffix(".__init__")
            for p in (top / "agentevals").rglob("*.py")
        )
        probe = (
            "import importlib, openevals, pathlib\n"
            f"assert pathlib.Path(openevals.__file__).is_relative_to({str(REPO)!r}), openevals\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            f"print('imported', {len(modules)}, 'agentevals modules on', openevals.__file__)\n"
        )
        imported = subprocess.run([args.python, "-c", probe], env=env, cwd=scratch)
        if imported.returncode:
            print("agentevals does not import on this package", file=sys.stderr)
            return 1
        tests = [str(top / "tests" / name) for name in OFFLINE_TESTS]
        command = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
        return subprocess.run(command, env=env, cwd=top).returncode


if __name__ == "__main__":
    sys.exit(main())
