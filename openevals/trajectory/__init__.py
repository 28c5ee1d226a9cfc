"""Agent trajectory evaluators.

The match evaluators are deterministic and load no model code. The LLM judges
(``create_trajectory_llm_as_judge`` / ``create_async_trajectory_llm_as_judge``) live in
:mod:`openevals.trajectory.llm`. Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.trajectory.llm import (
        create_async_trajectory_llm_as_judge as create_async_trajectory_llm_as_judge,
        create_trajectory_llm_as_judge as create_trajectory_llm_as_judge,
    )
    from openevals.trajectory.match import (
        create_async_trajectory_match_evaluator as create_async_trajectory_match_evaluator,
        create_trajectory_match_evaluator as create_trajectory_match_evaluator,
    )
    from openevals.trajectory.permission import (
        create_async_trajectory_tool_permission_evaluator as create_async_trajectory_tool_permission_evaluator,
        create_trajectory_tool_permission_evaluator as create_trajectory_tool_permission_evaluator,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
