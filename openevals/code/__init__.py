"""Evaluators for generated code: type checking (mypy, pyright), sandboxed runs (E2B), LLM judges.

Names resolve lazily (see :func:`openevals._lazy_exports`): importing this package runs no checker and
loads neither the E2B SDK nor model code. The E2B evaluators need the ``e2b`` extra; reading one
of their names without it raises ``ImportError`` naming the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.code.base import (
        CheckTimeoutError as CheckTimeoutError,
    )
    from openevals.code.e2b.execution import (
        create_async_e2b_execution_evaluator as create_async_e2b_execution_evaluator,
        create_e2b_execution_evaluator as create_e2b_execution_evaluator,
    )
    from openevals.code.e2b.pyright import (
        create_async_e2b_pyright_evaluator as create_async_e2b_pyright_evaluator,
        create_e2b_pyright_evaluator as create_e2b_pyright_evaluator,
    )
    from openevals.code.llm import (
        create_async_code_llm_as_judge as create_async_code_llm_as_judge,
        create_code_llm_as_judge as create_code_llm_as_judge,
    )
    from openevals.code.mypy import (
        create_async_mypy_evaluator as create_async_mypy_evaluator,
        create_mypy_evaluator as create_mypy_evaluator,
    )
    from openevals.code.pyright import (
        create_async_pyright_evaluator as create_async_pyright_evaluator,
        create_pyright_evaluator as create_pyright_evaluator,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
