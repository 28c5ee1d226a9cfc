"""The package uses other libraries (the standard library included) through their public API.

An AST scan of ``openevals/`` finds three ways of reaching into another package's privates:

- ``module._name``, where ``module`` was imported from outside ``openevals``;
- ``getattr(x, "_name")`` / ``hasattr`` / ``setattr`` on anything but ``self`` or ``cls``;
- a dotted module path with a private part (``"pkg._mod"``), as passed to ``sys.modules.get``.

Each place that remains is listed in ``ALLOWED`` with the reason no public way exists. A new one
fails this test until it is removed or argued for here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"

ALLOWED: dict[tuple[str, str], str] = {
    ("utils.py", "'langsmith.testing._internal'"): (
        "LangSmith offers no public way to ask whether a @pytest.mark.langsmith test case is "
        "active; the public 0.2.2 release imports the same private context variable"
    ),
    ("utils.py", "getattr(internal, '_TEST_CASE', None)"): "the same context variable",
    ("_judge/langchain_backend.py", "'openai._response'"): (
        "module names compared with a traceback's frames (no attribute is read) to tell a "
        "malformed reply from a caller's error; an unknown name only makes the error generic"
    ),
    ("_judge/langchain_backend.py", "'openai._legacy_response'"): "the same traceback check",
    ("_judge/langchain_backend.py", "'openai.lib._parsing'"): "the same traceback check",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _foreign_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("openevals"):
                    names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("openevals") or node.module == "__future__":
                continue
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def private_accesses(source: str) -> list[str]:
    """The private accesses of one module's source, as ``ast.unparse`` / ``repr`` snippets."""
    tree = ast.parse(source)
    foreign = _foreign_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in foreign:
                found.append(ast.unparse(node))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr", "setattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id in {"self", "cls"})
        ):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            parts = text.split(".")
            if (
                len(parts) > 1
                and all(part.isidentifier() for part in parts)
                and parts[0] != "openevals"
                and any(_private(part) for part in parts[1:])
            ):
                found.append(repr(text))
    return found


def test_no_private_access_outside_the_allowed_list() -> None:
    seen: set[tuple[str, str]] = set()
    unexpected: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for snippet in private_accesses(path.read_text(encoding="utf-8")):
            key = (rel, snippet)
            seen.add(key)
            if key not in ALLOWED:
                unexpected.append(f"openevals/{rel}: {snippet}")
    assert not unexpected, "private access to another package:\n" + "\n".join(unexpected)
    stale = sorted(set(ALLOWED) - seen)
    assert not stale, f"ALLOWED lists places that no longer exist: {stale}"


def test_the_scan_finds_each_kind() -> None:
    source = (
        "import os\n"
        "from langsmith import utils\n"
        "a = os.environ._data\n"
        "b = utils._helper()\n"
        "c = getattr(client, '_provider', None)\n"
        "d = sys.modules.get('openai._client')\n"
        "e = self._mine\n"
        "f = getattr(self, '_mine', None)\n"
        "g = 'openevals._judge.core'\n"
    )
    assert sorted(private_accesses(source)) == sorted(
        [
            "os.environ._data",
            "utils._helper",
            "getattr(client, '_provider', None)",
            "'openai._client'",
        ]
    )
