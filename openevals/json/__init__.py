"""Structured-output evaluators: compare a dict (or a list of dicts) with a reference.

Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.json.match import (
        SYSTEM_PROMPT as SYSTEM_PROMPT,
        USER_PROMPT as USER_PROMPT,
        create_async_json_match_evaluator as create_async_json_match_evaluator,
        create_json_match_evaluator as create_json_match_evaluator,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
