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

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.report.html import (
        ReportSection as ReportSection,
        render_report as render_report,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
