"""DESIGN.md: options are passed by name, never forwarded with ``locals()`` (a reader must see
which values flow where). An AST scan of ``openevals/`` finds every ``locals()`` call."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"


def locals_calls(source: str) -> list[int]:
    """The lines of ``source`` that call ``locals()``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"locals", "vars"}
        and not node.args
    ]


def test_no_option_is_forwarded_with_locals() -> None:
    found = [
        f"openevals/{path.relative_to(PACKAGE).as_posix()}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in locals_calls(path.read_text(encoding="utf-8"))
    ]
    assert not found, "locals() forwarding (pass the options by name):\n" + "\n".join(found)


def test_the_scan_sees_a_call() -> None:
    assert locals_calls("def f(a):\n    return g(locals())\n") == [2]
    assert locals_calls("def f(a):\n    return g(dict(a=a))\n") == []
