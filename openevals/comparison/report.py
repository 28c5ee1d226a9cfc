"""The comparison as text (the CLI's table), as a notebook summary and as a self-contained HTML
report (the packaged Jinja2 template ``templates/compare.html.j2``: a summary with the verdicts,
each key's difference with its interval, a paired plot per continuous key, the flip table and the
changed rows side by side, filterable)."""

from __future__ import annotations

import functools
import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals.report.templating import environment, number

if TYPE_CHECKING:
    import jinja2

    from openevals.comparison.results import Comparison, KeyComparison

__all__ = ["render", "summary_html", "text_table", "write_report"]

_TEXT = 300
_PLOT_POINTS = 400


def _ci(item: KeyComparison) -> str:
    if item.ci_low is None or item.ci_high is None:
        return "-"
    return f"[{item.ci_low:+.3g}, {item.ci_high:+.3g}]"


def _line(item: KeyComparison) -> list[str]:
    return [
        item.key,
        str(item.n),
        number(item.baseline_mean, ".4g"),
        number(item.candidate_mean, ".4g"),
        "-" if item.difference is None else f"{item.difference:+.4g}",
        _ci(item),
        f"{item.p_adjusted:.3g}",
        item.verdict,
    ]


HEADER = ["key", "pairs", "baseline", "candidate", "difference", "CI", "p (Holm)", "verdict"]


def text_table(comparison: Comparison) -> str:
    rows = [HEADER] + [_line(k) for k in comparison.keys]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [
        f"{comparison.candidate} vs {comparison.baseline}: {comparison.rows_paired} paired rows",
        *(
            "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
            for r in rows
        ),
    ]
    for item in comparison.keys:
        if item.verdict == "underpowered" and item.detectable is not None:
            lines.append(
                f"{item.key}: underpowered: {item.n} pairs detect differences of "
                f"{item.detectable:.3g} or more (alpha {comparison.alpha}, 80% power)"
            )
        if item.corrected is not None:
            lines.append(corrected_text(item))
        if item.flips_to_fail or item.flips_to_pass:
            lines.append(
                f"{item.key}: {item.flips_to_fail} pass -> fail, {item.flips_to_pass} fail -> pass"
            )
        if item.excluded:
            shown = ", ".join(f"{n} {why}" for why, n in item.excluded.items())
            lines.append(f"{item.key}: excluded rows: {shown}")
    lines += list(comparison.notes)
    if comparison.head_to_head is not None:
        lines.append(head_to_head_text(comparison.head_to_head))
    return "\n".join(lines)


def corrected_text(item: KeyComparison) -> str:
    """The judge-corrected difference of a calibrated key, as one line."""
    c = item.corrected
    return (
        f"{item.key}: judge-corrected difference {c.value:+.4g} [{c.low:+.3g}, {c.high:+.3g}] "
        f"({c.method}, {c.n_labelled} human labels, p {c.p_value:.3g}); the verdict uses it"
    )


def head_to_head_text(h2h: Any) -> str:
    def est(value: Any) -> str:
        return "-" if value is None or value.value is None else format(value, ".3f")

    return (
        f"head to head ({h2h.comparisons} judged pairs, {h2h.errors} failed): the candidate won "
        f"{h2h.wins}, tied {h2h.ties}, lost {h2h.losses}; win rate {est(h2h.win_rate)}; "
        f"order-flip rate {est(h2h.order_flip_rate)}"
    )


def summary_html(comparison: Comparison) -> str:
    """The per-key table as an HTML fragment (a notebook's view of the comparison)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _line(k)) + "</tr>"
        for k in comparison.keys
    )
    caption = html.escape(
        f"{comparison.candidate} vs {comparison.baseline}: {comparison.rows_paired} paired rows"
    )
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in comparison.notes)
    return f"<table><caption>{caption}</caption><tr>{head}</tr>{body}</table>{notes}"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    return environment(jinja2.PackageLoader("openevals.comparison", "templates"))


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _TEXT else text[:_TEXT] + "…"


def _plot(comparison: Comparison, key: str) -> dict[str, Any] | None:
    """A paired plot: baseline score (x) against candidate score (y) for the changed rows."""
    points = [r for r in comparison.changed if r.key == key][:_PLOT_POINTS]
    if not points:
        return None
    values = [v for r in points for v in (r.baseline_score, r.candidate_score)]
    low, high = min(values), max(values)
    span = (high - low) or 1.0

    def scale(v: float, flip: bool) -> float:
        t = (v - low) / span
        return round(20 + 260 * ((1 - t) if flip else t), 1)

    return {
        "key": key,
        "low": f"{low:.3g}",
        "high": f"{high:.3g}",
        "points": [
            {
                "x": scale(r.baseline_score, False),
                "y": scale(r.candidate_score, True),
                "up": r.candidate_score > r.baseline_score,
                "id": r.id,
            }
            for r in points
        ],
    }


def render(comparison: Comparison, *, title: str = "openevals comparison") -> str:
    keys = [
        {
            "cells": _line(k),
            "verdict": k.verdict,
            "test": k.test,
            "ci_method": k.ci_method,
            "detectable": number(k.detectable, ".3g"),
            "flips": (k.flips_to_fail, k.flips_to_pass),
            "excluded": dict(k.excluded),
            "corrected": None if k.corrected is None else corrected_text(k),
        }
        for k in comparison.keys
    ]
    groups = [
        {"group": g, "lines": [_line(k) for k in items]} for g, items in comparison.groups.items()
    ]
    rows = [
        {
            "id": r.id,
            "key": r.key,
            "change": r.change,
            "group": "" if r.group is None else str(r.group),
            "scores": f"{r.baseline_score:.4g} -> {r.candidate_score:.4g}",
            "baseline": _text(r.baseline_outputs),
            "candidate": _text(r.candidate_outputs),
            "baseline_comment": "" if r.baseline_comment is None else _text(r.baseline_comment),
            "candidate_comment": "" if r.candidate_comment is None else _text(r.candidate_comment),
        }
        for r in comparison.changed
    ]
    plots = [
        p for k in comparison.keys if k.kind == "continuous" if (p := _plot(comparison, k.key))
    ]
    return (
        _environment()
        .get_template("compare.html.j2")
        .render(
            title=title,
            c=comparison,
            header=HEADER,
            keys=keys,
            groups=groups,
            rows=rows,
            plots=plots,
            changes=sorted({r["change"] for r in rows}),
            key_names=[k.key for k in comparison.keys],
            head_to_head=None
            if comparison.head_to_head is None
            else head_to_head_text(comparison.head_to_head),
        )
    )


def write_report(comparison: Comparison, path: Any, *, title: str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(render(comparison, title=title), encoding="utf-8")
    partial.replace(target)
    return target
