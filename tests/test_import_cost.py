"""``import openevals`` and the deterministic evaluators load no LLM, sandbox or ML stack.

Each check runs in a fresh interpreter (``python -X importtime``) so modules already imported by the
test session cannot hide an import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_exports import MAPPED_PACKAGES

REPO = Path(__file__).resolve().parents[1]

HEAVY = (
    "langchain_openai",
    "openai",
    "e2b",
    "e2b_code_interpreter",
    "torch",
    "sentence_transformers",
    "langsmith.testing",
    "langchain_core.language_models",
    "openevals.testing",
    "pytest",
)

_TRACING_VARS = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _TRACING_VARS}
    env["PYTHONPATH"] = str(REPO)
    env.pop("PYTHONSTARTUP", None)
    return env


def _run(code: str) -> tuple[set[str], set[str]]:
    """Run ``code`` in a fresh interpreter; return (modules seen by -X importtime, sys.modules)."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        cwd=REPO,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                imported.add(name)
    loaded = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    return imported, loaded


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "code",
    [
        "import openevals",
        "from openevals import exact_match, levenshtein_distance",
        "import openevals.types, openevals.utils",
        "from openevals.utils import _run_evaluator, _arun_evaluator",
        (
            "from openevals import exact_match, levenshtein_distance\n"
            "exact_match(outputs={'a': 1}, reference_outputs={'a': 1})\n"
            "levenshtein_distance(outputs='kitten', reference_outputs='sitting')"
        ),
        (
            "import asyncio\n"
            "from openevals.exact import exact_match_async\n"
            "asyncio.run(exact_match_async(outputs=1, reference_outputs=1))"
        ),
    ],
    ids=["import", "from-import", "types-utils", "runner", "call-sync", "call-async"],
)
def test_no_heavy_modules(code: str) -> None:
    imported, loaded = _run(code)
    assert "openevals" in imported
    assert _heavy(imported) == []
    assert _heavy(loaded) == []


def test_calling_evaluators_without_tracing_loads_no_langsmith() -> None:
    _, loaded = _run(
        "from openevals import exact_match\nexact_match(outputs=1, reference_outputs=1)"
    )
    assert sorted(m for m in loaded if m == "langsmith" or m.startswith("langsmith.")) == []


def test_the_probe_detects_a_heavy_import() -> None:
    imported, loaded = _run("import openevals\nimport langsmith.testing")
    assert "langsmith.testing" in _heavy(imported)
    assert "langsmith.testing" in _heavy(loaded)


# What no package's ``import`` may load: model clients, LangChain, LangSmith, and the libraries
# statistics and reports load on use (numpy, jinja2).
NOT_AT_IMPORT = ("numpy", "openai", "langchain", "langchain_core", "langsmith", "jinja2")


@pytest.mark.parametrize("package", MAPPED_PACKAGES)
def test_importing_a_package_loads_only_its_map(package: str) -> None:
    _, loaded = _run(f"import {package}")
    roots = {name.split(".")[0] for name in loaded}
    assert sorted(roots & set(NOT_AT_IMPORT)) == []
    # The map is all a package loads of its own: none of the modules it exports from.
    own = sorted(
        m for m in loaded if m.startswith(package + ".") and m.count(".") > package.count(".")
    )
    assert own == [], own


# The data libraries load only when such an object or file is passed (issue 22).
DATA_LIBRARIES = ("pandas", "polars", "pyarrow", "datasets")


@pytest.mark.parametrize(
    "code",
    [
        "import openevals",
        "import openevals.data.sources, openevals.data.frames",
        (
            "import openevals\n"
            "r = openevals.evaluate([{'outputs': 1, 'reference_outputs': 1}], ['exact_match'],"
            " progress=False)\n"
            "r._repr_html_()"
        ),
    ],
    ids=["import", "data-modules", "evaluate-a-list"],
)
def test_data_libraries_load_only_when_used(code: str) -> None:
    _, loaded = _run(code)
    roots = {name.split(".")[0] for name in loaded}
    assert sorted(roots & set(DATA_LIBRARIES)) == []


def test_a_small_json_match_loads_no_numpy() -> None:
    """numpy (and rapidfuzz.process) come in only for the large list pairings that need them."""
    _, loaded = _run(
        "from openevals.json import create_json_match_evaluator\n"
        "create_json_match_evaluator()(outputs={'a': [1, 2]}, reference_outputs={'a': [2, 1]})"
    )
    assert sorted(m for m in loaded if m == "numpy" or m.startswith("numpy.")) == []
