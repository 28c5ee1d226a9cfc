"""The package's module-level import graph has no cycle (read with ``ast``, nothing imported),
and the generic report imports neither calibration nor pairwise."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports executed when the module is imported: top level, and inside top-level ``if`` /
    ``try`` blocks, except ``if TYPE_CHECKING:`` (never run). Function bodies are lazy."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                pending.extend(node.body)
            pending.extend(node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                pending.extend(handler.body)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    modules = {_module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # ``from pkg import x``: x may be a submodule (an edge to it) or a name in pkg.
                targets = [base]
                targets += [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "openevals.report.html" in graph and len(graph) > 100
    assert find_cycle(graph) is None


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_relative_and_submodule_imports_are_edges(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("from .sub.c import name\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
        "def lazy():\n    import pkg.a\n"
    )
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg", "pkg.b"} and "pkg.sub.c" in graph["pkg.b"]
    assert graph["pkg.sub.c"] == set() and find_cycle(graph) is None
    (pkg / "sub" / "c.py").write_text(
        "try:\n    from ..a import x\nexcept ImportError:\n    pass\n"
    )
    cycle = find_cycle(import_graph(pkg))
    assert cycle is not None and {"pkg.a", "pkg.b", "pkg.sub.c"} <= set(cycle)


def test_the_generic_report_imports_no_section_owner() -> None:
    text = (PACKAGE / "report" / "html.py").read_text(encoding="utf-8")
    assert "calibration" not in _imported_names(text)
    assert "pairwise" not in _imported_names(text)
    assert not (PACKAGE / "evaluation" / "report_sections.py").exists()


def _imported_names(text: str) -> str:
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
        elif isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
    return " ".join(out)
