"""Run the public openevals repository's *current* tests against this package and against 0.2.2.

``make compat`` runs the tests shipped in the 0.2.2 sdist (``scripts/run_upstream_tests.py``).
The repository's current tests are newer (and live in ``python/tests/`` of a checkout, in
sub-folders such as ``code/`` and ``trajectory/``). This script takes the path of a checkout::

    # e.g. from a bare mirror: git --git-dir=MIRROR archive HEAD python | tar -x -C /tmp/oe
    python scripts/run_upstream_checkout_tests.py /tmp/oe \\
        --ours-python .venv/bin/python --baseline-python .venv-baseline/bin/python

and, reusing the run folder, offline environment, import guard and report of
``run_upstream_tests.py``:

1. copies the checkout's tests (``python/tests`` or ``tests``) into ``<workdir>/upstream/tests``;
2. runs them all on 0.2.2, offline; a test that fails there with a connection error needs the
   network (a real model, LangSmith, the prompt hub) and is deselected from both runs, like the
   sdist run's fixed list (``--network-list FILE`` reuses a list written by an earlier run);
   Each run has its interpreter's bin folder first on PATH: the code tests call ``mypy`` and
   ``pyright``, so both venvs need them (and ``e2b-code-interpreter``, whose tests need the
   network and are deselected);
3. runs the rest on this package and prints both counts, per-file counts, and every test that
   fails for us with its category from ``KNOWN_DIFFERENCES`` below (or "unexpected").

It exits 1 when 0.2.2 fails an offline test for another reason than the network, or a test fails
for us that ``KNOWN_DIFFERENCES`` does not explain. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run_upstream_tests as sdist_run

REPO = sdist_run.REPO
_CONNECTION = re.compile(r"Connection|Connect|Proxy|Timeout|APIConnection", re.IGNORECASE)

_PAIRING = sdist_run._PAIRING
_COMMENTS = (
    "trajectory match failures carry a comment saying what differs (0.2.2 returns "
    "comment=None); the test compares the whole result dict"
)

# upstream node id -> (category, one-line reason). Every test that fails for us must be here;
# docs/compatibility.md lists the same differences.
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    # The sdist's differences, under the same node ids (the flat test files kept their names).
    **sdist_run.KNOWN_DIFFERENCES,
    **{
        f"tests/trajectory/{file}::{test}[trajectory_{mode}_match-{mode}-False]": (
            "deliberate",
            _COMMENTS,
        )
        for file, test, modes in (
            ("test_trajectory.py", "test_trajectory_subset_tool_call", ("strict", "superset")),
            ("test_trajectory.py", "test_trajectory_subset_tool_call", ("unordered",)),
            ("test_trajectory.py", "test_trajectory_with_different_message_count", ("strict",)),
            (
                "test_trajectory_async.py",
                "test_trajectory_with_different_message_count",
                ("strict",),
            ),
        )
        for mode in modes
    },
}


def copy_tests(checkout: Path, workdir: Path, network: list[str]) -> Path:
    """The run folder: the checkout's tests plus the sdist run's pytest config and conftest."""
    source = checkout / "python" / "tests"
    if not source.is_dir():
        source = checkout / "tests"
    if not source.is_dir():
        raise SystemExit(f"{checkout} has neither python/tests nor tests")
    run_dir = workdir / "upstream"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(source, run_dir / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (run_dir / "pytest.ini").write_text(sdist_run._PYTEST_INI, encoding="utf-8")
    (run_dir / "conftest.py").write_text(sdist_run._CONFTEST, encoding="utf-8")
    (run_dir / "network_tests.json").write_text(json.dumps(network), encoding="utf-8")
    return run_dir


def network_tests(results: dict[str, Any]) -> list[str]:
    """The tests that failed on 0.2.2 with a connection error."""
    return sorted(
        node
        for node, r in results.items()
        if r["outcome"] == "failed" and _CONNECTION.search(r["message"] or "")
    )


def _path_with(python: str) -> str:
    """PATH with the interpreter's own bin folder first: the code tests run ``mypy`` and
    ``pyright`` from PATH (install them, and e2b-code-interpreter, into both venvs)."""
    return os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a checkout of langchain-ai/openevals")
    parser.add_argument("--ours-python", required=True, help="interpreter for this package")
    parser.add_argument("--baseline-python", required=True, help="interpreter with 0.2.2")
    parser.add_argument("--version", default="0.2.2", help="version the baseline must have")
    # Outside this repository: mypy looks for a config in the parent folders, and this
    # repository's pyproject.toml (strict mode) would change what 0.2.2's mypy evaluator reports.
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "openevals-upstream-current"
    )
    parser.add_argument(
        "--network-list", type=Path, help="a network list from an earlier run (skips step 2)"
    )
    args = parser.parse_args(argv)
    ours_python = os.path.abspath(args.ours_python)
    baseline_python = os.path.abspath(args.baseline_python)
    args.workdir = args.workdir.resolve()  # pytest runs in the run folder
    args.workdir.mkdir(parents=True, exist_ok=True)

    baseline_dir = sdist_run.baseline_package_dir(baseline_python, args.version)
    baseline_env = sdist_run.offline_env(
        {"COMPAT_EXPECT_OPENEVALS": str(baseline_dir), "PATH": _path_with(baseline_python)}
    )
    if args.network_list is not None:
        network = json.loads(args.network_list.read_text(encoding="utf-8"))
    else:
        run_dir = copy_tests(args.checkout, args.workdir, [])
        everything = sdist_run.run_pytest(
            baseline_python, run_dir, args.workdir / "all-baseline.xml", baseline_env
        )
        network = network_tests(everything)
        (args.workdir / "network_tests.json").write_text(
            json.dumps(network, indent=1), encoding="utf-8"
        )
    run_dir = copy_tests(args.checkout, args.workdir, network)
    baseline = sdist_run.run_pytest(
        baseline_python, run_dir, args.workdir / "baseline.xml", baseline_env
    )
    ours_env = sdist_run.offline_env(
        {
            "PYTHONPATH": str(REPO),
            "COMPAT_EXPECT_OPENEVALS": str(REPO / "openevals"),
            "PATH": _path_with(ours_python),
        }
    )
    ours = sdist_run.run_pytest(ours_python, run_dir, args.workdir / "ours.xml", ours_env)

    inherited = set(sdist_run.KNOWN_DIFFERENCES)
    sdist_run.KNOWN_DIFFERENCES.clear()
    sdist_run.KNOWN_DIFFERENCES.update(
        # The sdist's entries whose tests now need the network (or were renamed) do not apply.
        (node, why)
        for node, why in KNOWN_DIFFERENCES.items()
        if node in ours or node not in inherited
    )
    sdist_run.NETWORK_TESTS.clear()
    for node in network:
        file, _, test = node.removeprefix("tests/").partition("::")
        sdist_run.NETWORK_TESTS.setdefault(file, {})[test] = "derived"
    text, problems = sdist_run.report(ours, baseline)
    text = text.replace(
        "openevals 0.2.2 upstream tests that need no network",
        f"openevals repository tests ({args.checkout}) that need no network",
    )
    print(text)
    (args.workdir / "report.json").write_text(
        json.dumps({"ours": ours, "baseline": baseline, "network": network}, indent=1),
        encoding="utf-8",
    )
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
