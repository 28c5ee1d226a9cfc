"""Secrets never reach a sink of a calibration report (issue 29, item 5).

The human's reason never goes through the batch runner's recorder, so it is cleaned when the
report is built; every sink of the report is searched for the planted secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openevals.calibration import calibrate, suggest_few_shot_examples
from openevals.evaluation.redact import REDACTED
from openevals.testing import FakeOpenAIServer
from tests.calibration.fakes import row_tag, sync_judge

SECRET = "sk-proj-PLANTED0123456789abcdef"


@pytest.fixture(autouse=True)
def secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def test_human_reasons_are_redacted_in_every_sink(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    human = [True, False, True, False]
    judge = [False, True, True, False]  # rows 0 and 1 disagree
    rows: list[dict[str, Any]] = [
        {
            "id": f"r{i}",
            "inputs": f"question {i}",
            "outputs": f"[row{i}]",
            "label": h,
            "why": f"the key {SECRET} was pasted here",
        }
        for i, h in enumerate(human)
    ]
    before = json.dumps(rows)
    fake_openai.set_responder(_reasoning(judge))
    report = calibrate(rows, sync_judge(fake_openai), reason="why", progress=False)
    sinks = {
        "str": str(report),
        "repr": repr(report),
        "to_dict": json.dumps(report.to_dict(), default=str),
        "html": report.report_html(tmp_path / "r.html").read_text(encoding="utf-8"),
        "few_shot": json.dumps(suggest_few_shot_examples(report), default=str),
    }
    for name, text in sinks.items():
        assert SECRET not in text, name
    assert REDACTED in sinks["to_dict"] and REDACTED in sinks["few_shot"]
    assert "was pasted here" in sinks["str"]  # the rest of the reason is kept
    assert json.dumps(rows) == before, "the caller's rows are not mutated"


def _reasoning(judge: list[bool]) -> Any:
    """The judge's reasoning quotes the secret too: both sides are redacted alike."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        i = int(row_tag(body)[4:-1])
        return {"json": {"reasoning": f"judge saw {SECRET}", "score": judge[i]}}

    return respond
