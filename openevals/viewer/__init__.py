"""Stored runs for people: ``openevals runs`` (tables in the terminal) and ``openevals view``
(a local web app: runs, rows, comparisons, trends, and labelling rows for calibration).

The web app needs the ``viewer`` extra (Starlette, uvicorn). This package imports the run store
and the report and comparison code; nothing imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.viewer.history import (
        TrendPoint as TrendPoint,
        diff as diff,
        trend as trend,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
