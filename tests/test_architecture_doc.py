"""ARCHITECTURE.md's package map is true to the code: every module and package it names exists,
each stated line count is within 20% (or 100 lines, whichever is larger) of the real one, and the
package total is right."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "openevals"

# "  name.py   1,234  what it holds" / "  pkg/  1,234  ... (largest: mod.py, 123)"
_ENTRY = re.compile(r"^  (?P<name>[\w.]+/?)\s+(?P<lines>[\d,]+)\s")
_LARGEST = re.compile(r"largest:\s*(?P<name>[\w./]+),\s*(?P<lines>[\d,]+)\)")
_TOTAL = re.compile(r"^openevals/\s+(?P<lines>[\d,]+)\s+lines in total")


def _lines(path: Path) -> int:
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def _close(stated: int, real: int) -> bool:
    return abs(stated - real) <= max(100, real // 5)


def package_map(text: str) -> list[str]:
    """The lines of the fenced block under ``## Package map``."""
    section = text.split("## Package map", 1)[1]
    block = section.split("```", 2)[1]
    return block.splitlines()


def check_map(lines: list[str], package: Path) -> list[str]:
    """Every problem with the map's names and figures (empty when it is true)."""
    problems: list[str] = []
    joined = "\n".join(lines)
    total = next((m for line in lines if (m := _TOTAL.match(line))), None)
    real_total = _lines(package)
    if total is None:
        problems.append("no 'openevals/  N  lines in total' line")
    elif not _close(int(total["lines"].replace(",", "")), real_total):
        problems.append(f"total: stated {total['lines']}, real {real_total}")
    named: list[str] = []
    current: Path | None = None
    for line in lines:
        entry = _ENTRY.match(line)
        if entry:
            name = entry["name"]
            current = package / name.rstrip("/")
            named.append(name)
            if not current.exists():
                problems.append(f"{name}: does not exist")
                continue
            real = _lines(current)
            stated = int(entry["lines"].replace(",", ""))
            if not _close(stated, real):
                problems.append(f"{name}: stated {stated}, real {real}")
        for largest in _LARGEST.finditer(line):
            if current is None or not current.is_dir():
                problems.append(f"'largest' outside a package: {line.strip()}")
                continue
            module = current / largest["name"]
            if not module.exists():
                problems.append(f"{current.name}/{largest['name']}: does not exist")
                continue
            biggest = max(current.rglob("*.py"), key=_lines)
            if biggest != module and _lines(biggest) > _lines(module) + 40:
                problems.append(f"{current.name}/: largest is {biggest.name}, not {module.name}")
            stated = int(largest["lines"].replace(",", ""))
            if not _close(stated, _lines(module)):
                problems.append(f"{module.name}: stated {stated}, real {_lines(module)}")
    # Every top-level module and package of openevals/ is on the map.
    for child in sorted(package.iterdir()):
        if child.name.startswith((".", "__pycache__")) or not (
            child.suffix == ".py" or (child / "__init__.py").exists()
        ):
            continue
        shown = child.name + ("/" if child.is_dir() else "")
        if shown not in named:
            problems.append(f"{shown}: missing from the map")
    if not joined:
        problems.append("empty map")
    return problems


def test_the_package_map_is_true() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert check_map(package_map(text), PACKAGE) == []


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    pkg = tmp_path / "openevals"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n" * 10)
    (pkg / "big.py").write_text("x = 1\n" * 500)
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "core.py").write_text("x = 1\n" * 200)
    return pkg


def test_the_checker_accepts_a_true_map(tiny: Path) -> None:
    lines = [
        "openevals/     710  lines in total",
        "  __init__.py   10  exports",
        "  big.py       500  a module",
        "  sub/         200  a package (largest: core.py, 200)",
    ]
    assert check_map(lines, tiny) == []


def test_the_checker_catches_wrong_figures_and_names(tiny: Path) -> None:
    lines = [
        "openevals/     900  lines in total",
        "  __init__.py   10  exports",
        "  big.py       380  a module, 24% off",
        "  gone.py       10  removed",
        "  sub/         200  a package (largest: other.py, 200)",
    ]
    problems = check_map(lines, tiny)
    assert problems == [
        "total: stated 900, real 710",
        "big.py: stated 380, real 500",
        "gone.py: does not exist",
        "sub/other.py: does not exist",
    ]
    assert check_map(lines[:2], tiny)[-2:] == [
        "big.py: missing from the map",
        "sub/: missing from the map",
    ]
