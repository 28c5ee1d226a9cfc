"""openevals: ready-made evaluators for LLM applications.

Names are re-exported lazily (PEP 562, see :func:`_lazy_exports`): ``import openevals`` loads
no model client, LangChain or LangSmith code; each name's module is imported the first time the
name is used.
"""

from __future__ import annotations

import importlib
import os
import re
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__version__ = "0.1.0"
__distribution__ = "openevals-suite"
"""This project's distribution name on package indexes (``pip install openevals-suite``); its
import name stays ``openevals``, import-compatible with the public ``openevals`` 0.2.2
distribution. Both install the same ``openevals`` folder, so with both installed the one
installed last overwrote the other's files: :func:`_warn_if_public_alongside` says so at import."""


def _warn_if_public_alongside(package_dir: str) -> None:
    """Warn when the public ``openevals`` distribution's metadata (``openevals-0.2.2.dist-info``)
    lies beside this package (one directory listing; no ``importlib.metadata``, which is slow to
    import), with the command that repairs the environment."""
    site = os.path.dirname(package_dir)
    try:
        names = os.listdir(site)
    except OSError:
        return
    found = next(
        (
            n
            for n in names
            if n.startswith("openevals-") and n.endswith((".dist-info", ".egg-info"))
        ),
        None,
    )
    if found is not None:
        warnings.warn(
            f"the public `openevals` distribution ({found}) is installed beside "
            f"{__distribution__}; both install the `openevals` package, so the one installed "
            f"last overwrote the other's files. Repair with: pip uninstall -y openevals "
            f"{__distribution__} && pip install {__distribution__}",
            RuntimeWarning,
            stacklevel=3,
        )


_warn_if_public_alongside(__path__[0])


def _lazy_exports(
    package: str, namespace: dict[str, Any]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__all__``, ``__getattr__`` and ``__dir__`` of ``package``: its exports, each
    resolved on first use.

    The one export style of the package: a package ``__init__`` declares each name it exports
    once, as a ``name as name`` import under ``TYPE_CHECKING`` (what type checkers and IDEs
    read)::

        if TYPE_CHECKING:
            # isort: off
            from openevals.json.match import (
                create_json_match_evaluator as create_json_match_evaluator,
            )
            # isort: on

        __all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())

    At run time the same lines are read from the package's source (:func:`_declared_exports`),
    so nothing else lists the names. Importing a package runs no export's module; a name's
    module is imported the first time the name is read (PEP 562) and the value is cached in
    ``namespace`` (the package's ``globals()``). A submodule is reachable as an attribute too
    (``openevals.json.match``), as with eager imports. The helper lives here, in the root
    package every subpackage imports anyway, so it costs ``import openevals`` no extra module.
    ``tests/test_exports.py`` checks that every name of every ``__all__`` resolves.
    """
    exports = _declared_exports(package, namespace)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif not name.startswith("__") and _is_submodule(f"{package}.{name}"):
            value = importlib.import_module(f"{package}.{name}")
        else:
            from openevals._repr import show  # only when the message is built

            raise AttributeError(f"module {show(package)} has no attribute {show(name)}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return sorted(exports), __getattr__, __dir__


_FROM_IMPORT = re.compile(r"^\s*from ([\w.]+) import (?:\(([^)]*)\)|(.+))$", re.MULTILINE)
_REEXPORT = re.compile(r"\b(\w+) as \1\b")


def _declared_exports(package: str, namespace: dict[str, Any]) -> dict[str, str]:
    """Every ``name as name`` import of ``package``'s source: name -> the module it comes from.

    The source is the package's file, or what its loader gives (a zip archive); a package
    installed without its sources cannot declare exports this way, which is an ``ImportError``.
    """
    source = _source_of(package, namespace)
    if source is None:
        raise ImportError(
            f"{package}: its exports are read from its source, which is not installed; "
            "reinstall the package with its .py files"
        )
    return {
        name: module
        for module, group, single in _FROM_IMPORT.findall(source)
        for name in _REEXPORT.findall(group or single)
    }


def _source_of(package: str, namespace: dict[str, Any]) -> str | None:
    try:
        with open(namespace["__file__"], encoding="utf-8") as file:
            return file.read()
    except (KeyError, TypeError, OSError):
        loader = namespace.get("__loader__")  # e.g. a zip archive
        get_source = getattr(loader, "get_source", None)
        return get_source(package) if get_source is not None else None


def _is_submodule(name: str) -> bool:
    from importlib.util import find_spec  # only on a miss, never during ``import openevals``

    return find_spec(name) is not None


if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.evaluation.runner import (
        aevaluate as aevaluate,
        evaluate as evaluate,
    )
    from openevals.data.mapping import (
        map_columns as map_columns,
    )
    from openevals.evaluation.trials import (
        Trials as Trials,
    )
    from openevals.exact import (
        exact_match as exact_match,
        exact_match_async as exact_match_async,
    )
    from openevals.json.match import (
        create_async_json_match_evaluator as create_async_json_match_evaluator,
        create_json_match_evaluator as create_json_match_evaluator,
    )
    from openevals.llm import (
        create_async_llm_as_judge as create_async_llm_as_judge,
        create_llm_as_judge as create_llm_as_judge,
    )
    from openevals.pairwise.judge import (
        create_async_pairwise_llm_as_judge as create_async_pairwise_llm_as_judge,
        create_pairwise_llm_as_judge as create_pairwise_llm_as_judge,
    )
    from openevals.panel import (
        create_async_judge_panel as create_async_judge_panel,
        create_judge_panel as create_judge_panel,
    )
    from openevals.rubric import (
        create_async_rubric_judge as create_async_rubric_judge,
        create_rubric_judge as create_rubric_judge,
    )
    from openevals.string.levenshtein import (
        levenshtein_distance as levenshtein_distance,
        levenshtein_distance_async as levenshtein_distance_async,
    )
    from openevals.trajectory.llm import (
        create_async_trajectory_llm_as_judge as create_async_trajectory_llm_as_judge,
        create_trajectory_llm_as_judge as create_trajectory_llm_as_judge,
    )
    from openevals.trajectory.match import (
        create_async_trajectory_match_evaluator as create_async_trajectory_match_evaluator,
        create_trajectory_match_evaluator as create_trajectory_match_evaluator,
    )
    from openevals.comparison.paired import (
        acompare as acompare,
        compare as compare,
    )
    from openevals.comparison.results import Comparison as Comparison
    from openevals.evaluation.reopen import load_run as load_run
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
