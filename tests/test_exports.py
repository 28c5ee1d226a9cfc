"""One export style everywhere: every public package is a lazy map (``openevals._lazy_exports``).

* every name of every public ``__all__`` (packages and modules) resolves;
* each package's ``__all__`` is derived from its ``_EXPORTS`` map, and its ``TYPE_CHECKING``
  imports re-export exactly the names of the map, from the modules the map names;
* the map points at the module that really defines (or re-exports) each name.

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

# Every package that re-exports names. ``openevals.prompts`` (and its topic packages) is data:
# it defines its constants eagerly (its own tables index every constant at import), so it is
# not a map of other modules' names.
MAPPED_PACKAGES = (
    "openevals",
    "openevals.audit",
    "openevals.calibration",
    "openevals.code",
    "openevals.code.e2b",
    "openevals.comparison",
    "openevals.data",
    "openevals.evaluation",
    "openevals.graph_trajectory",
    "openevals.json",
    "openevals.pairwise",
    "openevals.rag",
    "openevals.report",
    "openevals.simulators",
    "openevals.store",
    "openevals.viewer",
    "openevals.string",
    "openevals.testing",
    "openevals.text",
    "openevals.traces",
    "openevals.trajectory",
    "openevals.trust",
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
    exports: dict[str, str] = module._EXPORTS
    assert module.__all__ == sorted(exports)
    assert module.__getattr__.__qualname__.startswith("_lazy_exports")
    assert _type_checking_imports(package) == exports
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
    for init in sorted((REPO / "openevals").rglob("__init__.py")):
        package = ".".join(init.relative_to(REPO).parent.parts)
        if "_" in {part[0] for part in package.split(".")} or package.startswith(
            "openevals.prompts"
        ):
            continue
        source = init.read_text(encoding="utf-8")
        if package in MAPPED_PACKAGES:
            assert "_lazy_exports(__name__, _EXPORTS, globals())" in source, package
        else:  # a package whose __init__ is a module of its own (e2b sandbox steps)
            assert "_EXPORTS" not in source and "__getattr__" not in source, package
