"""CONTRIBUTING.md's worked changes are real: each one, applied to a scratch copy of the
repository, passes the project's own checks, and the cost it states (files and edits) is the
cost of its blocks.

A change in CONTRIBUTING.md is a heading ``### Change: <what> (N files, M edits)`` followed by
fenced blocks whose info string names where the block goes::

    ```python file=openevals/string/length_ratio.py          (a new file)
    ```python file=openevals/string/__init__.py after=ANCHOR (inserted after the first line
                                                               containing ANCHOR)
    ```python check                                          (run once every change is in)

Every ``file=`` block is one edit; the files are the distinct ``file=`` paths. The scratch copy takes the
tracked files of the repository (and the mypy cache, when there is one, so the type check is
incremental), applies every change, and runs ruff, ``mypy --strict`` on the package and the
checks in :data:`CHECKS` together with any test file a change adds.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

CHECKS = (
    "tests/robustness/test_message_rule.py",
    "tests/test_architecture_doc.py",
    "tests/test_exports.py",
    "tests/compat/test_signatures.py",
    "tests/judge_options",
    "tests/prompts/test_prompts.py",
    "tests/contract/test_import_graph.py",
)
"""The project's checks a change must pass (besides ruff, mypy and its own tests)."""

_HEADING = re.compile(
    r"^### Change: (?P<what>.+?) \((?P<files>\d+) files?, (?P<edits>\d+) edits?\)\s*$"
)
_FENCE = re.compile(r"^```(?P<lang>\w+) (?P<info>file=.*|check)$")


@dataclass(frozen=True)
class Block:
    file: str
    after: str | None
    text: str


@dataclass(frozen=True)
class Change:
    what: str
    files: int
    edits: int
    blocks: tuple[Block, ...]
    checks: tuple[str, ...] = ()


def parse_changes(text: str) -> list[Change]:
    """The worked changes of a CONTRIBUTING text, in order."""
    changes: list[Change] = []
    head: re.Match[str] | None = None
    blocks: list[Block] = []
    checks: list[str] = []
    lines = text.splitlines()
    i = 0

    def close() -> None:
        if head is not None:
            counts = int(head["files"]), int(head["edits"])
            changes.append(Change(head["what"], *counts, tuple(blocks), tuple(checks)))

    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            close()
            head, blocks, checks = _HEADING.match(line), [], []
        elif (fence := _FENCE.match(line)) and head is not None:
            end = lines.index("```", i + 1)
            text = "\n".join(lines[i + 1 : end])
            if fence["info"] == "check":
                checks.append(text)
            else:
                info = dict(_info_items(fence["info"]))
                blocks.append(Block(info["file"], info.get("after"), text))
            i = end
        i += 1
    close()
    return changes


def _info_items(info: str) -> list[tuple[str, str]]:
    items = []
    for word in shlex.split(info):
        key, _, value = word.partition("=")
        items.append((key, value))
    return items


def apply_change(root: Path, change: Change) -> list[Path]:
    """Write ``change``'s blocks into the tree at ``root``; the test files it adds."""
    added_tests: list[Path] = []
    for block in change.blocks:
        path = root / block.file
        if block.after is None:
            assert not path.exists(), f"{change.what}: {block.file} exists; give after="
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text + "\n", encoding="utf-8")
            if path.name.startswith("test_"):
                added_tests.append(path)
            continue
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        at = next((n for n, line in enumerate(lines) if block.after in line), None)
        assert at is not None, f"{change.what}: {block.after!r} is not in {block.file}"
        lines.insert(at + 1, block.text + "\n")
        path.write_text("".join(lines), encoding="utf-8")
    return added_tests


def test_the_parser_reads_files_anchors_and_counts() -> None:
    text = (
        "## Changes\n\n### Change: a thing (2 files, 3 edits)\n\nprose\n\n"
        "```python file=a/b.py\nx = 1\n```\n\n```python file=a/c.py after='ANCHOR here'\ny\n```\n"
        "```python file=a/c.py after=Z\nz\n```\n```python check\nassert 1\n```\n"
        "\n### Other\n\n```python file=q.py\nno\n```\n"
    )
    (change,) = parse_changes(text)
    assert change.checks == ("assert 1",)
    assert (change.what, change.files, change.edits) == ("a thing", 2, 3)
    assert change.blocks == (
        Block("a/b.py", None, "x = 1"),
        Block("a/c.py", "ANCHOR here", "y"),
        Block("a/c.py", "Z", "z"),
    )


def test_contributing_states_the_cost_of_each_change() -> None:
    changes = parse_changes((REPO / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    assert [c.what for c in changes] == [
        "a deterministic evaluator",
        "a judge",
        "a judge option",
        "a report section",
    ]
    for change in changes:
        files = {block.file for block in change.blocks}
        assert (len(files), len(change.blocks)) == (change.files, change.edits), (
            f"{change.what}: the heading says {change.files} files, {change.edits} edits; "
            f"its blocks touch {len(files)} files in {len(change.blocks)} edits"
        )


def _tracked(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in out.split("\0") if name]


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the git checkout")
def test_every_change_passes_the_projects_checks_on_a_scratch_copy(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for name in _tracked(REPO):
        source = REPO / name
        if source.is_file():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if (REPO / ".mypy_cache").is_dir():
        shutil.copytree(REPO / ".mypy_cache", root / ".mypy_cache")
    changes = parse_changes((root / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    added = [test for change in changes for test in apply_change(root, change)]
    touched = sorted(
        {block.file for c in changes for block in c.blocks if block.file.endswith(".py")}
    )
    env = {**os.environ, "PYTHONPATH": str(root), "OPENEVALS_CONTRIBUTING_SCRATCH": "1"}
    bin_dir = Path(sys.executable).parent

    def run(*command: str) -> None:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, (
            f"{' '.join(command)}\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
        )

    run(str(bin_dir / "ruff"), "check", *touched)
    run(str(bin_dir / "ruff"), "format", "--check", *touched)
    run(sys.executable, "-m", "mypy", "--strict", "openevals")
    run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        *CHECKS,
        *(str(test.relative_to(root)) for test in added),
    )
    for change in changes:
        for check in change.checks:
            run(sys.executable, "-c", check)
