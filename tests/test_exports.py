"""One export style everywhere: every public package is a lazy map (``openevals._lazy_exports``).

* every name of every public ``__all__`` (packages and modules) resolves;
* each package declares its exports once, as ``name as name`` imports under ``TYPE_CHECKING``;
  what the package resolves at run time (read from the same lines) is exactly what a parse of
  them finds, and ``__all__`` is those names;
* each declared module really defines (or re-exports) its name.

Laziness of ``import openevals`` itself is checked in ``tests/test_import_cost.py``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

import openevals
from tests.compat.signature_snapshot import public_modules

REPO = Path(__file__).resolve().parents[1]

# Every package that re-exports names, found by reading the package (no list to keep):
# ``openevals.prompts`` (and its topic packages) is data: it defines its constants eagerly (its
# own tables index every constant at import), so it is not a map of other modules' names.
_STYLE_LINE = "__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())"


def _public_packages() -> list[str]:
    packages = []
    for init in sorted((REPO / "openevals").rglob("__init__.py")):
        package = ".".join(init.relative_to(REPO).parent.parts)
        if "_" not in {part[0] for part in package.split(".")} and not package.startswith(
            "openevals.prompts"
        ):
            packages.append(package)
    return packages


MAPPED_PACKAGES = tuple(
    package
    for package in _public_packages()
    if _STYLE_LINE in (REPO / package.replace(".", "/") / "__init__.py").read_text("utf-8")
)


def _all_names() -> list[tuple[str, str]]:
    pairs = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        pairs += [(module_name, name) for name in getattr(module, "__all__", ())]
    return pairs


ALL_NAMES = _all_names()


def test_the_walk_sees_every_package() -> None:
    modules = {m for m, _ in ALL_NAMES}
    assert set(MAPPED_PACKAGES) <= modules
    assert len(ALL_NAMES) > 300


@pytest.mark.parametrize(("module", "name"), ALL_NAMES, ids=lambda v: v)
def test_every_public_name_imports(module: str, name: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"from {module} import {name}", namespace)  # the form users write
    assert namespace[name] is getattr(importlib.import_module(module), name)


def _type_checking_imports(package: str) -> dict[str, str]:
    """name -> module of the ``from m import name as name`` lines under ``if TYPE_CHECKING:``."""
    source = Path(importlib.import_module(package).__file__ or "").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module != "collections.abc":
                    for alias in statement.names:
                        assert alias.asname == alias.name, (
                            f"{package}: {alias.name} not re-exported"
                        )
                        found[alias.name] = str(statement.module)
    return found


@pytest.mark.parametrize("package", MAPPED_PACKAGES)
def test_each_package_is_one_explicit_lazy_map(package: str) -> None:
    module = importlib.import_module(package)
    exports = _type_checking_imports(package)
    assert exports, package
    assert module.__all__ == sorted(exports)
    assert module.__getattr__.__qualname__.startswith("_lazy_exports")
    assert openevals._declared_exports(package, vars(module)) == exports
    for name, source in exports.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name)
    assert set(module.__all__) <= set(dir(module))


def test_unknown_names_raise_attribute_error_naming_the_package() -> None:
    import openevals.json

    with pytest.raises(AttributeError, match=r"module 'openevals.json' has no attribute 'nope'"):
        openevals.json.nope  # noqa: B018
    assert not hasattr(openevals, "exact_matcher")


def test_submodules_stay_reachable_as_attributes() -> None:
    # Before, packages imported their modules eagerly, so ``pkg.module`` worked after ``import pkg``.
    import openevals.json
    import openevals.simulators

    assert openevals.json.match.__name__ == "openevals.json.match"
    assert openevals.simulators.multiturn.__name__ == "openevals.simulators.multiturn"


def test_pairwise_judges_are_exported_at_the_top_level() -> None:
    from openevals.pairwise.judge import create_pairwise_llm_as_judge

    assert openevals.create_pairwise_llm_as_judge is create_pairwise_llm_as_judge
    assert "create_async_pairwise_llm_as_judge" in openevals.__all__


def test_every_init_of_the_package_follows_the_style() -> None:
    for package in _public_packages():
        source = (REPO / package.replace(".", "/") / "__init__.py").read_text(encoding="utf-8")
        if package in MAPPED_PACKAGES:
            assert "_EXPORTS" not in source and "__all__ =" not in source, package
        else:  # a package whose __init__ is a module of its own (e2b sandbox steps)
            assert "_lazy_exports" not in source and "__getattr__" not in source, package
    assert len(MAPPED_PACKAGES) >= 20, MAPPED_PACKAGES


def test_the_walk_reads_single_and_grouped_imports() -> None:
    namespace = {"__file__": None, "__loader__": None}
    source = (
        "if TYPE_CHECKING:\n    from a.b import (\n        x as x,\n        y as y,\n    )\n"
        "    from c import z as z\n    from d import w, v as other\n"
    )

    class Loader:
        def get_source(self, name: str) -> str:
            return source

    namespace["__loader__"] = Loader()
    assert openevals._declared_exports("pkg", namespace) == {"x": "a.b", "y": "a.b", "z": "c"}
    with pytest.raises(ImportError, match="source"):
        openevals._declared_exports("pkg", {"__file__": None})
