"""Report sections bring their own templates: a new kind needs no change in openevals/report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openevals.evaluation.result import EvaluationResult
from openevals.report.html import ReportSection, render_report
from tests.report.test_report import calibration_section

_NOTES = """\
{%- from "report/macros.j2" import clip with context -%}
<h2 class="owner-notes">Notes: {{ section.title }}</h2>
{%- for note in section.notes %}<p class="owner-note">{{ clip(note) }}</p>{% endfor -%}
"""


def _owner(root: Path, package: str, files: dict[str, str]) -> None:
    folder = root / package
    (folder / "templates").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    for name, text in files.items():
        (folder / "templates" / name).write_text(text)


def _result() -> EvaluationResult:
    return EvaluationResult(rows=[], aggregates={}, summary={"pairs": {}}, evaluators=["e"])


def test_a_new_kind_renders_from_its_own_template_in_order_and_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _owner(tmp_path, "owner_notes_pkg", {"notes.html.j2": _NOTES})
    monkeypatch.syspath_prepend(str(tmp_path))
    template = ("owner_notes_pkg", "notes.html.j2")
    first = ReportSection(
        kind="notes",
        values={"title": "<i>one</i>", "notes": ["a <b>x</b>", "y" * 500]},
        template=template,
    )
    second = ReportSection(kind="notes", values={"title": "two", "notes": []}, template=template)
    page = render_report(_result(), sections=[first, calibration_section(notes=[]), second])
    headings = re.findall(r"<h2[^>]*>([^<]*)</h2>", page)
    at = headings.index("Notes: &lt;i&gt;one&lt;/i&gt;")
    assert headings[at : at + 4] == [
        "Notes: &lt;i&gt;one&lt;/i&gt;",
        "Calibration",
        "Notes: two",
        "Rows",
    ]
    assert '<p class="owner-note"><pre>a &lt;b&gt;x&lt;/b&gt;</pre></p>' in page
    # The shared clip macro reads the report's text limit: the long note is cut, with a toggle.
    assert "show all (500 chars)" in page


def test_single_kinds_and_bad_templates_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _owner(tmp_path, "owner_single_pkg", {"one.html.j2": "<p>{{ section.n }}</p>"})
    monkeypatch.syspath_prepend(str(tmp_path))
    one = ReportSection(
        kind="one", values={"n": 1}, template=("owner_single_pkg", "one.html.j2"), single=True
    )
    assert "<p>1</p>" in render_report(_result(), sections=[one])
    with pytest.raises(ValueError, match="sections holds 2 one sections; pass at most one"):
        render_report(_result(), sections=[one, one])
    with pytest.raises(ValueError, match=r"template must be a \(package, file name\) tuple"):
        ReportSection(kind="one", values={}, template="one.html.j2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be a non-empty string"):
        ReportSection(kind="", values={}, template=("owner_single_pkg", "one.html.j2"))
    with pytest.raises(TypeError, match="values must be a mapping"):
        ReportSection(kind="one", values=[], template=("owner_single_pkg", "one.html.j2"))  # type: ignore[arg-type]
    missing = ReportSection(kind="one", values={}, template=("owner_no_such_pkg", "x.html.j2"))
    with pytest.raises(ValueError, match=r"owner_no_such_pkg.*no templates/ folder"):
        render_report(_result(), sections=[missing])
    absent = ReportSection(kind="one", values={}, template=("owner_single_pkg", "two.html.j2"))
    with pytest.raises(
        ValueError,
        match=r"'two\.html\.j2' is not in the templates/ folder of package 'owner_single_pkg'",
    ):
        render_report(_result(), sections=[absent])


def test_the_report_template_names_no_section_kind() -> None:
    import openevals.report.html as report

    page = (Path(report.__file__).parent / "templates" / report.TEMPLATE).read_text()
    for kind in ("calibration", "pairwise", "trials", "audit"):
        assert kind not in page, kind
