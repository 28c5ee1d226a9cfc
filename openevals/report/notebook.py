"""Notebook views: the summary tables Jupyter shows for results, and the full report inline.

``_repr_html_`` of :class:`~openevals.evaluation.result.EvaluationResult` and of
:class:`~openevals.calibration.report.CalibrationReport` return the small tables built here (the
figures, not the rows); :meth:`EvaluationResult.show_report` returns an :class:`InlineReport`,
whose ``_repr_html_`` is the whole HTML report in a sandboxed ``iframe`` (its styles and script
stay inside it). The HTML comes from Jinja2 templates with autoescaping, so no cell text can
inject markup.
"""

from __future__ import annotations

import functools
import html
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

    from openevals.calibration.report import CalibrationReport
    from openevals.evaluation.result import EvaluationResult

from openevals.report.progress import describe_common

__all__ = ["InlineReport", "calibration_summary_html", "result_summary_html"]

_RESULT = """\
<div class="openevals-summary">
<p><strong>EvaluationResult</strong>{% if interrupted %} <em>(interrupted)</em>{% endif %}:
{{ rows }} rows; failed evaluations: {{ failed }}{% if elapsed %}; {{ elapsed }}{% endif %}
{%- if cost %}; estimated cost {{ cost }}{% endif %}</p>
{% if scores %}<table>
<thead><tr><th style="text-align:left">key</th><th>n</th><th>mean</th><th>95% CI</th>
<th>min</th><th>max</th></tr></thead>
<tbody>{% for s in scores %}
<tr><td style="text-align:left">{{ s.key }}</td><td>{{ s.count }}</td><td>{{ s.mean }}</td>
<td>{{ s.ci }}</td><td>{{ s.min }}</td><td>{{ s.max }}</td></tr>
{%- if s.corrected %}
<tr><td style="text-align:left">&nbsp;&nbsp;corrected by {{ s.corrected.labelled }} labels</td>
<td></td><td>{{ s.corrected.mean }}</td><td>{{ s.corrected.ci }}</td><td></td><td></td></tr>
{%- endif %}{% endfor %}
</tbody></table>{% else %}<p>No scores.</p>{% endif %}
{% if groups %}<p>{{ groups }} groups: see <code>.by_group</code> or
<code>.show_report()</code>.</p>{% endif %}
{% if errors %}<p>Errors by evaluator: {% for name, n in errors %}{{ name }} ({{ n }}){% if not loop.last %}, {% endif %}{% endfor %}</p>{% endif %}
{% if common %}<p>Most common errors:</p><ul>{% for line in common %}<li><code>{{ line }}</code></li>{% endfor %}</ul>{% endif %}
<p style="font-size:smaller">Rows: <code>.to_pandas()</code>; full report:
<code>.show_report()</code>.</p>
</div>
"""

_CALIBRATION = """\
<div class="openevals-calibration">
<p><strong>CalibrationReport</strong>: judge key <code>{{ key }}</code> against labels
<code>{{ label }}</code> ({{ label_type }}, {{ n }} rows{% if failed %}, {{ failed }} judge
errors{% endif %})</p>
<table>
<thead><tr><th style="text-align:left">figure</th><th>value</th><th>{{ pct }}% CI</th></tr></thead>
<tbody>{% for f in figures %}
<tr><td style="text-align:left">{{ f.label }}</td><td>{{ f.value }}</td><td>{{ f.ci }}</td></tr>
{% endfor %}</tbody></table>
{% if confusion %}<p>Confusion (rows: human, columns: judge)</p>
<table><thead><tr><th></th>{% for l in labels %}<th>{{ l }}</th>{% endfor %}</tr></thead>
<tbody>{% for label, counts in confusion %}<tr><th>{{ label }}</th>
{% for c in counts %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>{% endif %}
<p>{{ disagreements }} disagreements{% if disagreements %} (<code>.disagreements</code>, most
severe first){% endif %}; full report: <code>.report_html(path)</code>.</p>
</div>
"""


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.DictLoader({"result": _RESULT, "calibration": _CALIBRATION}),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return (
            "-" if math.isnan(value) else f"{value:.3g}" if abs(value) >= 1000 else f"{value:.3f}"
        )
    return str(value)


def _ci(interval: Any) -> str:
    if isinstance(interval, (list, tuple)) and len(interval) == 2:
        return f"[{_num(interval[0])}, {_num(interval[1])}]"
    return "-"


def result_summary_html(result: EvaluationResult) -> str:
    """The summary table of ``result``: rows, failures, time, cost and one line per score (and
    its judge-corrected mean, after ``result.corrected``)."""
    from openevals.report.html import corrected_cells

    summary = result.summary
    scores = [
        {
            "key": key,
            "count": stats.get("count", 0),
            "mean": _num(stats.get("mean")),
            "ci": _ci(stats.get("ci95")),
            "min": _num(stats.get("min")),
            "max": _num(stats.get("max")),
            "corrected": corrected_cells(stats.get("corrected")),
        }
        for key, stats in result.aggregates.items()
    ]
    elapsed = summary.get("elapsed_sec")
    cost = summary.get("cost_usd")
    by_evaluator = (summary.get("errors") or {}).get("by_evaluator") or {}
    groups = (result.by_group or {}).get("per_group") or {}
    return (
        _environment()
        .get_template("result")
        .render(
            interrupted=result.interrupted,
            rows=len(result.rows),
            failed=(summary.get("pairs") or {}).get("failed", 0),
            elapsed=f"{elapsed:.2f} s" if isinstance(elapsed, (int, float)) else None,
            cost=f"${cost:.4g}" if isinstance(cost, (int, float)) and cost else None,
            scores=scores,
            groups=len(groups),
            errors=sorted(by_evaluator.items()),
            common=describe_common(summary.get("common_errors") or [], width=300),
        )
    )


def calibration_summary_html(report: CalibrationReport) -> str:
    """The figures (with intervals) and the confusion matrix of a calibration report."""
    from openevals.calibration.agreement import CategoricalAgreement
    from openevals.calibration.report import figure_label, figures_of

    agreement = report.agreement
    figures = [
        {
            "label": figure_label(attr),
            "value": _num(est.value) if est.value is not None else (est.note or "-"),
            "ci": _ci((est.low, est.high)) if est.low is not None else "-",
        }
        for attr, est in figures_of(agreement)
    ]
    confusion: list[tuple[str, list[int]]] = []
    labels: list[str] = []
    if isinstance(agreement, CategoricalAgreement):
        labels = [str(x) for x in agreement.labels]
        confusion = [(label, list(row)) for label, row in zip(labels, agreement.confusion)]  # noqa: B905
    return (
        _environment()
        .get_template("calibration")
        .render(
            key=report.feedback_key,
            label=report.label,
            label_type=report.label_type,
            n=report.n,
            failed=len(report.failed),
            pct=round(agreement.confidence * 100),
            figures=figures,
            labels=labels,
            confusion=confusion,
            disagreements=len(report.disagreements),
        )
    )


class InlineReport:
    """The full HTML report of a run, shown inline by Jupyter (what ``show_report()`` returns).

    ``html`` is the report page; ``save(path)`` writes it.
    """

    def __init__(self, page: str, *, height: int = 720) -> None:
        self.html = page
        self.height = height

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            f'style="width:100%;height:{int(self.height)}px;border:1px solid #ddd" '
            'sandbox="allow-scripts"></iframe>'
        )

    def save(self, path: Any) -> Any:
        """Write the page to ``path`` (returns the path)."""
        from pathlib import Path

        target = Path(path)
        target.write_text(self.html, encoding="utf-8")
        return target

    def __repr__(self) -> str:
        return f"<InlineReport {len(self.html)} characters of HTML>"
