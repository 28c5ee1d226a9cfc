"""Agent trajectory evaluators.

The match evaluators are deterministic and load no model code. The LLM judges
(``create_trajectory_llm_as_judge`` / ``create_async_trajectory_llm_as_judge``) live in
:mod:`openevals.trajectory.llm`, which is imported only when one of them is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openevals.trajectory.match import (
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)

if TYPE_CHECKING:
    from openevals.trajectory.llm import (
        create_async_trajectory_llm_as_judge,
        create_trajectory_llm_as_judge,
    )

__all__ = [
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
]

_LAZY: dict[str, str] = {
    "create_trajectory_llm_as_judge": "openevals.trajectory.llm",
    "create_async_trajectory_llm_as_judge": "openevals.trajectory.llm",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'openevals.trajectory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
