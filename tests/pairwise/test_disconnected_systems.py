"""Issue 28: `evaluate(..., systems=)` keeps a finished run whose systems never all met."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openevals.evaluation import evaluate
from openevals.testing import FakeOpenAIServer
from tests.evaluation.test_pairwise_runner import _sync, _texts


def _split_responder(body: dict[str, Any]) -> dict[str, Any]:
    """Every comparison between {a, b} and {c, d} fails at the server; within a group the
    system that sorts first wins when shown first and loses when shown second."""
    a, b = (t.split()[0] for t in _texts(body))
    if ({a, b} & {"a", "b"}) and ({a, b} & {"c", "d"}):
        return {"status": 500, "body": {"error": {"message": "down"}}}
    return {"json": {"reasoning": "x", "preference": "A" if a < b else "B"}}


def test_groups_that_never_met_keep_every_row(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """Issue 28: a ranking that cannot be fitted must not discard a finished run."""
    fake_openai.set_responder(_split_responder)
    rows = [
        {"id": f"r{i}", "inputs": "q", "outputs": {s: f"{s} answer" for s in "abcd"}}
        for i in range(3)
    ]
    out = tmp_path / "run.jsonl"
    result = evaluate(
        rows, {"pref": _sync(fake_openai)}, systems=list("abcd"), output=out, progress=False
    )
    summary = result.pairwise["pref"]
    assert summary.errors == 3 * 4 and summary.comparisons == 3 * 2
    assert summary.ranking is None
    assert [r.order() for r in summary.group_rankings] == [["a", "b"], ["c", "d"]]
    assert any("['a', 'b'] | ['c', 'd']" in note for note in summary.notes)
    assert len(result.rows) == 3 and out.read_text(encoding="utf-8").count('"row"') >= 3
    as_dict = result.to_dict()["pairwise"]["pref"]
    assert as_dict["ranking"] is None and len(as_dict["group_rankings"]) == 2
    html = result.report_html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "1 (group 2)" in html and "never met" in html
