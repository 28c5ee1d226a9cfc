"""Structured-output evaluators: compare a dict (or a list of dicts) with a reference.

Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_MATCH = "openevals.json.match"

_EXPORTS: dict[str, str] = {
    "create_json_match_evaluator": _MATCH,
    "create_async_json_match_evaluator": _MATCH,
    "SYSTEM_PROMPT": _MATCH,
    "USER_PROMPT": _MATCH,
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
    # isort: off
    from openevals.json.match import (
        SYSTEM_PROMPT as SYSTEM_PROMPT,
        USER_PROMPT as USER_PROMPT,
        create_async_json_match_evaluator as create_async_json_match_evaluator,
        create_json_match_evaluator as create_json_match_evaluator,
    )
    # isort: on

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
