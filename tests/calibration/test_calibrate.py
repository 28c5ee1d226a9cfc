"""calibrate / acalibrate: judges scripted through the fake OpenAI server, via the batch runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openevals.calibration import (
    CalibrationReport,
    acalibrate,
    calibrate,
    suggest_few_shot_examples,
)
from openevals.testing import FakeOpenAIServer
from tests.calibration.fakes import async_judge, row_tag, scripted, sync_judge

# Human labels and the judge's scripted verdicts for 10 rows: 3 disagreements (rows 1 and 4 are
# failures the judge passed; row 7 a pass the judge failed).
HUMAN = [True, False, True, True, False, True, False, True, True, False]
JUDGE = [True, True, True, True, True, True, False, False, True, False]


def _rows(labels: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"r{i}",
            "inputs": f"question {i}",
            "outputs": f"[row{i}]",
            "human_label": label,
            "why": f"human reason {i}",
        }
        for i, label in enumerate(labels)
    ]


def _script(scores: list[Any]) -> dict[str, Any]:
    return {f"[row{i}]": s for i, s in enumerate(scores)}


def _check_boolean(report: CalibrationReport) -> None:
    figures = report.agreement
    assert report.n == 10 and report.label_type == "boolean"
    assert figures.accuracy.value == pytest.approx(0.7)
    assert figures.confusion == ((2, 2), (1, 5))  # rows human false/true, columns judge
    low, high = figures.accuracy.low, figures.accuracy.high
    assert low is not None and high is not None and low < 0.7 < high
    # missed failures (human false, judge true) first, then the failed pass
    assert [(d.id, d.severity) for d in report.disagreements] == [
        ("r1", 1.0),
        ("r4", 1.0),
        ("r7", 0.5),
    ]
    first = report.disagreements[0]
    assert first.reasoning == "judge on [row1] <b>"
    assert first.human_reason == "human reason 1"
    assert first.human is False and first.judge is True


def test_boolean_calibration_through_the_runner(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(scripted(_script(JUDGE)))
    report = calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", reason="why", progress=False
    )
    _check_boolean(report)
    assert len(fake_openai.chat_requests) == 10
    sent = json.dumps(fake_openai.chat_requests)
    assert "human reason" not in sent and "human_label" not in sent, "labels never reach the judge"
    text = str(report)
    assert "accuracy" in text and "Cohen's kappa" in text and "fail recall" in text
    assert "row 1 [r1] human=False judge=True severity=1.00" in text


async def test_async_twin_gives_the_same_report(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(scripted(_script(JUDGE)))
    report = await acalibrate(
        _rows(HUMAN), async_judge(fake_openai), label="human_label", reason="why", progress=False
    )
    _check_boolean(report)
    assert report.result.summary["evaluators"]["judge"]["done"] == 10


def test_choices_are_categorical_with_weighted_kappa(fake_openai: FakeOpenAIServer) -> None:
    human = [1, 2, 3, 3, 2, 1, 3, 2]
    judge = [1, 2, 3, 1, 2, 2, 3, 2]
    fake_openai.set_responder(scripted(_script(judge)))
    report = calibrate(
        _rows(human),
        sync_judge(fake_openai, choices=[1, 2, 3]),
        label="human_label",
        progress=False,
    )
    assert report.label_type == "categorical"
    agreement = report.agreement
    assert agreement.weighted_kappa is not None and agreement.weighted_kappa.value is not None
    assert agreement.labels == (1.0, 2.0, 3.0)
    # row 3 is two steps off on a 3-point scale, row 5 one step
    assert [(d.id, d.severity) for d in report.disagreements] == [("r3", 1.0), ("r5", 0.5)]


async def test_continuous_labels_use_correlations_and_tolerance(
    fake_openai: FakeOpenAIServer,
) -> None:
    human = [0.1, 0.4, 0.5, 0.9, 0.2, 0.8]
    judge = [0.2, 0.4, 0.9, 0.8, 0.2, 0.3]
    fake_openai.set_responder(scripted(_script(judge)))
    report = await acalibrate(
        _rows(human),
        async_judge(fake_openai, continuous=True),
        label="human_label",
        tolerance=0.15,
        progress=False,
    )
    agreement = report.agreement
    assert report.label_type == "continuous"
    assert agreement.mae.value == pytest.approx(
        sum(abs(a - b) for a, b in zip(human, judge, strict=True)) / 6
    )
    assert agreement.bias.value == pytest.approx(
        sum(b - a for a, b in zip(human, judge, strict=True)) / 6
    )
    assert agreement.pearson.value is not None and agreement.kendall.value is not None
    assert [d.id for d in report.disagreements] == ["r5", "r2"]  # gaps 0.5 and 0.4; 0.1 is within


def test_one_class_labels_say_kappa_is_undefined(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(scripted(_script([True, True, False, True])))
    report = calibrate(
        _rows([True] * 4), sync_judge(fake_openai), label="human_label", progress=False
    )
    assert report.agreement.accuracy.value == pytest.approx(0.75)
    assert report.agreement.kappa.value is None
    assert "undefined" in str(report) and "accuracy is reported alone" in str(report)


def test_resume_and_cache_make_no_new_calls(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.set_responder(scripted(_script(JUDGE)))
    out = tmp_path / "calib.jsonl"
    first = calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", output=out, progress=False
    )
    assert len(fake_openai.chat_requests) == 10
    again = calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", output=out, progress=False
    )
    assert len(fake_openai.chat_requests) == 10, "the rerun resumed from the output file"
    assert again.to_dict()["figures"] == first.to_dict()["figures"]
    cache = tmp_path / "cache.sqlite"
    calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", cache=str(cache), progress=False
    )
    calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", cache=str(cache), progress=False
    )
    assert len(fake_openai.chat_requests) == 20, "the second cached run made no model calls"


def test_judge_errors_are_left_out_never_scored(fake_openai: FakeOpenAIServer) -> None:
    scores = _script(JUDGE)

    def respond(body: dict[str, Any]) -> Any:
        if row_tag(body) in ("[row0]", "[row2]"):
            return {"status": 500, "body": {"error": {"message": "boom"}}}
        return scripted(scores)(body)

    fake_openai.set_responder(respond)
    report = calibrate(_rows(HUMAN), sync_judge(fake_openai), label="human_label", progress=False)
    assert report.n == 8
    assert sorted(f.id for f in report.failed) == ["r0", "r2"]
    assert "2 row(s) left out" in str(report)


def test_csv_text_labels_are_read_as_booleans(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "labels.csv"
    lines = ["id,inputs,outputs,human_label"] + [
        f"r{i},question {i},[row{i}],{'true' if h else 'False'}" for i, h in enumerate(HUMAN)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fake_openai.set_responder(scripted(_script(JUDGE)))
    report = calibrate(str(path), sync_judge(fake_openai), label="human_label", progress=False)
    assert report.agreement.accuracy.value == pytest.approx(0.7)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_label_map_reads_the_same_from_every_format(
    fake_openai: FakeOpenAIServer, tmp_path: Path, suffix: str
) -> None:
    """Issue 28: 0/1 labels with label_map={0: False, 1: True} work from CSV as from JSONL."""
    path = tmp_path / f"labels{suffix}"
    if suffix == ".jsonl":
        path.write_text(
            "".join(
                json.dumps({"id": f"r{i}", "inputs": "q", "outputs": f"[row{i}]", "y": int(h)})
                + "\n"
                for i, h in enumerate(HUMAN)
            ),
            encoding="utf-8",
        )
    else:
        sep = "," if suffix == ".csv" else "\t"
        lines = [sep.join(["id", "inputs", "outputs", "y"])] + [
            sep.join([f"r{i}", "q", f"[row{i}]", str(int(h))]) for i, h in enumerate(HUMAN)
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fake_openai.set_responder(scripted(_script(JUDGE)))
    report = calibrate(
        str(path), sync_judge(fake_openai), label="y", label_map={0: False, 1: True}, progress=False
    )
    assert report.agreement.accuracy.value == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("human", "judge", "tolerance", "disagrees"),
    [
        (0.6, 0.8, 0.2, False),  # 0.8 - 0.6 == 0.20000000000000007: at the boundary, not over
        (0.1, 0.3, 0.2, False),
        (0.7, 0.4, 0.3, False),
        (0.6, 0.8000001, 0.2, True),
        (0.6, 0.85, 0.2, True),
    ],
)
def test_tolerance_boundary_is_not_a_disagreement(
    fake_openai: FakeOpenAIServer, human: float, judge: float, tolerance: float, disagrees: bool
) -> None:
    """Issue 27: a gap of exactly `tolerance` does not exceed it, floating point aside."""
    fake_openai.set_responder(scripted(_script([judge, 0.5])))
    report = calibrate(
        _rows([human, 0.5]),
        sync_judge(fake_openai, continuous=True),
        label="human_label",
        tolerance=tolerance,
        progress=False,
    )
    assert [d.id for d in report.disagreements] == (["r0"] if disagrees else [])


def test_label_map_miss_says_csv_cells_are_text(fake_openai: FakeOpenAIServer) -> None:
    rows = [{"inputs": "q", "outputs": "a", "y": "2"}, {"inputs": "q", "outputs": "b", "y": "1"}]
    with pytest.raises(ValueError, match=r"label '2' .*also looked up as 2: CSV/TSV cells"):
        calibrate(rows, sync_judge(fake_openai), label="y", label_map={1: True}, progress=False)
    assert fake_openai.chat_requests == []


def test_html_report_has_the_calibration_section_escaped(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_responder(scripted(_script(JUDGE)))
    rows = _rows(HUMAN)
    rows[1]["why"] = "<script>alert(1)</script>"
    report = calibrate(
        rows, sync_judge(fake_openai), label="human_label", reason="why", progress=False
    )
    html = report.report_html(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Calibration</h2>" in html and 'id="confusion"' in html
    assert 'id="disagreements"' in html and "Cohen&#39;s kappa" in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "judge on [row1] &lt;b&gt;" in html


def test_suggested_examples_use_the_few_shot_format(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(scripted(_script(JUDGE)))
    report = calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", reason="why", progress=False
    )
    examples = suggest_few_shot_examples(report, k=2)
    assert len(examples) == 2
    # one of each kind of mistake: a missed failure (most severe) and the failed pass
    assert {(e["outputs"], e["score"]) for e in examples} in (
        {("[row1]", False), ("[row7]", True)},
        {("[row4]", False), ("[row7]", True)},
    )
    for example in examples:
        assert set(example) == {"inputs", "outputs", "score", "reasoning"}
        assert example["reasoning"].startswith("human reason")
    only = suggest_few_shot_examples(report, k=5, rows={"r7"})
    assert [e["outputs"] for e in only] == ["[row7]"]
    # the examples plug straight into a judge factory
    judge = sync_judge(fake_openai, few_shot_examples=examples)
    judge(inputs="question 0", outputs="[row0]")
    assert "human reason" in json.dumps(fake_openai.chat_requests[-1]["messages"])
    no_reason = calibrate(
        _rows(HUMAN), sync_judge(fake_openai), label="human_label", progress=False
    )
    assert all("reasoning" not in e for e in suggest_few_shot_examples(no_reason))
