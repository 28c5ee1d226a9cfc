"""A self-contained HTML report of an :class:`~openevals.evaluation.result.EvaluationResult`.

One file, no external assets: inline CSS, inline SVG charts and a few lines of inline JavaScript
(only for filtering the rows table; the page reads fine without it). Sections: summary (score
statistics, evaluators with errors, tokens, cost and cache hits), a histogram per score, per-group
bars with confidence-interval whiskers (with ``group_by``), dataset metrics, the optional
sections given in ``sections=`` in their order, and a filterable table of rows with scores,
comments and errors.

The page is the Jinja2 template ``templates/report.html.j2`` (shipped in the package) with
autoescaping on; this module only turns the result into plain values for it (formatted numbers,
chart geometry). Each :class:`ReportSection` brings its own template from its owner package's
``templates/`` folder (calibration, pairwise, trials, the audit; this module imports none of
them): it is rendered in the same kind of environment and the page places the HTML. Secrets
never reach it: the runner removes them when it makes the records.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from openevals._repr import show
from openevals.report.progress import _fmt

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "ReportData",
    "ReportSection",
    "corrected_cells",
    "estimate_text",
    "histogram_bins",
    "json_text",
    "render_report",
]

TEMPLATE = "report.html.j2"
_TEXT_LIMIT = 400
_MAX_GROUP_BARS = 40
_MAX_GROUP_CHARTS = 12


class ReportData(Protocol):
    """What the report reads (an :class:`~openevals.evaluation.result.EvaluationResult`)."""

    rows: Sequence[dict[str, Any]]
    aggregates: dict[str, dict[str, Any]]
    summary: dict[str, Any]
    by_group: dict[str, Any] | None
    batch_metrics: dict[str, dict[str, Any]]
    evaluators: list[str]
    interrupted: bool
    histograms: dict[str, Sequence[float]]


@dataclass(frozen=True)
class ReportSection:
    """One optional section of the report, made by the package that owns its data, with its own
    template.

    Attributes:
        kind: what the section is (``"calibration"``, ``"pairwise"``, ``"audit"``, ``"trials"``
            or a new one); any non-empty text.
        values: plain, pre-formatted values for the template, which reads them as ``section``
            (autoescaped; ``text_limit`` and the shared macros of ``report/macros.j2`` are there
            too).
        template: ``(package, file name)``: the template in that package's ``templates/``
            folder, e.g. ``("openevals.pairwise", "pairwise.html.j2")``.
        single: at most one section of this kind per report (calibration).
    """

    kind: str
    values: Mapping[str, Any]
    template: tuple[str, str]
    single: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError(f"kind must be a non-empty string; got {show(self.kind)}")
        if not isinstance(self.values, Mapping):
            raise TypeError(f"values must be a mapping; got {show(self.values)}")
        template = self.template
        if not (
            isinstance(template, tuple)
            and len(template) == 2
            and all(isinstance(part, str) and part for part in template)
        ):
            raise ValueError(
                "template must be a (package, file name) tuple, e.g. "
                f"('openevals.pairwise', 'pairwise.html.j2'); got {show(template)}"
            )


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    from openevals.report.templating import environment

    loader = jinja2.PackageLoader("openevals.report", "templates")
    return environment(loader, keep_trailing_newline=True)


@functools.lru_cache(maxsize=32)
def _section_environment(package: str) -> jinja2.Environment:
    """The environment of one owner's section templates: its ``templates/`` folder as
    ``section/`` and the report's (for ``macros.j2``) as ``report/``."""
    import jinja2

    from openevals.report.templating import environment

    try:
        owner = jinja2.PackageLoader(package, "templates")
    except (ImportError, ValueError) as exc:
        raise ValueError(
            f"template names package {show(package)}, which has no templates/ folder: {exc}"
        ) from exc
    report = jinja2.PackageLoader("openevals.report", "templates")
    return environment(jinja2.PrefixLoader({"report": report, "section": owner}))


def _render_section(section: ReportSection) -> str:
    import jinja2

    package, name = section.template
    try:
        template = _section_environment(package).get_template(f"section/{name}")
    except jinja2.TemplateNotFound as exc:
        raise ValueError(
            f"the {show(section.kind)} section's template {show(name)} is not in the templates/ "
            f"folder of package {show(package)}; check ReportSection.template"
        ) from exc
    return template.render(section=section.values, text_limit=_TEXT_LIMIT)


def render_report(
    result: ReportData,
    *,
    title: str = "openevals report",
    max_rows: int = 5000,
    sections: Sequence[ReportSection] | None = None,
) -> str:
    """The report as one HTML string (see the module docstring).

    ``sections`` are the optional sections to show; ``None`` means the result's own (its
    ``report_sections()``, e.g. the pairwise sections of a run with ``systems=``).
    """
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 0:
        raise ValueError(f"max_rows must be an integer >= 0; got {show(max_rows)}")
    if sections is None:
        own = getattr(result, "report_sections", None)
        sections = own() if callable(own) else ()
    if isinstance(sections, ReportSection) or not all(
        isinstance(s, ReportSection) for s in sections
    ):
        raise TypeError(
            f"sections must be a sequence of ReportSection; got {show(sections)}; make them with "
            "openevals.calibration.report_section.calibration_section or "
            "openevals.pairwise.report_section.pairwise_sections"
        )
    for kind in {s.kind for s in sections if s.single}:
        count = sum(1 for s in sections if s.kind == kind)
        if count > 1:
            raise ValueError(f"sections holds {count} {kind} sections; pass at most one")
    from markupsafe import Markup

    # Each section is rendered (autoescaped) by its own template; the page places the HTML.
    rendered = [Markup(_render_section(s)) for s in sections]
    summary = result.summary
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            title=title,
            generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            evaluators=list(result.evaluators),
            interrupted=result.interrupted,
            text_limit=_TEXT_LIMIT,
            cards=_cards(summary),
            scores=_scores(result.aggregates),
            evaluator_rows=_evaluator_rows(summary),
            errors_by_type=list((summary.get("errors", {}).get("by_type") or {}).items()),
            target=_target(summary.get("target")),
            histograms=_histograms(result),
            groups=_groups(result),
            batch_metrics=[
                (name, _num(info.get("value"), 4)) for name, info in result.batch_metrics.items()
            ],
            batch_errors=summary.get("batch_metric_errors") or [],
            grouped=result.by_group is not None,
            rows=_rows(result, max_rows),
            rows_total=len(result.rows),
            sections=rendered,
        )
    )


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _fmt(value, digits)  # the summary table's figures


def json_text(value: Any) -> str:
    """A value as display text: strings unchanged, else JSON (``repr`` when not serialisable)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        from openevals.data.encoding import encode

        return encode(value)


def estimate_text(estimate: Any, digits: int = 3) -> dict[str, str]:
    """An :class:`~openevals._stats.Estimate` as text: value, interval and note."""
    if estimate is None or estimate.value is None:
        note = getattr(estimate, "note", None) or ""
        return {"value": "n/a", "ci": "-", "note": note}
    ci = "-"
    if estimate.low is not None and estimate.high is not None:
        ci = f"[{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"
    return {"value": f"{estimate.value:.{digits}f}", "ci": ci, "note": estimate.note or ""}


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


def _histogram(key: str, values: Sequence[float], boolean: bool) -> dict[str, Any]:
    bins = histogram_bins(values, boolean=boolean)
    width, height, left, bottom, top = 340, 170, 34, 36, 14
    plot_w, plot_h = width - left - 8, height - bottom - top
    peak = max((c for _, c in bins), default=0) or 1
    slot = plot_w / max(len(bins), 1)
    base = top + plot_h
    bars = []
    for i, (label, count) in enumerate(bins):
        h = plot_h * count / peak
        x = left + i * slot + slot * 0.1
        y = base - h
        colour = "#0969da"
        if boolean:
            colour = "#1a7f37" if label == "true" else "#cf222e"
        bars.append(
            {
                "x": f"{x:.1f}",
                "y": f"{y:.1f}",
                "width": f"{slot * 0.8:.1f}",
                "height": f"{h:.1f}",
                "mid": f"{x + slot * 0.4:.1f}",
                "count_y": f"{y - 2:.1f}",
                "colour": colour,
                "label": label,
                "count": count,
            }
        )
    ticks = []
    if len(bins) > 4:
        lo, hi = _bin_range(values)
        for i in range(0, len(bins) + 1, 2):
            edge = lo + (hi - lo) * i / len(bins)
            ticks.append({"x": f"{left + i * slot:.1f}", "label": f"{edge:.3g}"})
    return {
        "key": key,
        "width": width,
        "height": height,
        "left": left,
        "right": left + plot_w,
        "top": top,
        "base": base,
        "peak": peak,
        "bars": bars,
        "labelled": len(bins) <= 4,
        "ticks": ticks,
    }


def _group_chart(key: str, groups: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    shown = groups[:_MAX_GROUP_BARS]
    label_w, bar_w, row_h, top = 170, 260, 20, 8
    highs = [s.get("ci95", [0, 0])[1] for _, s in shown] + [s.get("max", 0) for _, s in shown]
    lows = [s.get("min", 0) for _, s in shown]
    unit = min(lows, default=0) >= 0 and max(highs, default=0) <= 1
    scale_max = 1.0 if unit else (max(highs, default=1.0) or 1.0)

    def x_of(value: float) -> float:
        return label_w + bar_w * max(0.0, min(value, scale_max)) / scale_max

    rows = []
    for i, (name, stats) in enumerate(shown):
        mean = stats.get("mean")
        row: dict[str, Any] = {
            "y": top + i * row_h,
            "name": name,
            "label": name if len(name) <= 26 else name[:25] + "…",
            "mean": None if mean is None else _num(mean),
            "count": stats.get("count"),
            "ci": None,
        }
        if mean is not None:
            row["bar_w"] = f"{x_of(mean) - label_w:.1f}"
            ci = stats.get("ci95")
            if isinstance(ci, Sequence) and len(ci) == 2:
                row["ci"] = {"x1": f"{x_of(ci[0]):.1f}", "x2": f"{x_of(ci[1]):.1f}"}
        rows.append(row)
    return {
        "key": key,
        "width": label_w + bar_w + 70,
        "height": top + row_h * len(shown) + 22,
        "label_w": label_w,
        "bar_w": bar_w,
        "rows": rows,
        "axis_y": top + row_h * len(shown) + 4,
        "scale_label": _num(scale_max, 2),
    }


# --------------------------------------------------------------------------- sections


def _cards(s: Mapping[str, Any]) -> list[dict[str, Any]]:
    pairs = s.get("pairs", {})
    cards = [
        ("rows", s.get("rows", 0), False),
        ("rows with errors", s.get("rows_with_errors", 0), s.get("rows_with_errors", 0) > 0),
        ("evaluations", pairs.get("done", 0), False),
        ("failed evaluations", pairs.get("failed", 0), pairs.get("failed", 0) > 0),
        ("resumed", pairs.get("resumed", 0), False),
        ("elapsed", f"{s.get('elapsed_sec', 0.0):.2f} s", False),
    ]
    if s.get("usage"):
        cards.append(("tokens", s["usage"].get("total_tokens", 0), False))
    if isinstance(s.get("cost_usd"), float):
        cards.append(("est. cost", f"${s['cost_usd']:.4f}", False))
    if s.get("cache"):
        cards.append(("cache hits", f"{s['cache']['hits']} / {s['cache']['misses']} miss", False))
    return [{"label": label, "value": value, "bad": bad} for label, value, bad in cards]


def _scores(aggregates: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for key, stats in aggregates.items():
        ci = stats.get("ci95")
        counted = (("skipped", "skipped"), ("non_numeric", "non-numeric"))
        notes = [f"{stats[name]} {label}" for name, label in counted if stats.get(name)]
        out.append(
            {
                "key": key,
                "notes": notes,
                "kind": "rate" if stats.get("type") == "boolean" else "numeric",
                "count": stats.get("count", 0),
                "ci": f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "-",
                "corrected": corrected_cells(stats.get("corrected")),
                **{name: _num(stats.get(name)) for name in ("mean", "median", "min", "max")},
                **{name: _num(stats.get(name)) for name in ("stdev", "sum")},
            }
        )
    return out


def corrected_cells(found: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The judge-corrected mean of a key (``EvaluationResult.corrected``), as text."""
    if not found:
        return None
    low, high = found["ci"]
    return {
        "mean": _num(found["mean"]),
        "ci": f"[{_num(low)}, {_num(high)}]",
        "labelled": str(found["labelled"]),
        "confidence": str(round(found["confidence"] * 100)),
    }


def _evaluator_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, info in summary.get("evaluators", {}).items():
        usage = info.get("usage") or {}
        cost = info.get("cost_usd")
        cache = info.get("cache")
        out.append(
            {
                "name": name,
                "done": info.get("done", 0),
                "errors": info.get("errors", 0),
                "resumed": info.get("resumed", 0),
                "mean_time": _num(info.get("mean_elapsed_sec"), 4),
                "model": info.get("model") or "-",
                "tokens": (
                    f"{usage.get('input_tokens', 0)} / {usage.get('output_tokens', 0)}"
                    if usage
                    else "-"
                ),
                "cost": f"{cost:.4f}" if isinstance(cost, float) else "-",
                "cache": f"{cache['hits']} / {cache['misses']}" if cache else "-",
            }
        )
    return out


def _target(target: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not target:
        return None
    usage = target.get("usage") or {}
    return {
        "calls": target.get("calls", 0),
        "errors": target.get("errors", 0),
        "reused": target.get("reused", 0),
        "elapsed": _num(target.get("elapsed_sec")),
        "tokens": usage.get("total_tokens", 0) if usage else None,
    }


def _histograms(result: ReportData) -> list[dict[str, Any]]:
    figures = []
    for key, stats in result.aggregates.items():
        values = result.histograms.get(key, [])
        if not values:
            continue
        boolean = stats.get("type") == "boolean"
        figures.append(
            {
                "key": key,
                "rate": _num(stats.get("mean")) if boolean else None,
                "chart": _histogram(key, values, boolean),
            }
        )
    return figures


def _groups(result: ReportData) -> dict[str, Any] | None:
    by_group = result.by_group
    if not by_group:
        return None
    per_group: Mapping[str, Any] = by_group["per_group"]
    groups = list(per_group.items())
    micro, macro = by_group["micro"], by_group["macro"]["scores"]
    keys = list(result.aggregates)
    charts = [
        {
            "key": key,
            "macro": _num(macro.get(key, {}).get("mean")),
            "micro": _num(micro["scores"].get(key, {}).get("mean")),
            "chart": _group_chart(
                key, [(name, info["scores"].get(key, {})) for name, info in groups]
            ),
        }
        for key in keys[:_MAX_GROUP_CHARTS]
    ]

    def means(scores: Mapping[str, Any]) -> list[str]:
        return [_num(scores.get(k, {}).get("mean")) for k in keys]

    rows = [
        {
            "name": name,
            "ok": info["number_of_success_samples"],
            "failed": info["number_of_error_samples"],
            "errors": ", ".join(f"{k}: {v}" for k, v in info["errors"].items()) or "-",
            "means": means(info["scores"]),
        }
        for name, info in per_group.items()
    ]
    return {
        "charts": charts,
        "score_keys": keys,
        "rows": rows,
        "micro": {
            "ok": micro["number_of_success_samples"],
            "failed": micro["number_of_error_samples"],
            "means": means(micro["scores"]),
        },
        "macro_means": means(macro),
    }


def _chip(result: Mapping[str, Any]) -> dict[str, Any]:
    score = result.get("score")
    cls = " t" if score is True else " f" if score is False else ""
    return {"key": result.get("key"), "score": _num(score), "cls": cls}


def _rows(result: ReportData, max_rows: int) -> list[dict[str, Any]]:
    rows = result.rows
    chosen = [r for r in rows if r.get("status") == "error"][:max_rows]
    if len(chosen) < max_rows:
        chosen += [r for r in rows if r.get("status") != "error"][: max_rows - len(chosen)]
        chosen.sort(key=lambda r: r["index"])
    out = []
    for row in chosen:
        chips, notes, failed = [], [], []
        for name, entry in row.get("evaluations", {}).items():
            for res in entry.get("results", []):
                chips.append(_chip(res))
                if res.get("comment"):
                    notes.append(
                        {"kind": "comment", "name": res.get("key"), "text": str(res["comment"])}
                    )
            if entry.get("status") != "success":
                failed.append(name)
                err = entry.get("error") or {}
                notes.append(
                    {
                        "kind": "error",
                        "name": name,
                        "type": err.get("type", "Error"),
                        "text": str(err.get("message", "")),
                    }
                )
        target = row.get("target") or {}
        if target.get("status") == "error":
            notes.append({"kind": "target", "type": str((target.get("error") or {}).get("type"))})
        inputs = json_text(row.get("inputs"))
        outputs = json_text(row.get("outputs"))
        reference = json_text(row.get("reference_outputs"))
        status = row.get("status", "")
        head = [str(row.get("id")), str(row.get("group") or ""), status]
        search = " ".join([*head, inputs, outputs, reference, *failed]).lower()[:4000]
        out.append(
            {
                "index": row["index"],
                "id": row.get("id"),
                "group": row.get("group") or "",
                "status": status,
                "failed": failed,
                "search": search,
                "chips": chips,
                "notes": notes,
                "inputs": inputs,
                "outputs": outputs,
                "reference": reference,
            }
        )
    return out
