"""Graph trajectories of LangGraph threads (agentevals' ``graph_trajectory`` module): extraction
from a thread's checkpoints, strict match, and an LLM judge.

Names resolve lazily (see :func:`openevals._lazy_exports`): extraction loads LangGraph only when
called, and the strict match loads no model code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.graph_trajectory.llm import (
        create_async_graph_trajectory_llm_as_judge as create_async_graph_trajectory_llm_as_judge,
        create_graph_trajectory_llm_as_judge as create_graph_trajectory_llm_as_judge,
    )
    from openevals.graph_trajectory.match import (
        GraphTrajectoryMatchMode as GraphTrajectoryMatchMode,
        create_async_graph_trajectory_match_evaluator as create_async_graph_trajectory_match_evaluator,
        create_graph_trajectory_match_evaluator as create_graph_trajectory_match_evaluator,
    )
    from openevals.graph_trajectory.strict import (
        graph_trajectory_strict_match as graph_trajectory_strict_match,
        graph_trajectory_strict_match_async as graph_trajectory_strict_match_async,
    )
    from openevals.graph_trajectory.types import (
        ExtractedLangGraphThreadTrajectory as ExtractedLangGraphThreadTrajectory,
        GraphTrajectory as GraphTrajectory,
    )
    from openevals.graph_trajectory.utils import (
        aextract_langgraph_trajectory_from_thread as aextract_langgraph_trajectory_from_thread,
        extract_langgraph_trajectory_from_snapshots as extract_langgraph_trajectory_from_snapshots,
        extract_langgraph_trajectory_from_thread as extract_langgraph_trajectory_from_thread,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
