"""The simulated-user factories at the module path openevals 0.2.2 used.

They are defined in :mod:`openevals.simulators.prebuilt`; this module only re-exports them, so
``from openevals.simulators.prebuilts import create_llm_simulated_user`` keeps working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals.simulators.prebuilt import (
    _is_internal_message as _is_internal_message,  # 0.2.2's helper; upstream's tests import it
)
from openevals.simulators.prebuilt import (
    create_async_llm_simulated_user,
    create_llm_simulated_user,
)

__all__ = ["create_async_llm_simulated_user", "create_llm_simulated_user"]

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
