"""Multiturn simulation: run your app against a simulated user and evaluate the conversation.

Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_MULTITURN = "openevals.simulators.multiturn"
_PREBUILT = "openevals.simulators.prebuilt"

_EXPORTS: dict[str, str] = {
    "run_multiturn_simulation": _MULTITURN,
    "run_multiturn_simulation_async": _MULTITURN,
    "SimulationError": _MULTITURN,
    "create_llm_simulated_user": _PREBUILT,
    "create_async_llm_simulated_user": _PREBUILT,
    "MultiturnSimulationResult": "openevals.types",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
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

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
