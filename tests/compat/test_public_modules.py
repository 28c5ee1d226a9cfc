"""Every public module path of openevals 0.2.2 imports here, with every public name it defines.

The list is ``public_modules_0_2_2.json``, built by ``scripts/build_public_module_list.py`` from the
release installed in the baseline venv (see that script for what counts as a public name). A name
that 0.2.2 has and we deliberately do not is in ``ALLOWED_MISSING`` below, with the reason; the
names 0.2.2 modules import from each other for their own use (``incidental_imports`` in the JSON,
e.g. ``SimpleEvaluator`` in ``openevals.code.mypy``) are not API and are not checked here.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LIST_FILE = Path(__file__).with_name("public_modules_0_2_2.json")
DATA: dict[str, Any] = json.loads(LIST_FILE.read_text(encoding="utf-8"))
MODULES: dict[str, dict[str, Any]] = DATA["modules"]

# (module, name) -> why 0.2.2 has it and we do not. Keep this as short as possible.
ALLOWED_MISSING: dict[tuple[str, str], str] = {
    # 0.2.2 ships the sources of the Python scripts it runs inside the E2B sandbox (a pyright
    # runner, an import-name extractor, and the separator between their outputs). Our E2B
    # evaluators run other commands (openevals/code/e2b/sandbox/files.py: IMPORT_PROBE,
    # PYRIGHT_COMMAND, ...), so these strings would be constants that nothing reads.
    ("openevals.code.e2b.sandbox.files", "EXTRACT_IMPORT_NAMES"): "0.2.2 sandbox script source",
    ("openevals.code.e2b.sandbox.files", "PYTHON_EVALUATOR_FILE"): "0.2.2 sandbox script source",
    ("openevals.code.e2b.sandbox.files", "PYTHON_EVALUATOR_SEPARATOR"): "0.2.2 sandbox separator",
}

NAMES = sorted((module, name) for module, entry in MODULES.items() for name in entry["names"])


def _id(pair: tuple[str, str]) -> str:
    return f"{pair[0]}:{pair[1]}"


def test_the_list_is_the_0_2_2_release() -> None:
    assert DATA["package"] == "openevals"
    assert DATA["version"] == "0.2.2"
    assert DATA["module_count"] == len(MODULES) == 71
    assert DATA["name_count"] == len(NAMES)
    # The modules issue 12 found missing are on the list (a truncated list cannot pass).
    assert "openevals.prompts.quality.correctness" in MODULES
    assert "openevals.simulators.prebuilts" in MODULES
    assert ("openevals.json.match", "SYSTEM_PROMPT") in NAMES


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_path_imports(module: str) -> None:
    imported = importlib.import_module(module)
    is_package = MODULES[module]["namespace_package"] or MODULES[module]["file"].endswith(
        "/__init__.py"
    )
    assert hasattr(imported, "__path__") == is_package, "package in 0.2.2 iff package here"
    # A real module file inside our package, not an alias registered in sys.modules.
    assert imported.__name__ == module
    assert imported.__spec__ is not None and imported.__spec__.name == module
    assert (
        Path(imported.__spec__.origin or next(iter(imported.__path__)))
        .resolve()
        .is_relative_to(REPO / "openevals")
    )


@pytest.mark.parametrize("pair", [p for p in NAMES if p not in ALLOWED_MISSING], ids=_id)
def test_public_name_exists(pair: tuple[str, str]) -> None:
    module, name = pair
    value = getattr(importlib.import_module(module), name)
    kind = MODULES[module]["names"][name]["kind"]
    if kind == "str":
        assert isinstance(value, str) and value
    elif kind == "function":
        assert callable(value) and not inspect.isclass(value)
    elif kind == "class":
        assert inspect.isclass(value)


STAR_MODULES = sorted(
    m for m, entry in MODULES.items() if any(not n.startswith("_") for n in entry["all"] or ())
)


@pytest.mark.parametrize("module", STAR_MODULES)
def test_star_import_gives_what_it_gave_in_0_2_2(module: str) -> None:
    """``from <module> import *`` brings every public name 0.2.2's ``__all__`` listed.

    The private helpers some 0.2.2 modules list in ``__all__`` (``_run_evaluator`` and friends)
    must exist (``test_public_name_exists``), but need not come with a star import.
    """
    ours = importlib.import_module(module)
    expected = {
        n
        for n in MODULES[module]["all"]
        if not n.startswith("_") and (module, n) not in ALLOWED_MISSING
    }
    assert expected <= set(getattr(ours, "__all__", ())), module


@pytest.mark.parametrize("pair", sorted(ALLOWED_MISSING), ids=_id)
def test_allowed_missing_entries_are_real_and_still_missing(pair: tuple[str, str]) -> None:
    module, name = pair
    assert name in MODULES[module]["names"], "stale entry: 0.2.2 has no such name"
    assert not hasattr(importlib.import_module(module), name), "now present: drop the entry"


def test_per_prompt_modules_expose_the_same_objects() -> None:
    import openevals.prompts as prompts
    from openevals.prompts.quality.code_correctness import (
        CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
    )
    from openevals.prompts.quality.correctness import CORRECTNESS_PROMPT
    from openevals.prompts.trajectory.accuracy import TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE

    assert CORRECTNESS_PROMPT is prompts.CORRECTNESS_PROMPT
    assert CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS is (
        prompts.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS
    )
    assert TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE is (
        prompts.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE
    )
    # Every prompt constant of 0.2.2's per-prompt modules is one of ours, the very same object.
    per_prompt = [m for m in MODULES if m.count(".") == 3 and m.startswith("openevals.prompts.")]
    assert len(per_prompt) == 31
    for module in per_prompt:
        for name in MODULES[module]["names"]:
            assert getattr(importlib.import_module(module), name) is getattr(prompts, name)


def test_json_match_prompts_keep_their_role_and_variables() -> None:
    import string

    from openevals.json import SYSTEM_PROMPT as PACKAGE_SYSTEM
    from openevals.json.match import SYSTEM_PROMPT, USER_PROMPT
    from openevals.prompts.json import JSON_MATCH_SYSTEM_PROMPT, JSON_MATCH_USER_PROMPT

    assert SYSTEM_PROMPT is JSON_MATCH_SYSTEM_PROMPT is PACKAGE_SYSTEM
    assert USER_PROMPT is JSON_MATCH_USER_PROMPT
    fields = {f for _, f, _, _ in string.Formatter().parse(USER_PROMPT) if f is not None}
    assert fields == {"rubric", "outputs", "reference_outputs"}  # 0.2.2's USER_PROMPT variables
    assert not [f for _, f, _, _ in string.Formatter().parse(SYSTEM_PROMPT) if f is not None]


def test_simulators_prebuilts_reexports_the_factories() -> None:
    from openevals.simulators import (
        create_async_llm_simulated_user,
        create_llm_simulated_user,
        prebuilts,
    )

    assert prebuilts.create_llm_simulated_user is create_llm_simulated_user
    assert prebuilts.create_async_llm_simulated_user is create_async_llm_simulated_user


def test_per_prompt_modules_cost_nothing_until_imported() -> None:
    """``import openevals.prompts`` loads the family packages but none of the 0.2.2-path modules."""
    code = (
        "import sys, openevals.prompts\n"
        "print(sorted(m for m in sys.modules if m.startswith('openevals.prompts.')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True
    )
    loaded = set(eval(out.stdout))  # a printed list of module names
    assert "openevals.prompts.quality" in loaded
    assert not [m for m in loaded if m.count(".") >= 3], loaded
