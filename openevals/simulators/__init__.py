"""Multiturn simulation: run your app against a simulated user and evaluate the conversation."""

from __future__ import annotations

from openevals.simulators.multiturn import (
    SimulationError,
    run_multiturn_simulation,
    run_multiturn_simulation_async,
)
from openevals.simulators.prebuilt import (
    create_async_llm_simulated_user,
    create_llm_simulated_user,
)
from openevals.types import MultiturnSimulationResult

__all__ = [
    "MultiturnSimulationResult",
    "SimulationError",
    "create_async_llm_simulated_user",
    "create_llm_simulated_user",
    "run_multiturn_simulation",
    "run_multiturn_simulation_async",
]
