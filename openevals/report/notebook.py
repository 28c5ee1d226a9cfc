"""Notebook views: the summary tables Jupyter shows for results, and the full report inline.

``_repr_html_`` of :class:`~openevals.evaluation.result.EvaluationResult` returns the small table
built here (the figures, not the rows; a section owner such as calibration renders its own
template with :func:`inline_html`); :meth:`EvaluationResult.show_report` returns an
:class:`InlineReport`, whose ``_repr_html_`` is the whole HTML report in a sandboxed ``iframe``
(its styles and script stay inside it). The HTML comes from Jinja2 templates with autoescaping, so no cell text can
inject markup.
"""

from __future__ import annotations

import functools
import html
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

    from openevals.evaluation.result import EvaluationResult

from openevals.report.progress import describe_common

__all__ = ["InlineReport", "inline_html", "interval_text", "number_text", "result_summary_html"]

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


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    from openevals.report.templating import environment

    return environment(jinja2.DictLoader({"result": _RESULT}))


@functools.lru_cache(maxsize=8)
def _inline_template(source: str) -> jinja2.Template:
    return _environment().from_string(source)


def inline_html(template: str, **values: Any) -> str:
    """``template`` (Jinja2 source, compiled once) rendered with ``values``, autoescaped: how a
    section owner (calibration's ``_repr_html_``) makes its notebook view without this module
    knowing it."""
    return _inline_template(template).render(**values)


def number_text(value: Any) -> str:
    """A figure as a table cell: 3 decimals (3 significant digits from 1000), ``-`` for none."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return (
            "-" if math.isnan(value) else f"{value:.3g}" if abs(value) >= 1000 else f"{value:.3f}"
        )
    return str(value)


def interval_text(interval: Any) -> str:
    """``[low, high]`` as a table cell, ``-`` when there is no interval."""
    if isinstance(interval, (list, tuple)) and len(interval) == 2:
        return f"[{number_text(interval[0])}, {number_text(interval[1])}]"
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
            "mean": number_text(stats.get("mean")),
            "ci": interval_text(stats.get("ci95")),
            "min": number_text(stats.get("min")),
            "max": number_text(stats.get("max")),
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
