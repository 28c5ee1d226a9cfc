"""What the viewer's pages show, as plain data for the templates: row-table queries, SVG chart
geometry (histograms, the trend line with its interval band), a row's evaluations, the
labellers' agreement. Values from rows are redacted here (as the reports do) and escaped by the
templates (Jinja2 autoescaping), never marked safe.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from openevals.evaluation.redact import Redactor

__all__ = [
    "PAGE_SIZE",
    "RowQuery",
    "bars",
    "evaluations_of",
    "pretty",
    "score_cells",
    "trend_chart",
]

PAGE_SIZE = 50


def pretty(value: Any, limit: int = 20_000) -> str:
    """A row value as indented JSON text with secrets redacted (cut at ``limit`` characters)."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    text = Redactor().text(text)  # the secrets of the environment as it is now
    return text if len(text) <= limit else text[:limit] + " ...[cut]"


def _number(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class RowQuery:
    """The row table's search, filters and page, from the query string."""

    search: str | None = None
    status: str | None = None
    key: str | None = None
    below: float | None = None
    above: float | None = None
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> RowQuery:
        status = params.get("status") or None
        page_text = params.get("page", "1")
        page = int(page_text) if page_text.isdigit() and int(page_text) >= 1 else 1
        return cls(
            search=(params.get("q") or "").strip() or None,
            status=status if status in ("success", "error") else None,
            key=params.get("key") or None,
            below=_number(params.get("below")),
            above=_number(params.get("above")),
            page=page,
        )

    def filters(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "page"}

    def link(self, page: int) -> str:
        """The query string of another page with the same filters."""
        from urllib.parse import urlencode

        params = {
            "q": self.search or "",
            "status": self.status or "",
            "key": self.key or "",
            "below": "" if self.below is None else repr(self.below),
            "above": "" if self.above is None else repr(self.above),
            "page": str(page),
        }
        return "?" + urlencode({k: v for k, v in params.items() if v})


def score_cells(row: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    """The row's score per key as short text (``error`` for a failed evaluator)."""
    found: dict[str, str] = {}
    for entry in (row.get("evaluations") or {}).values():
        if entry.get("status") != "success":
            for key in keys:
                found.setdefault(key, "error")
            continue
        for result in entry.get("results") or ():
            if isinstance(result, Mapping) and "key" in result:
                found[str(result["key"])] = _short(result.get("score"))
    return [found.get(key, "") for key in keys]


def _short(score: Any) -> str:
    if isinstance(score, bool):
        return "pass" if score else "fail"
    if isinstance(score, float):
        return f"{score:.3g}"
    return "" if score is None else str(score)[:40]


def evaluations_of(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per evaluator and result: score, comment, error, cost, latency, model."""
    out: list[dict[str, Any]] = []
    for name, entry in (row.get("evaluations") or {}).items():
        common = {
            "evaluator": name,
            "elapsed": entry.get("elapsed_sec"),
            "cost": entry.get("cost_usd"),
            "model": entry.get("model"),
        }
        error = entry.get("error")
        if entry.get("status") != "success":
            message = f"{(error or {}).get('type')}: {(error or {}).get('message')}"
            out.append({**common, "key": "", "score": "error", "comment": pretty(message)})
            continue
        for result in entry.get("results") or ():
            if isinstance(result, Mapping):
                comment = result.get("comment")
                out.append(
                    {
                        **common,
                        "key": str(result.get("key")),
                        "score": _short(result.get("score")),
                        "comment": "" if comment is None else pretty(comment),
                    }
                )
    return out


def bars(
    histogram: Mapping[str, Any] | None, width: int = 320, height: int = 90
) -> list[dict[str, Any]]:
    """SVG rectangles of a binned histogram (``{"edges", "counts"}``), with their labels."""
    if not histogram:
        return []
    counts, edges = histogram.get("counts") or [], histogram.get("edges") or []
    top = max(counts) if counts else 0
    if not top:
        return []
    step = width / len(counts)
    out = []
    for i, count in enumerate(counts):
        h = height * count / top
        low, high = edges[i], edges[min(i + 1, len(edges) - 1)]
        out.append(
            {
                "x": round(i * step + 1, 2),
                "y": round(height - h, 2),
                "w": round(max(step - 2, 1), 2),
                "h": round(h, 2),
                "title": f"{low:.3g} to {high:.3g}: {count}",
            }
        )
    return out


def trend_chart(points: Sequence[Any], width: int = 720, height: int = 240) -> dict[str, Any]:
    """The trend chart's geometry: a line of means, a band of intervals, marked regressions."""
    pad = 30
    values = [
        v
        for p in points
        for v in (p.mean, p.ci_low, p.ci_high)
        if isinstance(v, (int, float)) and math.isfinite(v)
    ]
    if not values:
        return {"width": width, "height": height, "dots": [], "line": "", "band": ""}
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    span = max(len(points) - 1, 1)

    def x(i: int) -> float:
        return round(pad + (width - 2 * pad) * i / span, 2)

    def y(v: float) -> float:
        return round(height - pad - (height - 2 * pad) * (v - low) / (high - low), 2)

    dots, line, upper, lower = [], [], [], []
    for i, p in enumerate(points):
        if p.mean is None:
            continue
        dots.append(
            {
                "x": x(i),
                "y": y(p.mean),
                "run": p.run.id,
                "regressed": p.regressed,
                "title": f"run {p.run.id}: {p.mean:.3f} ({p.verdict or 'first'})",
            }
        )
        line.append(f"{x(i)},{y(p.mean)}")
        if p.ci_low is not None and p.ci_high is not None:
            upper.append(f"{x(i)},{y(p.ci_high)}")
            lower.append(f"{x(i)},{y(p.ci_low)}")
    return {
        "width": width,
        "height": height,
        "dots": dots,
        "line": " ".join(line),
        "band": " ".join(upper + lower[::-1]),
        "low": f"{low:.3g}",
        "high": f"{high:.3g}",
    }
