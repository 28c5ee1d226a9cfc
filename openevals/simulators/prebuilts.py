"""The simulated-user factories at the module path openevals 0.2.2 used.

They are defined in :mod:`openevals.simulators.prebuilt`; this module only re-exports them, so
``from openevals.simulators.prebuilts import create_llm_simulated_user`` keeps working.
"""

from __future__ import annotations

from openevals.simulators.prebuilt import (
    _is_internal_message as _is_internal_message,  # 0.2.2's helper; upstream's tests import it
)
from openevals.simulators.prebuilt import (
    create_async_llm_simulated_user,
    create_llm_simulated_user,
)

__all__ = ["create_async_llm_simulated_user", "create_llm_simulated_user"]
