"""Presentation: the HTML report of a run (a packaged Jinja2 template), its notebook views, the
progress display, and the report sections other packages add to the page.

    from openevals.report import render_report

    page = render_report(result, title="nightly")

Names resolve lazily (see :func:`openevals._lazy_exports`): importing ``openevals.report`` loads
neither Jinja2 nor rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

_EXPORTS: dict[str, str] = {
    "render_report": "openevals.report.html",
    "ReportSection": "openevals.report.html",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # Explicit re-exports for type checkers; one line per name of the map.
    # isort: off
    from openevals.report.html import (
        ReportSection as ReportSection,
        render_report as render_report,
    )
    # isort: on

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
