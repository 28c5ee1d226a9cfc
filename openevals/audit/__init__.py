"""Judge audits: does the score move when only the answer's form does (length, style, format, a
model-family hint, an anchoring hint, the order of a pair)?

    from openevals.audit import audit_judge

    report = audit_judge("rows.jsonl", judge)
    print(report)
    report.check()  # fails a CI job on a biased judge

Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.audit.battery import (
        TESTS as TESTS,
        AuditTest as AuditTest,
    )
    from openevals.audit.report import (
        AuditReport as AuditReport,
        audit_section as audit_section,
    )
    from openevals.audit.run import (
        aaudit_judge as aaudit_judge,
        audit_judge as audit_judge,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
