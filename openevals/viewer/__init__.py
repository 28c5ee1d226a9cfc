"""Stored runs for people: ``openevals runs`` (tables in the terminal) and ``openevals view``
(a local web app: runs, rows, comparisons, trends, and labelling rows for calibration).

The web app needs the ``viewer`` extra (Starlette, uvicorn). This package imports the run store
and the report and comparison code; nothing imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_EXPORTS: dict[str, str] = {
    "diff": "openevals.viewer.history",
    "trend": "openevals.viewer.history",
    "TrendPoint": "openevals.viewer.history",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
    # isort: off
    from openevals.viewer.history import (
        TrendPoint as TrendPoint,
        diff as diff,
        trend as trend,
    )
    # isort: on

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
