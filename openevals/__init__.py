"""openevals: ready-made evaluators for LLM applications.

Names are re-exported lazily (PEP 562, see :func:`_lazy_exports`): ``import openevals`` loads
no model client, LangChain or LangSmith code; each name's module is imported the first time the
name is used.
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, resolving ``exports`` on first use.

    The one export style of the package: every public package's ``__init__`` is a plain map
    from each name it exports to the module that defines it::

        _EXPORTS: dict[str, str] = {
            "create_json_match_evaluator": "openevals.json.match",
            ...
        }
        __all__ = sorted(_EXPORTS)

        if TYPE_CHECKING:  # what type checkers and IDEs see: one ``name as name`` per entry
            from openevals.json.match import (
                create_json_match_evaluator as create_json_match_evaluator,
            )

        __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())

    Importing a package loads only its map; a name's module is imported the first time the name
    is read (PEP 562) and the value is cached in ``namespace`` (the package's ``globals()``). A
    submodule is reachable as an attribute too (``openevals.json.match``), as with eager
    imports. The helper lives here, in the root package every subpackage imports anyway, so it
    costs ``import openevals`` no extra module. ``tests/test_exports.py`` checks that every name
    of every ``__all__`` resolves and that each map and its ``TYPE_CHECKING`` imports agree.
    """

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

    return __getattr__, __dir__


def _is_submodule(name: str) -> bool:
    from importlib.util import find_spec  # only on a miss, never during ``import openevals``

    return find_spec(name) is not None


_EXPORTS: dict[str, str] = {
    "exact_match": "openevals.exact",
    "exact_match_async": "openevals.exact",
    "levenshtein_distance": "openevals.string.levenshtein",
    "levenshtein_distance_async": "openevals.string.levenshtein",
    "create_json_match_evaluator": "openevals.json.match",
    "create_async_json_match_evaluator": "openevals.json.match",
    "create_llm_as_judge": "openevals.llm",
    "create_async_llm_as_judge": "openevals.llm",
    "create_pairwise_llm_as_judge": "openevals.pairwise.judge",
    "create_async_pairwise_llm_as_judge": "openevals.pairwise.judge",
    "create_trajectory_match_evaluator": "openevals.trajectory.match",
    "create_async_trajectory_match_evaluator": "openevals.trajectory.match",
    "create_trajectory_llm_as_judge": "openevals.trajectory.llm",
    "create_async_trajectory_llm_as_judge": "openevals.trajectory.llm",
    "create_rubric_judge": "openevals.rubric",
    "create_async_rubric_judge": "openevals.rubric",
    "create_judge_panel": "openevals.panel",
    "create_async_judge_panel": "openevals.panel",
    "evaluate": "openevals.evaluation.runner",
    "Trials": "openevals.evaluation.trials",
    "aevaluate": "openevals.evaluation.runner",
    "map_columns": "openevals.data.mapping",
    "compare": "openevals.comparison.paired",
    "acompare": "openevals.comparison.paired",
    "Comparison": "openevals.comparison.results",
    "load_run": "openevals.evaluation.reopen",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
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

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
