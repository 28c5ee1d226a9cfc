"""The signature snapshots, checked or rewritten with one command.

    python -m tests.contract.snapshot            # compare; exit 1 and list what differs
    python -m tests.contract.snapshot --update   # rewrite both files from the current code

Two files are written:

* ``tests/compat/signatures.json``: the public call shapes of the deterministic families and
  ``code/`` (:func:`tests.compat.signature_snapshot.snapshot`), read by
  ``tests/compat/test_signatures.py``;
* ``tests/judge_options/judge_signatures.json``: every declared judge factory's parameters
  (long prompt defaults as a hash of their text, so changing a default prompt shows here), read
  by ``tests/judge_options/test_signatures.py``.

Update them only for an intended change to a public signature or default prompt, and say so in
the changelog: the tests compare the code with these files, so a rewrite accepts the change.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
COMPAT_FILE = TESTS / "compat" / "signatures.json"
JUDGE_FILE = TESTS / "judge_options" / "judge_signatures.json"

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"


def _declaring_modules() -> tuple[str, ...]:
    """Every module of the package that declares judge factories (a module-level
    ``judge_factories(...)`` call), found by reading the source: a new judge family needs no
    entry here."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            value = getattr(node, "value", None)
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "judge_factories":
                parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
                found.append(".".join(p for p in parts if p != "__init__"))
                break
    return tuple(found)


JUDGE_MODULES = _declaring_modules()
NEW_JUDGE_OPTIONS = {
    "samples": "int = 1",
    "score_weighting": "ScoreWeighting | None = None",
    "timeout": "float | None = None",
}


def default_text(value: Any) -> str:
    """A parameter default as snapshot text (long strings, i.e. prompts, as a hash)."""
    if value is inspect.Parameter.empty:
        return "<required>"
    if isinstance(value, str) and len(value) > 40:
        return "sha1:" + hashlib.sha1(value.encode()).hexdigest()[:12]
    return repr(value)


def judge_signature(factory: Any, first: int | None = None) -> str:
    """A judge factory's parameters (without the options every judge gained; only the ``first``
    of them when given) and return type."""
    sig = inspect.signature(factory)
    params = [
        f"{p.name}: {p.annotation} = {default_text(p.default)}"
        for p in sig.parameters.values()
        if p.name not in NEW_JUDGE_OPTIONS
    ]
    return ", ".join(params[:first]) + " -> " + str(sig.return_annotation)


def judge_snapshot() -> dict[str, str]:
    """``"module:factory" -> judge_signature`` for every declared judge factory (the first of
    :data:`JUDGE_MODULES` that exports it)."""
    from openevals._judge.options import FACTORIES

    modules = [importlib.import_module(name) for name in JUDGE_MODULES]
    out: dict[str, str] = {}
    for name in sorted(FACTORIES):
        module = next(m for m in modules if hasattr(m, name))
        out[f"{module.__name__}:{name}"] = judge_signature(getattr(module, name))
    return out


def compat_snapshot() -> dict[str, Any]:
    from tests.compat.signature_snapshot import snapshot

    return snapshot()


def _text(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def differences(path: Path, current: Any) -> list[str]:
    """The top-level keys (two levels for the compat file) where ``path`` and ``current`` differ."""
    stored = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    out: list[str] = []

    def walk(old: Any, new: Any, prefix: str, depth: int) -> None:
        if depth == 0 or not (isinstance(old, dict) and isinstance(new, dict)):
            if old != new:
                out.append(prefix)
            return
        for key in sorted(set(old) | set(new)):
            walk(old.get(key), new.get(key), f"{prefix}/{key}" if prefix else key, depth - 1)

    walk(stored, current, "", 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.contract.snapshot")
    parser.add_argument("--update", action="store_true", help="rewrite the snapshot files")
    args = parser.parse_args(argv)
    status = 0
    for path, current in ((COMPAT_FILE, compat_snapshot()), (JUDGE_FILE, judge_snapshot())):
        if args.update:
            path.write_text(_text(current), encoding="utf-8")
            print(f"wrote {os.path.relpath(path)}")
            continue
        diff = differences(path, current)
        for key in diff:
            print(f"{os.path.relpath(path)}: {key} differs")
        status |= bool(diff)
    return status


if __name__ == "__main__":
    sys.exit(main())
