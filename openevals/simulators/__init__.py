"""Multiturn simulation: run your app against a simulated user and evaluate the conversation.

Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.simulators.multiturn import (
        SimulationError as SimulationError,
        run_multiturn_simulation as run_multiturn_simulation,
        run_multiturn_simulation_async as run_multiturn_simulation_async,
    )
    from openevals.simulators.prebuilt import (
        create_async_llm_simulated_user as create_async_llm_simulated_user,
        create_llm_simulated_user as create_llm_simulated_user,
    )
    from openevals.types import (
        MultiturnSimulationResult as MultiturnSimulationResult,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
