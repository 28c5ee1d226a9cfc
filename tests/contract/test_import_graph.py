"""Dependencies point one way (issue 34). Every import statement of the package is read with
``ast`` (nothing is imported), those inside function bodies included; only ``if TYPE_CHECKING:``
blocks are exempt. The test fails on any circle between modules, and on any import that goes up
the layer order ARCHITECTURE.md writes (its ``## Layers`` block), which must name every top-level
module and package of ``openevals/`` exactly once. Failures name the importing file and line."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "openevals"

# module -> imported module -> the lines of the importing module that import it
Graph = dict[str, dict[str, list[int]]]


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, wherever it is (function bodies, classes, ``try``),
    except under ``if TYPE_CHECKING:`` (never run; its ``else`` branch is read)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def import_graph(root: Path = PACKAGE) -> Graph:
    """Module -> the package's modules it imports, with the lines (relative imports resolved;
    ``from pkg import x`` is an edge to ``pkg`` and, when ``x`` is a submodule, to ``pkg.x``)."""
    modules = {_module_name(p, root): p for p in root.rglob("*.py")}
    graph: Graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        edges: dict[str, list[int]] = {}
        for node in all_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                if target in modules and target != name:
                    edges.setdefault(target, []).append(node.lineno)
        graph[name] = {target: sorted(set(lines)) for target, lines in edges.items()}
    return graph


def find_cycle(graph: dict[str, set[str]] | Graph) -> list[str] | None:
    """One circle of the graph (its first node repeated at the end), or ``None``. Iterative."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def _where(module: str, line: int) -> str:
    """``openevals/x/y.py:12`` for a module name and a line (a package is its ``__init__.py``)."""
    path = Path(*module.split("."))
    is_package = (REPO / path / "__init__.py").exists()
    return f"{path / '__init__.py' if is_package else path.with_suffix('.py')}:{line}"


def describe_cycle(graph: Graph, cycle: list[str]) -> str:
    """The circle as its imports, one per line: ``file:line imports module``."""
    return "\n".join(
        f"{_where(a, graph[a][b][0])} imports {b}" for a, b in itertools.pairwise(cycle)
    )


_LAYER = re.compile(r"^(?P<number>\d+)\s+(?P<label>[\w-]+)\s+(?P<names>.*)$")


def written_layers(text: str) -> list[list[str]]:
    """The layers of ARCHITECTURE.md's ``## Layers`` block, lowest first: ``N  label  a, b, ...``
    lines, a line that starts with spaces continuing the layer above it."""
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    layers: list[list[str]] = []
    for line in block.splitlines()[1:]:
        entry = _LAYER.match(line)
        if entry:
            assert int(entry["number"]) == len(layers) + 1, f"layer numbers out of order: {line}"
            layers.append([])
            names = entry["names"]
        elif line.strip() and layers:
            names = line
        else:
            continue
        layers[-1] += [n.strip() for n in names.split(",") if n.strip()]
    return layers


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_problems(graph: Graph, layers: list[list[str]]) -> list[str]:
    """Each import against the layer order (a module imports from its own layer or lower),
    named by the importing file and line."""
    where = {name: number for number, names in enumerate(layers) for name in names}
    problems = []
    for module, edges in sorted(graph.items()):
        for target, lines in sorted(edges.items()):
            low, high = where.get(_top(module)), where.get(_top(target))
            at = ", ".join(_where(module, line) for line in lines)
            if low is None or high is None:
                problems.append(f"{at} imports {target}: a part missing from the layers")
            elif high > low:
                problems.append(
                    f"{at} imports {target}: {_top(module)} (layer {low + 1}) must not import "
                    f"{_top(target)} (layer {high + 1})"
                )
    return problems


def _tree_parts(root: Path) -> set[str]:
    parts = {root.name}
    for child in root.iterdir():
        if child.suffix == ".py" and child.name != "__init__.py":
            parts.add(child.stem)
        elif (child / "__init__.py").exists():
            parts.add(child.name)
    return parts


BACK_EDGES: dict[tuple[str, str], str] = {}
"""Imports allowed to close a circle, each with why (none today: ``EvaluationResult.load``, an
alias of ``load_run`` that closed one, was removed before release). Nothing else may: the test
fails on any circle that does not go through one of these, and on an entry whose import is
gone."""


def test_there_is_no_circle_between_modules() -> None:
    graph = import_graph()
    assert "openevals.report.html" in graph and len(graph) > 100
    for module, target in BACK_EDGES:
        assert target in graph[module], f"stale BACK_EDGES entry {module} -> {target}: remove it"
    kept = {m: {t: ls for t, ls in e.items() if (m, t) not in BACK_EDGES} for m, e in graph.items()}
    cycle = find_cycle(kept)
    assert cycle is None, "an import circle:\n" + describe_cycle(graph, cycle)


def test_every_import_follows_the_written_layer_order() -> None:
    layers = written_layers((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    named = [name for layer in layers for name in layer]
    twice = sorted({name for name in named if named.count(name) > 1})
    assert twice == [], f"named twice in ARCHITECTURE.md's layers: {twice}"
    parts = _tree_parts(PACKAGE)
    assert set(named) - parts == set(), "ARCHITECTURE.md's layers name parts that do not exist"
    assert parts - set(named) == set(), "parts of openevals/ missing from ARCHITECTURE.md's layers"
    problems = layer_problems(import_graph(), layers)
    assert problems == [], "imports against the layer order:\n" + "\n".join(problems)


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    long_chain = {str(i): {str(i + 1)} for i in range(5000)}
    assert find_cycle(long_chain) is None  # iterative: no recursion limit
    long_chain["5000"] = {"0"}
    assert find_cycle(long_chain) == [*map(str, range(5001)), "0"]


def test_lazy_relative_and_submodule_imports_are_edges(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("\nfrom .sub.c import name\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
    )
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg": [1], "pkg.b": [1]}
    assert graph["pkg.b"] == {"pkg.sub.c": [2]}
    assert graph["pkg.sub.c"] == {} and find_cycle(graph) is None
    # An import inside a function body (the lazy kind) is an edge, so it cannot hide a circle.
    (pkg / "sub" / "c.py").write_text("class C:\n    def lazy(self):\n        from ..a import x\n")
    graph = import_graph(pkg)
    cycle = find_cycle(graph)
    assert cycle == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    assert graph["pkg.sub.c"] == {"pkg.a": [3]}


def test_failures_name_the_file_and_line() -> None:
    graph: Graph = {
        "openevals.report.html": {"openevals.evaluation.runner": [12, 40]},
        "openevals.evaluation.runner": {"openevals.report.html": [7]},
    }
    assert describe_cycle(graph, find_cycle(graph) or []) == (
        "openevals/evaluation/runner.py:7 imports openevals.report.html\n"
        "openevals/report/html.py:12 imports openevals.evaluation.runner"
    )
    layers = [["openevals", "report"], ["evaluation"]]
    assert layer_problems(graph, layers) == [
        "openevals/report/html.py:12, openevals/report/html.py:40 imports "
        "openevals.evaluation.runner: report (layer 1) must not import evaluation (layer 2)"
    ]
    assert layer_problems({"openevals.other": {"openevals": [3]}}, layers) == [
        "openevals/other.py:3 imports openevals: a part missing from the layers"
    ]


def test_the_layers_block_is_parsed() -> None:
    text = "## Layers\n\n```text\n1  core  a, b,\n          c\n2  top   d\n```\n"
    assert written_layers(text) == [["a", "b", "c"], ["d"]]


def test_generic_code_imports_no_section_owner() -> None:
    """The generic report and notebook views know no calibration or pairwise code (sections plug
    in through ``ReportSection``), and a run's result knows no calibration."""
    for path in (PACKAGE / "report").glob("*.py"):
        imported = _imported_names(path.read_text(encoding="utf-8"))
        assert "calibration" not in imported and "pairwise" not in imported, path
    result = _imported_names((PACKAGE / "evaluation" / "result.py").read_text(encoding="utf-8"))
    assert "calibration" not in result


def _imported_names(text: str) -> str:
    out = []
    for node in all_imports(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
        else:
            out.extend(alias.name for alias in node.names)
    return " ".join(out)


def test_async_detection_lives_in_the_contract() -> None:
    """Whether a callable is async is decided by ``_contract.is_async_callable`` alone (issue 34
    item 6): no other module of the package asks ``inspect`` or ``asyncio`` about a function."""
    asks = ("iscoroutinefunction", "isasyncgenfunction", "markcoroutinefunction")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "_contract.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in asks:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")  # type: ignore[attr-defined]
    assert offenders == []
