"""The self-contained HTML report."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import evaluate
from openevals.exact import exact_match
from openevals.report.html import histogram_bins, render_report
from openevals.string.levenshtein import levenshtein_distance

DATA = [
    {
        "id": f"r{i}",
        "inputs": {"q": f"question {i}"},
        "outputs": f"a{i % 3}",
        "reference_outputs": "a0",
        "template_id": "alpha" if i < 6 else "beta",
    }
    for i in range(12)
]


def judge_like(*, outputs: str, **kwargs: Any) -> dict[str, Any]:
    if outputs == "a2":
        raise ValueError("judge exploded <b>badly</b>")
    return {"key": "quality", "score": 0.8, "comment": "Looks <script>alert(1)</script> fine"}


def per_batch(batch: dict[str, list[Any]]) -> dict[str, Any]:
    return {"rows_seen": {"value": len(batch["id"])}}


@pytest.fixture(scope="module")
def result() -> Any:
    return evaluate(
        DATA,
        [exact_match, levenshtein_distance, judge_like],
        group_by="template_id",
        batch_metrics=[per_batch],
        progress=False,
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_report_is_self_contained(result: Any, tmp_path: Path) -> None:
    path = result.report_html(tmp_path / "sub" / "report.html", title="My <run>")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    parser = _Tags()
    parser.feed(page)
    for tag, attrs in parser.tags:
        assert tag not in ("link", "img", "iframe"), f"external asset tag <{tag}>"
        assert "src" not in attrs, f"<{tag}> loads {attrs['src']}"
        assert not (attrs.get("href") or "").startswith(("http", "//")), attrs
    assert "@import" not in page and "url(" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "<title>My &lt;run&gt;</title>" in page
    assert page.count("<table") == page.count("</table>")


def test_report_sections(result: Any) -> None:
    page = render_report(result)
    assert 'id="scores"' in page and 'id="evaluators"' in page
    for key in ("exact_match", "levenshtein_distance", "quality"):
        assert f'aria-label="histogram of {key}"' in page
        assert f'aria-label="{key} by group"' in page
    assert "exact_match (true rate 0.333)" in page
    assert 'id="groups"' in page and "macro (mean of groups)" in page
    assert 'id="batch-metrics"' in page and "rows_seen" in page
    assert 'id="rows"' in page and 'id="q"' in page and "<script>" in page
    assert page.count('data-status="error"') == 4
    assert page.count('data-status="success"') == 8
    assert 'data-failed="judge_like"' in page


def test_untrusted_text_is_escaped(result: Any) -> None:
    page = render_report(result)
    assert "<script>alert(1)</script>" not in page
    assert "Looks &lt;script&gt;alert(1)&lt;/script&gt; fine" in page
    assert "judge exploded &lt;b&gt;badly&lt;/b&gt;" in page


def test_rows_are_capped_with_errors_first(result: Any) -> None:
    page = render_report(result, max_rows=3)
    assert "Showing 3 of 12 rows" in page
    assert page.count("<tr data-status=") == 3
    assert page.count('data-status="error"') == 3
    with pytest.raises(ValueError, match="max_rows"):
        render_report(result, max_rows=-1)


def test_secrets_from_the_environment_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENDOR_TOKEN", "tok-very-secret-42")
    rows = [{"outputs": "tok-very-secret-42", "reference_outputs": "x"}]
    page = render_report(evaluate(rows, [exact_match], progress=False))
    assert "tok-very-secret-42" not in page and "[REDACTED]" in page


def test_histogram_bins() -> None:
    assert histogram_bins([1.0, 0.0, 1.0], boolean=True) == [("false", 1), ("true", 2)]
    bins = histogram_bins([0.0, 0.05, 0.5, 0.95, 1.0])
    assert len(bins) == 10 and sum(c for _, c in bins) == 5
    assert bins[0] == ("0–0.1", 2) and bins[-1][1] == 2
    assert histogram_bins([3.0, 3.0]) == [("3.000", 2)]
    wide = histogram_bins([0.0, 5.0, 10.0])
    assert wide[0][0] == "0–1" and sum(c for _, c in wide) == 3
    assert histogram_bins([]) == []


def test_the_page_comes_from_the_packaged_autoescaping_template() -> None:
    import openevals.report.html as report

    template = Path(report.__file__).parent / "templates" / report.TEMPLATE
    assert template.is_file()
    environment = report._environment()
    assert environment.autoescape is True
    page = environment.get_template(report.TEMPLATE).render(
        **{**_minimal_context(), "title": "<b>raw</b>"}
    )
    assert "<title>&lt;b&gt;raw&lt;/b&gt;</title>" in page


def _minimal_context() -> dict[str, Any]:
    return {
        "generated": "now",
        "evaluators": [],
        "interrupted": False,
        "text_limit": 400,
        "cards": [],
        "scores": [],
        "evaluator_rows": [],
        "errors_by_type": [],
        "target": None,
        "histograms": [],
        "groups": None,
        "batch_metrics": [],
        "batch_errors": [],
        "grouped": False,
        "rows": [],
        "rows_total": 0,
        "sections": [],
    }


def test_report_and_result_do_not_import_each_other() -> None:
    import json
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    code = (
        "import json, sys\n"
        "import openevals.report.html\n"
        "first = sorted(sys.modules)\n"
        "import openevals.evaluation.result\n"
        "print(json.dumps([first, sorted(sys.modules)]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    after_report, after_result = json.loads(proc.stdout)
    assert "openevals.evaluation.result" not in after_report
    assert "jinja2" not in after_report, "Jinja2 loads only when a report is rendered"
    assert "openevals.report.html" in after_result  # only because it was imported first
    code_result = "import json, sys\nimport openevals.evaluation.result\nprint(json.dumps(sorted(sys.modules)))"
    alone = subprocess.run(
        [sys.executable, "-c", code_result], capture_output=True, text=True, env=env, check=True
    )
    assert "openevals.report.html" not in json.loads(alone.stdout)


def calibration_section(*, notes: list[str]) -> Any:
    """A calibration section of one row, no disagreements, with ``notes``."""
    from openevals.report.html import ReportSection

    values = {
        "label": "human",
        "label_type": "boolean",
        "feedback_key": "k",
        "n": 1,
        "confidence": 95,
        "figures": [],
        "notes": notes,
        "confusion": None,
        "disagreements": [],
        "disagreements_total": 0,
        "failed": [],
    }
    return ReportSection(
        kind="calibration",
        values=values,
        template=("openevals.calibration", "calibration.html.j2"),
        single=True,
    )


def test_sections_are_passed_in_and_checked() -> None:
    result = evaluate([{"outputs": "a", "reference_outputs": "a"}], [exact_match], progress=False)
    assert result.report_sections() == []
    with pytest.raises(TypeError, match="sections must be a sequence of ReportSection"):
        render_report(result, sections=[{"kind": "pairwise"}])  # type: ignore[list-item]
    section = calibration_section(notes=["a <note>"])
    page = render_report(result, sections=[section])
    assert "a &lt;note&gt;" in page and "against human labels" in page
    assert "against human labels" not in render_report(result)
    with pytest.raises(ValueError, match="at most one"):
        render_report(result, sections=[section, section])
