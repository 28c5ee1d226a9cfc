"""The repeated-trials section of the HTML report: per key pass@k / pass^k, the variance split
and the flakiest rows (from :func:`openevals.trust.trials.stats_of_run`). The generic report never
imports this module: :meth:`EvaluationResult.report_sections` adds the section for a trials run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openevals.report.html import ReportSection
    from openevals.trust.trials import TrialStats

__all__ = ["trials_section"]


def trials_section(stats: Mapping[str, TrialStats]) -> ReportSection:
    """The ``trials`` section of the report for every key's figures."""
    from openevals.report.html import ReportSection, estimate_text
    from openevals.report.templating import number

    keys = [
        {
            "key": key,
            "shape": f"{item.rows} rows x {item.trials} trials x {item.judge_repeats} judge "
            "repeats",
            "pass": [
                {"j": j, "at": number(item.pass_at[j]), "hat": number(item.pass_hat[j])}
                for j in sorted(item.pass_at)
            ],
            "flip_rate": number(item.flip_rate),
            "flaky": item.flaky,
            "variance": [
                {"name": name, **estimate_text(est, 4)} for name, est in item.variance.items()
            ],
            "app_share": number(item.app_share, ".2f"),
            "flakiest": [
                {
                    "id": r.id,
                    "rate": number(r.pass_rate, ".2f"),
                    "means": ", ".join(f"{m:.2f}" for m in r.trial_means),
                }
                for r in item.flakiest
            ],
            "notes": list(item.notes),
        }
        for key, item in stats.items()
    ]
    return ReportSection(
        kind="trials",
        values={"per_key": keys},
        template=("openevals.trust", "trials.html.j2"),
    )
