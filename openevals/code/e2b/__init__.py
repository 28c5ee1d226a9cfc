"""Code evaluators that run in an E2B sandbox (the ``e2b`` extra).

Names resolve lazily (see :func:`openevals._lazy_exports`); without the extra, reading one raises
``ImportError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
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

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
