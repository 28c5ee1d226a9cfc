"""``scripts/build_public_module_list.py`` on a small package built for the purpose.

The package has every case the real list depends on: a package ``__init__`` that re-exports, a
plain module that imports for its own use, ``TYPE_CHECKING``-only and external imports, an aliased
re-export listed in ``__all__``, a private helper listed in ``__all__``, a namespace package, a
private module, and a module whose dependency is missing (read from its source alone).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build_public_module_list.py"

FILES = {
    "fakepkg/__init__.py": (
        "from typing import Any\nfrom .core import CONST, public_fn\n__all__ = ['public_fn']\n"
    ),
    "fakepkg/core.py": (
        "from typing import TYPE_CHECKING\n"
        "import json\n"
        "from fakepkg.types import Thing\n"
        "if TYPE_CHECKING:\n"
        "    from fakepkg.types import Hidden\n"
        "CONST = 'text'\n"
        "_private = 1\n"
        "def public_fn():\n"
        "    return 1\n"
        "class Klass:\n"
        "    pass\n"
        "try:\n"
        "    FALLBACK = 1\n"
        "except ImportError:\n"
        "    FALLBACK = 2\n"
    ),
    "fakepkg/types.py": "class Thing:\n    pass\nclass Hidden:\n    pass\n",
    "fakepkg/_internal.py": "X = 1\n",
    "fakepkg/ns/mod.py": (
        "from ..core import CONST as RENAMED\n"
        "__all__ = ['RENAMED', '_helper']\n"
        "def _helper():\n"
        "    return 2\n"
    ),
    "fakepkg/needs_dep.py": (
        "import not_installed_dependency_xyz\n"
        "from fakepkg.types import Thing\n"
        "VALUE = 3\n"
        "def f():\n"
        "    return VALUE\n"
    ),
}


@pytest.fixture(scope="module")
def listing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("site")
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, str(SCRIPT), "--package", "fakepkg", "--expect-version", ""]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, check=True)
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_walks_public_modules_and_namespace_packages(listing: dict[str, Any]) -> None:
    assert sorted(listing["modules"]) == [
        "fakepkg",
        "fakepkg.core",
        "fakepkg.needs_dep",
        "fakepkg.ns",
        "fakepkg.ns.mod",
        "fakepkg.types",
    ]
    assert listing["modules"]["fakepkg.ns"]["namespace_package"] is True
    assert listing["modules"]["fakepkg.core"]["file"] == "fakepkg/core.py"
    assert listing["modules"]["fakepkg"]["file"] == "fakepkg/__init__.py"
    assert listing["module_count"] == 6


def test_package_init_reexports_are_api(listing: dict[str, Any]) -> None:
    top = listing["modules"]["fakepkg"]
    assert top["all"] == ["public_fn"]
    assert top["names"] == {
        "CONST": {"origin": "reexported", "kind": "str", "from": "fakepkg.core.CONST"},
        "public_fn": {"origin": "reexported", "kind": "function", "from": "fakepkg.core.public_fn"},
    }
    assert top["other_importable"] == {"Any": "typing.Any"}


def test_plain_module_definitions_and_incidental_imports(listing: dict[str, Any]) -> None:
    core = listing["modules"]["fakepkg.core"]
    assert {name: info["kind"] for name, info in core["names"].items()} == {
        "CONST": "str",
        "FALLBACK": "other",
        "Klass": "class",
        "public_fn": "function",
    }
    assert core["incidental_imports"] == {"Thing": "fakepkg.types.Thing"}  # Hidden: TYPE_CHECKING
    # What a dependent could still import: external names and private ones (modules left out).
    assert core["other_importable"] == {
        "TYPE_CHECKING": "typing.TYPE_CHECKING",
        "_private": "defined",
    }


def test_all_brings_aliases_and_private_helpers(listing: dict[str, Any]) -> None:
    mod = listing["modules"]["fakepkg.ns.mod"]
    assert mod["names"]["RENAMED"] == {
        "origin": "reexported",
        "kind": "str",
        "from": "fakepkg.core.CONST",
    }
    assert mod["names"]["_helper"]["kind"] == "function"
    assert set(mod["names"]) == {"RENAMED", "_helper"}


def test_module_that_cannot_import_is_read_from_source(listing: dict[str, Any]) -> None:
    entry = listing["modules"]["fakepkg.needs_dep"]
    assert entry["imported"] is False
    assert "not_installed_dependency_xyz" in entry["import_error"]
    assert entry["names"] == {
        "VALUE": {"origin": "defined", "kind": "other"},
        "f": {"origin": "defined", "kind": "function"},
    }
    assert entry["incidental_imports"] == {"Thing": "fakepkg.types.Thing"}


def test_wrong_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "fakepkg").mkdir()
    (tmp_path / "fakepkg" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, str(SCRIPT), "--package", "fakepkg", "--expect-version", "0.2.2"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 1
    assert "expected fakepkg 0.2.2, found None" in out.stderr


def _baseline_python() -> Path | None:
    """The interpreter with openevals 0.2.2 (``make bench``/``make compat`` create .venv-baseline)."""
    configured = os.environ.get("OPENEVALS_BASELINE_PYTHON")
    candidate = Path(configured) if configured else REPO / ".venv-baseline" / "bin" / "python"
    return candidate if candidate.is_file() else None


@pytest.mark.slow
@pytest.mark.skipif(
    _baseline_python() is None,
    reason="no 0.2.2 baseline venv (.venv-baseline or OPENEVALS_BASELINE_PYTHON)",
)
def test_committed_list_matches_a_fresh_build(tmp_path: Path) -> None:
    python = _baseline_python()
    assert python is not None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(python), str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    committed = json.loads((Path(__file__).with_name("public_modules_0_2_2.json")).read_text())
    assert json.loads(out.stdout)["modules"] == committed["modules"]
