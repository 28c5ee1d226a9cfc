"""The rule behind issue 27, item 3, kept for the future: a message shows values with show().

An f-string in ``raise SomeError(...)``, in an exception built to be returned, or in a warning,
that formats a name or expression with ``!r`` (or calls ``repr()`` on one) can raise
``RecursionError`` on a deep value and copies a huge one whole. Every such site in
``openevals/`` uses ``openevals._repr.show`` instead; the few that show a value the library
itself defines (an allowed list of our own names) are listed here with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"

# (module path under openevals/, the expression as ast.unparse gives it) -> why !r is right there
ALLOWED: dict[tuple[str, str], str] = {
    ("_judge/answers.py", "list(spec.choices)"): (
        "the judge's own choices (numbers checked at creation), shown whole to the model on repair"
    ),
    ("_judge/answers.py", "schema['enum']"): (
        "the enum of a schema compiled at creation, shown whole to the model on repair"
    ),
    ("rag/_items.py", "list(keys)"): "the library's fixed container keys",
    ("rag/_ranking_metrics.py", "list(option.choices)"): "the library's fixed option choices",
    ("rag/_ranking_metrics.py", "accepted"): "the library's sorted metric names",
    ("rag/llm_metrics.py", "raw"): (
        "the error's raw= attribute keeps the whole answer (the message itself uses show)"
    ),
}


def _is_message(node: ast.AST) -> bool:
    """A raise, an exception built to be raised or returned, or a warning."""
    if isinstance(node, ast.Raise):
        return node.exc is not None
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.endswith(("Error", "Exception")) or name == "warn"


def _raised_reprs(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, expression)`` of every ``!r`` / ``repr(...)`` on a non-literal in a message."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if not _is_message(node):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.FormattedValue) and inner.conversion == ord("r"):
                target = inner.value
            elif (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "repr"
                and len(inner.args) == 1
            ):
                target = inner.args[0]
            else:
                continue
            if not isinstance(target, ast.Constant):
                found.add((inner.lineno, ast.unparse(target)))
    return sorted(found)


def _sites() -> list[tuple[str, int, str]]:
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        sites.extend((module, line, expr) for line, expr in _raised_reprs(tree))
    return sites


def test_raised_messages_show_values_with_the_bounded_helper() -> None:
    offending = [
        f"openevals/{module}:{line}: {{{expr}!r}}"
        for module, line, expr in _sites()
        if (module, expr) not in ALLOWED
    ]
    assert offending == [], (
        "show values in raised messages with openevals._repr.show(value), not !r or repr() "
        "(see CONTRIBUTING.md, 'Values in messages'); a value the library itself defines may be allow-listed "
        "in this test with a reason:\n" + "\n".join(offending)
    )


def test_every_allowed_site_still_exists() -> None:
    present = {(module, expr) for module, _, expr in _sites()}
    assert sorted(set(ALLOWED) - present) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('raise ValueError(f"got {value!r}")', [(1, "value")]),
        ('raise TypeError("got " + repr(value))', [(1, "value")]),
        ("raise ValueError(f\"one of {'a'!r}\")", []),
        ('raise ValueError(f"got {show(value)}")', []),
        ('message = f"{value!r}"', []),
        ('return ValueError(f"got {value!r}")', [(1, "value")]),
        ('warnings.warn(f"got {value!r}")', [(1, "value")]),
    ],
    ids=["f-string", "repr-call", "literal", "show", "not-a-message", "returned", "warning"],
)
def test_the_scan_finds_what_it_should(source: str, expected: list[tuple[int, str]]) -> None:
    assert _raised_reprs(ast.parse(source)) == expected
