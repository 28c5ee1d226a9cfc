"""Public call shapes of the evaluator families: their ``__all__`` names and the evaluators they make.

``python -m tests.compat.signature_snapshot > tests/compat/signatures.json`` writes the snapshot
that ``test_signatures.py`` compares with; regenerate it only for an intended, documented change.
What is recorded for each public callable: ``str(inspect.signature(...))``, ``__name__`` and
``__module__``; for each evaluator made by a factory below also whether it is a coroutine function
and the signatures of its ``batch`` / ``abatch`` entry points.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import sys
from collections.abc import Callable
from typing import Any

import openevals


def _factories() -> dict[str, Callable[[], Any]]:
    """Factory calls whose evaluators are recorded (building them calls no model)."""
    from openevals.code import mypy, pyright
    from openevals.json import match as json_match
    from openevals.rag import ranking, steps
    from openevals.string import embedding_similarity as emb
    from openevals.testing import FakeSandbox
    from openevals.trajectory import match as trajectory

    made: dict[str, Callable[[], Any]] = {
        "json": json_match.create_json_match_evaluator,
        "json_async": json_match.create_async_json_match_evaluator,
        "json_rubric": lambda: json_match.create_json_match_evaluator(
            rubric={"a": "b"}, model="openai:gpt-x"
        ),
        "trajectory": trajectory.create_trajectory_match_evaluator,
        "trajectory_async": trajectory.create_async_trajectory_match_evaluator,
        "steps": steps.create_steps_evaluator,
        "steps_async": steps.create_async_steps_evaluator,
        "embedding": emb.create_embedding_similarity_evaluator,
        "embedding_async": emb.create_async_embedding_similarity_evaluator,
        "mypy": mypy.create_mypy_evaluator,
        "mypy_async": mypy.create_async_mypy_evaluator,
        "pyright": pyright.create_pyright_evaluator,
        "pyright_async": pyright.create_async_pyright_evaluator,
    }
    for name in ranking.__all__:
        if name.startswith("create_"):
            made[name] = getattr(ranking, name)
    try:
        from openevals.code.e2b import execution
        from openevals.code.e2b import pyright as e2b_pyright
    except ImportError:  # the e2b extra is not installed
        return made
    sandbox = FakeSandbox()
    made["e2b_execution"] = lambda: execution.create_e2b_execution_evaluator(sandbox=sandbox)
    made["e2b_pyright"] = lambda: e2b_pyright.create_e2b_pyright_evaluator(sandbox=sandbox)
    return made


def _signature(obj: Any) -> str | None:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None


def public_modules() -> list[str]:
    """Every module of the package whose name has no underscore-prefixed part."""
    names = ["openevals"]
    for info in pkgutil.walk_packages(openevals.__path__, "openevals."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def _importable(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:  # an optional extra (e2b) that is not installed
        return None


# The modules whose call shapes are pinned: the deterministic families and code/ (the judges and
# the runner change shape under their own briefs and tests).
PINNED = ("openevals.exact", "openevals.string", "openevals.json", "openevals.trajectory")
PINNED_MORE = (
    "openevals.rag.ranking",
    "openevals.rag.steps",
    "openevals.code",
    "openevals.embeddings",
)
UNPINNED = ("openevals.trajectory.llm", "openevals.code.llm")


def _pinned(module: str) -> bool:
    if module == "openevals":
        return True
    if any(module == u or module.startswith(u + ".") for u in UNPINNED):
        return False
    return any(module == p or module.startswith(p + ".") for p in PINNED + PINNED_MORE)


def snapshot() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for module_name in filter(_pinned, public_modules()):
        module = _importable(module_name)
        if module is None:
            continue
        for name in sorted(getattr(module, "__all__", ())):
            value = getattr(module, name)
            if callable(value):
                names[f"{module_name}:{name}"] = {
                    "signature": _signature(value),
                    "name": getattr(value, "__name__", None),
                    "module": getattr(value, "__module__", None),
                }
    evaluators: dict[str, Any] = {}
    for label, factory in _factories().items():
        made = factory()
        entry: dict[str, Any] = {
            "signature": _signature(made),
            "name": getattr(made, "__name__", None),
            "module": getattr(made, "__module__", None),
            "coroutine": inspect.iscoroutinefunction(made)
            or inspect.iscoroutinefunction(getattr(made, "__call__", None)),  # noqa: B004
        }
        for extra in ("batch", "abatch"):
            if hasattr(made, extra):
                entry[extra] = _signature(getattr(made, extra))
        evaluators[label] = entry
    return {"names": names, "evaluators": evaluators}


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
