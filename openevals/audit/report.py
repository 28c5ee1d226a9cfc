"""The audit's result: :class:`AuditReport` (text, data, a CI gate and the HTML report section)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.audit.battery import AuditTest
from openevals.report.templating import number

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult
    from openevals.report.html import ReportSection

__all__ = ["AuditReport", "audit_section"]


def _num(value: float | None, spec: str = "+.3f") -> str:
    return number(value, spec)


@dataclass(frozen=True)
class AuditReport:
    """What :func:`~openevals.audit.audit_judge` returns.

    Attributes:
        tests: one :class:`~openevals.audit.battery.AuditTest` per test, in the order run.
        rows: the rows audited; ``failed_calls``: judge calls that failed or gave no number
            (their rows are left out of the tests they belong to).
        result: the batch run of every form (``id`` = ``<row id>::<form>``).
    """

    tests: tuple[AuditTest, ...]
    rows: int
    alpha: float
    min_effect: float
    family: str
    failed_calls: int
    result: EvaluationResult = field(repr=False)
    notes: tuple[str, ...] = ()

    @property
    def biased(self) -> list[AuditTest]:
        """The tests whose verdict is ``"biased"``."""
        return [t for t in self.tests if t.verdict == "biased"]

    def test(self, name: str) -> AuditTest:
        for item in self.tests:
            if item.name == name:
                return item
        raise KeyError(f"no audit test {show(name)}; ran: {show([t.name for t in self.tests])}")

    def failures(self) -> list[str]:
        """One line per biased test (empty: the judge passed the audit)."""
        return [
            f"{t.name}: {t.meaning}: effect {_num(t.effect)} [{_num(t.ci_low)}, {_num(t.ci_high)}]"
            f" on {t.n} rows (adjusted p {t.p_adjusted:.3g})"
            for t in self.biased
        ]

    def check(self) -> None:
        """Raise ``AssertionError`` with the table when a test found a bias (for CI jobs)."""
        tripped = self.failures()
        if tripped:
            raise AssertionError("the judge is biased:\n  " + "\n  ".join(tripped) + f"\n\n{self}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "alpha": self.alpha,
            "min_effect": self.min_effect,
            "family": self.family,
            "failed_calls": self.failed_calls,
            "tests": [t.as_dict() for t in self.tests],
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        pct = round((1 - self.alpha) * 100)
        head = ["test", "rows", "effect", f"{pct}% CI", "p (Holm)", "verdict"]
        lines = [head] + [
            [
                t.name,
                str(t.n),
                _num(t.effect),
                f"[{_num(t.ci_low)}, {_num(t.ci_high)}]",
                f"{t.p_adjusted:.3g}",
                t.verdict,
            ]
            for t in self.tests
        ]
        widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
        out = [f"Judge audit: {self.rows} rows, alpha {self.alpha}, min effect {self.min_effect}"]
        out += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines
        ]
        out += [f"{t.name}: a positive effect means {t.meaning}" for t in self.biased]
        out += list(self.notes)
        return "\n".join(out)

    def report_html(
        self, path: str | os.PathLike[str], *, title: str = "openevals judge audit"
    ) -> Path:
        """Write the HTML report of the audit run with its audit section; returns the path."""
        from openevals.report.html import render_report

        sections = [*self.result.report_sections(), audit_section(self)]
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_report(self.result, title=title, sections=sections), "utf-8")
        return target


def audit_section(report: AuditReport) -> ReportSection:
    """The audit section of the HTML report (rendered with ``templates/audit.html.j2``)."""
    from openevals.report.html import ReportSection

    values = {
        "rows": report.rows,
        "alpha": report.alpha,
        "min_effect": report.min_effect,
        "confidence": round((1 - report.alpha) * 100),
        "tests": [
            {
                "name": t.name,
                "meaning": t.meaning,
                "n": t.n,
                "effect": _num(t.effect),
                "ci": f"[{_num(t.ci_low)}, {_num(t.ci_high)}]",
                "p": f"{t.p_adjusted:.3g}",
                "test": t.test,
                "verdict": t.verdict,
                "biased": t.verdict == "biased",
            }
            for t in report.tests
        ],
        "notes": list(report.notes),
    }
    return ReportSection(kind="audit", values=values, template=("openevals.audit", "audit.html.j2"))
