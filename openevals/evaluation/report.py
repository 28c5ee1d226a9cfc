"""A self-contained HTML report of an :class:`~openevals.evaluation.result.EvaluationResult`.

One file, no external assets: inline CSS, inline SVG charts and a few lines of inline JavaScript
(only for filtering the rows table; the page reads fine without it). Sections: summary (score
statistics, evaluators with errors, tokens, cost and cache hits), a histogram per score, per-group
bars with confidence-interval whiskers (with ``group_by``), dataset metrics, and a filterable table
of rows with scores, comments and errors.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from openevals.evaluation.redact import Redactor

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = ["histogram_bins", "render_report"]

_TEXT_LIMIT = 400
_MAX_GROUP_BARS = 40
_MAX_GROUP_CHARTS = 12

_CSS = """
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#ffffff; --panel:#f6f8fa;
  --ok:#1a7f37; --bad:#cf222e; --bar:#0969da; --bar2:#8250df; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0; padding: 24px 32px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 0 0 6px; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 14px; min-width: 130px; }
.card .v { font-size: 20px; font-weight: 600; }
.card .l { color: var(--muted); font-size: 12px; }
.card.bad .v { color: var(--bad); }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
figure { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg text { font: 11px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; fill: var(--fg); }
.controls { display: flex; gap: 10px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.controls input[type=search] { padding: 5px 8px; width: 320px; border: 1px solid var(--line);
  border-radius: 6px; }
.controls select { padding: 4px; }
#rows td { max-width: 360px; }
#rows td pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-size: 12px; }
.chip { display: inline-block; padding: 0 6px; margin: 1px 2px 1px 0; border-radius: 10px;
  background: #eaeef2; font-size: 12px; white-space: nowrap; }
.chip.t { background: #dafbe1; color: var(--ok); }
.chip.f { background: #ffebe9; color: var(--bad); }
.status-error { color: var(--bad); font-weight: 600; }
.status-success { color: var(--ok); }
.err { color: var(--bad); font-size: 12px; }
.comment { font-size: 12px; color: var(--muted); margin-top: 2px; }
details summary { cursor: pointer; color: var(--bar); font-size: 12px; }
"""

_JS = """
(function () {
  var q = document.getElementById('q'), st = document.getElementById('status');
  var ev = document.getElementById('evaluator'), count = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rows tbody tr'));
  function apply() {
    var text = q.value.toLowerCase(), status = st.value, name = ev.value, shown = 0;
    rows.forEach(function (tr) {
      var ok = (!text || tr.getAttribute('data-text').indexOf(text) >= 0) &&
        (status === 'all' || tr.getAttribute('data-status') === status) &&
        (name === 'all' || (' ' + tr.getAttribute('data-failed') + ' ').indexOf(' ' + name + ' ') >= 0);
      tr.style.display = ok ? '' : 'none';
      if (ok) shown += 1;
    });
    count.textContent = shown;
  }
  q.addEventListener('input', apply); st.addEventListener('change', apply);
  ev.addEventListener('change', apply);
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.{digits}f}"
    return str(value)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _clip(text: str) -> str:
    """Escaped text; long text is folded into a ``<details>`` element."""
    if len(text) <= _TEXT_LIMIT:
        return f"<pre>{_e(text)}</pre>"
    return (
        f"<pre>{_e(text[:_TEXT_LIMIT])}…</pre><details><summary>show all "
        f"({len(text)} chars)</summary><pre>{_e(text)}</pre></details>"
    )


# --------------------------------------------------------------------------- charts


def histogram_bins(
    values: Sequence[float], *, boolean: bool = False, bins: int = 10
) -> list[tuple[str, int]]:
    """``(label, count)`` per histogram bar: false/true for booleans, else equal-width bins.

    Scores within [0, 1] use ten bins over [0, 1]; others span [min, max]. Numeric labels are
    ``"low–high"``.
    """
    if boolean:
        trues = sum(1 for v in values if v >= 0.5)
        return [("false", len(values) - trues), ("true", trues)]
    if not values:
        return []
    lo, hi = _bin_range(values)
    if lo == hi:
        return [(_num(lo), len(values))]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        index = min(int((v - lo) / width), bins - 1)
        counts[index] += 1
    return [(f"{lo + i * width:.3g}–{lo + (i + 1) * width:.3g}", c) for i, c in enumerate(counts)]


def _bin_range(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if lo != hi and lo >= 0.0 and hi <= 1.0:
        return 0.0, 1.0
    return lo, hi


def _histogram_svg(key: str, values: Sequence[float], boolean: bool) -> str:
    bars = histogram_bins(values, boolean=boolean)
    width, height, left, bottom, top = 340, 170, 34, 36, 14
    plot_w, plot_h = width - left - 8, height - bottom - top
    peak = max((c for _, c in bars), default=0) or 1
    slot = plot_w / max(len(bars), 1)
    base = top + plot_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="histogram of {_e(key)}">',
        f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#8c959f"/>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{peak}</text>',
        f'<text x="{left - 4}" y="{base}" text-anchor="end">0</text>',
    ]
    for i, (label, count) in enumerate(bars):
        h = plot_h * count / peak
        x = left + i * slot + slot * 0.1
        y = base - h
        colour = "#0969da"
        if boolean:
            colour = "#1a7f37" if label == "true" else "#cf222e"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.8:.1f}" height="{h:.1f}" '
            f'fill="{colour}"><title>{_e(label)}: {count}</title></rect>'
        )
        if count:
            parts.append(
                f'<text x="{x + slot * 0.4:.1f}" y="{y - 2:.1f}" text-anchor="middle">{count}</text>'
            )
        if len(bars) <= 4:
            parts.append(
                f'<text x="{x + slot * 0.4:.1f}" y="{base + 14}" text-anchor="middle">'
                f"{_e(label)}</text>"
            )
    if len(bars) > 4:
        lo, hi = _bin_range(values)
        for i in range(0, len(bars) + 1, 2):
            edge = lo + (hi - lo) * i / len(bars)
            x = left + i * slot
            parts.append(
                f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#8c959f"/>'
                f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{edge:.3g}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _group_bars_svg(key: str, groups: list[tuple[str, dict[str, Any]]]) -> str:
    rows = groups[:_MAX_GROUP_BARS]
    label_w, bar_w, row_h, top = 170, 260, 20, 8
    width = label_w + bar_w + 70
    height = top + row_h * len(rows) + 22
    highs = [s.get("ci95", [0, 0])[1] for _, s in rows] + [s.get("max", 0) for _, s in rows]
    lows = [s.get("min", 0) for _, s in rows]
    unit = min(lows, default=0) >= 0 and max(highs, default=0) <= 1
    scale_max = 1.0 if unit else (max(highs, default=1.0) or 1.0)

    def x_of(value: float) -> float:
        return label_w + bar_w * max(0.0, min(value, scale_max)) / scale_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(key)} by group">'
    ]
    for i, (name, stats) in enumerate(rows):
        y = top + i * row_h
        mean = stats.get("mean")
        label = name if len(name) <= 26 else name[:25] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end"><title>{_e(name)}</title>'
            f"{_e(label)}</text>"
        )
        if mean is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 13}" fill="#656d76">no scores</text>')
            continue
        parts.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{x_of(mean) - label_w:.1f}" height="13" '
            f'fill="#0969da" opacity="0.85"><title>{_e(name)}: mean {_num(mean)} '
            f"(n={stats.get('count')})</title></rect>"
        )
        ci = stats.get("ci95")
        if isinstance(ci, Sequence) and len(ci) == 2:
            x1, x2 = x_of(ci[0]), x_of(ci[1])
            parts.append(
                f'<line x1="{x1:.1f}" y1="{y + 9.5}" x2="{x2:.1f}" y2="{y + 9.5}" '
                'stroke="#1f2328" stroke-width="1.2"/>'
                f'<line x1="{x1:.1f}" y1="{y + 5}" x2="{x1:.1f}" y2="{y + 14}" stroke="#1f2328"/>'
                f'<line x1="{x2:.1f}" y1="{y + 5}" x2="{x2:.1f}" y2="{y + 14}" stroke="#1f2328"/>'
            )
        parts.append(
            f'<text x="{label_w + bar_w + 6}" y="{y + 13}">{_num(mean)} '
            f'<tspan fill="#656d76">n={stats.get("count")}</tspan></text>'
        )
    axis_y = top + row_h * len(rows) + 4
    parts.append(
        f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + bar_w}" y2="{axis_y}" '
        'stroke="#8c959f"/>'
        f'<text x="{label_w}" y="{axis_y + 14}" text-anchor="middle">0</text>'
        f'<text x="{label_w + bar_w}" y="{axis_y + 14}" text-anchor="middle">'
        f"{_num(scale_max, 2)}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- sections


def _cards(result: EvaluationResult) -> str:
    s = result.summary
    cards = [
        ("rows", s.get("rows", 0), False),
        ("rows with errors", s.get("rows_with_errors", 0), s.get("rows_with_errors", 0) > 0),
        ("evaluations", s.get("pairs", {}).get("done", 0), False),
        ("failed evaluations", s.get("pairs", {}).get("failed", 0), s["pairs"]["failed"] > 0),
        ("resumed", s.get("pairs", {}).get("resumed", 0), False),
        ("elapsed", f"{s.get('elapsed_sec', 0.0):.2f} s", False),
    ]
    if s.get("usage"):
        cards.append(("tokens", s["usage"].get("total_tokens", 0), False))
    if isinstance(s.get("cost_usd"), float):
        cards.append(("est. cost", f"${s['cost_usd']:.4f}", False))
    if s.get("cache"):
        cards.append(("cache hits", f"{s['cache']['hits']} / {s['cache']['misses']} miss", False))
    body = "".join(
        f'<div class="card{" bad" if bad else ""}"><div class="v">{_e(v)}</div>'
        f'<div class="l">{_e(label)}</div></div>'
        for label, v, bad in cards
    )
    return f'<div class="cards">{body}</div>'


def _stats_table(aggregates: Mapping[str, Mapping[str, Any]]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "feedback key",
            "type",
            "n",
            "mean",
            "95% CI",
            "median",
            "min",
            "max",
            "stdev",
            "sum",
        )
    )
    body = []
    for key, stats in aggregates.items():
        ci = stats.get("ci95")
        ci_text = f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "-"
        kind = "rate" if stats.get("type") == "boolean" else "numeric"
        extras = []
        if stats.get("skipped"):
            extras.append(f"{stats['skipped']} skipped")
        if stats.get("non_numeric"):
            extras.append(f"{stats['non_numeric']} non-numeric")
        note = f' <span class="muted">({", ".join(extras)})</span>' if extras else ""
        body.append(
            f"<tr><td>{_e(key)}{note}</td><td>{kind}</td>"
            f'<td class="num">{stats.get("count", 0)}</td>'
            f'<td class="num">{_num(stats.get("mean"))}</td><td class="num">{ci_text}</td>'
            f'<td class="num">{_num(stats.get("median"))}</td>'
            f'<td class="num">{_num(stats.get("min"))}</td>'
            f'<td class="num">{_num(stats.get("max"))}</td>'
            f'<td class="num">{_num(stats.get("stdev"))}</td>'
            f'<td class="num">{_num(stats.get("sum"))}</td></tr>'
        )
    if not body:
        return '<p class="muted">No scores were produced.</p>'
    return (
        f'<table id="scores"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _evaluators_table(summary: Mapping[str, Any]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "evaluator",
            "done",
            "errors",
            "resumed",
            "mean time (s)",
            "model",
            "tokens in / out",
            "est. cost (USD)",
            "cache hits / misses",
        )
    )
    body = []
    for name, info in summary.get("evaluators", {}).items():
        usage = info.get("usage") or {}
        tokens = (
            f"{usage.get('input_tokens', 0)} / {usage.get('output_tokens', 0)}" if usage else "-"
        )
        cost = info.get("cost_usd")
        cache = info.get("cache")
        cache_text = f"{cache['hits']} / {cache['misses']}" if cache else "-"
        cost_text = f"{cost:.4f}" if isinstance(cost, float) else "-"
        errors = info.get("errors", 0)
        body.append(
            f"<tr><td>{_e(name)}</td><td class='num'>{info.get('done', 0)}</td>"
            f"<td class='num{' status-error' if errors else ''}'>{errors}</td>"
            f"<td class='num'>{info.get('resumed', 0)}</td>"
            f"<td class='num'>{_num(info.get('mean_elapsed_sec'), 4)}</td>"
            f"<td>{_e(info.get('model') or '-')}</td><td class='num'>{tokens}</td>"
            f"<td class='num'>{cost_text}</td><td class='num'>{cache_text}</td></tr>"
        )
    table = (
        f'<table id="evaluators"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
        "</table>"
    )
    by_type = summary.get("errors", {}).get("by_type") or {}
    if by_type:
        items = ", ".join(f"{_e(k)}: {v}" for k, v in by_type.items())
        table += f'<p class="err">Errors by type: {items}</p>'
    target = summary.get("target")
    if target:
        usage = target.get("usage") or {}
        table += (
            f"<p>Target: {target.get('calls', 0)} calls, {target.get('errors', 0)} errors, "
            f"{target.get('reused', 0)} reused from the output file, "
            f"{_num(target.get('elapsed_sec'))} s total"
            + (f", {usage.get('total_tokens', 0)} tokens" if usage else "")
            + "</p>"
        )
    return table


def _histograms(result: EvaluationResult) -> str:
    figures = []
    for key, stats in result.aggregates.items():
        values = result.histograms.get(key, [])
        if not values:
            continue
        boolean = stats.get("type") == "boolean"
        figures.append(
            f"<figure><figcaption>{_e(key)}{' (true rate ' + _num(stats.get('mean')) + ')' if boolean else ''}"
            f"</figcaption>{_histogram_svg(key, values, boolean)}</figure>"
        )
    if not figures:
        return '<p class="muted">No numeric scores to plot.</p>'
    return f'<div class="charts">{"".join(figures)}</div>'


def _groups(result: EvaluationResult) -> str:
    by_group = result.by_group
    if not by_group:
        return ""
    per_group: Mapping[str, Any] = by_group["per_group"]
    micro, macro = by_group["micro"], by_group["macro"]["scores"]
    figures = []
    for key in list(result.aggregates)[:_MAX_GROUP_CHARTS]:
        groups = [(name, info["scores"].get(key, {})) for name, info in per_group.items()]
        figures.append(
            f"<figure><figcaption>{_e(key)} by group <span class='muted'>(macro "
            f"{_num(macro.get(key, {}).get('mean'))}, micro "
            f"{_num(micro['scores'].get(key, {}).get('mean'))})</span></figcaption>"
            f"{_group_bars_svg(key, groups)}</figure>"
        )
    keys = list(result.aggregates)
    head = "".join(
        ["<th>group</th><th>ok rows</th><th>error rows</th><th>errors by evaluator</th>"]
        + [f"<th>{_e(k)} mean</th>" for k in keys]
    )
    body = []
    for name, info in per_group.items():
        errors = ", ".join(f"{_e(k)}: {v}" for k, v in info["errors"].items()) or "-"
        cells = "".join(
            f"<td class='num'>{_num(info['scores'].get(k, {}).get('mean'))}</td>" for k in keys
        )
        body.append(
            f"<tr><td>{_e(name)}</td><td class='num'>{info['number_of_success_samples']}</td>"
            f"<td class='num'>{info['number_of_error_samples']}</td><td>{errors}</td>{cells}</tr>"
        )
    body.append(
        "<tr><th>micro (all rows)</th>"
        f"<td class='num'>{micro['number_of_success_samples']}</td>"
        f"<td class='num'>{micro['number_of_error_samples']}</td><td></td>"
        + "".join(
            f"<td class='num'>{_num(micro['scores'].get(k, {}).get('mean'))}</td>" for k in keys
        )
        + "</tr>"
    )
    body.append(
        "<tr><th>macro (mean of groups)</th><td></td><td></td><td></td>"
        + "".join(f"<td class='num'>{_num(macro.get(k, {}).get('mean'))}</td>" for k in keys)
        + "</tr>"
    )
    table = (
        f'<table id="groups"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
    return f'<h2>Groups</h2><div class="charts">{"".join(figures)}</div>{table}'


def _batch_metrics(result: EvaluationResult) -> str:
    errors = result.summary.get("batch_metric_errors") or []
    if not result.batch_metrics and not errors:
        return ""
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td class='num'>{_e(_num(info.get('value'), 4))}</td></tr>"
        for name, info in result.batch_metrics.items()
    )
    out = (
        '<h2>Dataset metrics</h2><table id="batch-metrics"><thead><tr><th>metric</th>'
        f"<th>value</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    for err in errors:
        out += f"<p class='err'>{_e(err.get('metric_fn'))}: {_e(err.get('type'))}: {_e(err.get('message'))}</p>"
    return out


def _score_chip(result: Mapping[str, Any]) -> str:
    score = result.get("score")
    cls = ""
    if score is True:
        cls = " t"
    elif score is False:
        cls = " f"
    return f'<span class="chip{cls}">{_e(result.get("key"))}: {_e(_num(score))}</span>'


def _rows_table(result: EvaluationResult, max_rows: int) -> str:
    rows = result.rows
    failed = [r for r in rows if r.get("status") == "error"]
    chosen = failed[:max_rows]
    if len(chosen) < max_rows:
        chosen += [r for r in rows if r.get("status") != "error"][: max_rows - len(chosen)]
        chosen.sort(key=lambda r: r["index"])
    grouped = result.by_group is not None
    head = "<th>#</th><th>id</th>" + ("<th>group</th>" if grouped else "")
    head += "<th>status</th><th>scores</th><th>comments / errors</th><th>inputs</th>"
    head += "<th>outputs</th><th>reference</th>"
    body = []
    for row in chosen:
        chips, notes, failed_names = [], [], []
        for name, entry in row.get("evaluations", {}).items():
            for res in entry.get("results", []):
                chips.append(_score_chip(res))
                if res.get("comment"):
                    notes.append(
                        f'<div class="comment"><b>{_e(res.get("key"))}</b>: '
                        f"{_clip(str(res['comment']))}</div>"
                    )
            if entry.get("status") != "success":
                failed_names.append(name)
                err = entry.get("error") or {}
                notes.append(
                    f'<div class="err"><b>{_e(name)}</b> {_e(err.get("type", "Error"))}: '
                    f"{_clip(str(err.get('message', '')))}</div>"
                )
        target = row.get("target") or {}
        if target.get("status") == "error":
            err = target.get("error") or {}
            notes.append(f'<div class="err"><b>target</b> {_e(err.get("type"))}</div>')
        inputs = _json_text(row.get("inputs"))
        outputs = _json_text(row.get("outputs"))
        reference = _json_text(row.get("reference_outputs"))
        status = row.get("status", "")
        search = " ".join(
            [str(row.get("id")), str(row.get("group") or ""), status, inputs, outputs, reference]
            + [n for n in failed_names]
        ).lower()[:4000]
        group_cell = f"<td>{_e(row.get('group') or '')}</td>" if grouped else ""
        body.append(
            f'<tr data-status="{_e(status)}" data-failed="{_e(" ".join(failed_names))}" '
            f'data-text="{_e(search)}"><td class="num">{row["index"]}</td>'
            f"<td>{_e(row.get('id'))}</td>{group_cell}"
            f'<td class="status-{_e(status)}">{_e(status)}</td><td>{"".join(chips)}</td>'
            f"<td>{''.join(notes)}</td><td>{_clip(inputs)}</td><td>{_clip(outputs)}</td>"
            f"<td>{_clip(reference)}</td></tr>"
        )
    options = "".join(f'<option value="{_e(n)}">{_e(n)}</option>' for n in result.evaluators)
    note = ""
    if len(chosen) < len(rows):
        note = (
            f'<p class="muted">Showing {len(chosen)} of {len(rows)} rows (rows with errors '
            "first); the full results are in the JSONL output.</p>"
        )
    controls = (
        '<div class="controls"><input id="q" type="search" placeholder="Filter rows by text…">'
        '<label>status <select id="status"><option value="all">all</option>'
        '<option value="success">success</option><option value="error">error</option></select>'
        '</label><label>failed evaluator <select id="evaluator"><option value="all">any'
        f"</option>{options}</select></label>"
        f'<span class="muted"><span id="shown">{len(chosen)}</span> shown</span></div>'
    )
    return (
        f'{controls}{note}<table id="rows"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def render_report(
    result: EvaluationResult, *, title: str = "openevals report", max_rows: int = 5000
) -> str:
    """The report as one HTML string (see the module docstring)."""
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0:
        raise ValueError(f"max_rows must be an integer >= 0; got {max_rows!r}")
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    status = " — interrupted, partial results" if result.interrupted else ""
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="muted">Generated {generated} · evaluators: {_e(", ".join(result.evaluators))}{_e(status)}</p>
<h2>Summary</h2>
{_cards(result)}
<h3>Scores</h3>
{_stats_table(result.aggregates)}
<p class="muted">95% confidence intervals of the mean: percentile bootstrap (1,000 resamples,
fixed seed), or the normal approximation for large samples. Boolean scores are rates.</p>
<h3>Evaluators</h3>
{_evaluators_table(result.summary)}
<h2>Score distributions</h2>
{_histograms(result)}
{_groups(result)}
{_batch_metrics(result)}
<h2>Rows</h2>
{_rows_table(result, max_rows)}
<script>{_JS}</script>
</body></html>
"""
    return Redactor().values(page)
