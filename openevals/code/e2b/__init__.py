"""Code evaluators that run in an E2B sandbox (the ``e2b`` extra).

Names resolve lazily (see :func:`openevals._lazy_exports`); without the extra, reading one raises
``ImportError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_EXPORTS: dict[str, str] = {
    "create_e2b_execution_evaluator": "openevals.code.e2b.execution",
    "create_async_e2b_execution_evaluator": "openevals.code.e2b.execution",
    "create_e2b_pyright_evaluator": "openevals.code.e2b.pyright",
    "create_async_e2b_pyright_evaluator": "openevals.code.e2b.pyright",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
    # isort: off
    from openevals.code.e2b.execution import (
        create_async_e2b_execution_evaluator as create_async_e2b_execution_evaluator,
        create_e2b_execution_evaluator as create_e2b_execution_evaluator,
    )
    from openevals.code.e2b.pyright import (
        create_async_e2b_pyright_evaluator as create_async_e2b_pyright_evaluator,
        create_e2b_pyright_evaluator as create_e2b_pyright_evaluator,
    )
    # isort: on

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
