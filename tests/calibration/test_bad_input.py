"""Bad calibration input fails with a clear error before any model call."""

from __future__ import annotations

from typing import Any

import pytest

from openevals.calibration import (
    JudgeFailedError,
    JudgeScoresError,
    acalibrate,
    calibrate,
    cross_validate,
    suggest_few_shot_examples,
)
from openevals.testing import FakeOpenAIServer
from tests.calibration.fakes import sync_judge


def _rows(labels: list[Any], column: str = "label") -> list[dict[str, Any]]:
    return [
        {"inputs": f"q{i}", "outputs": f"[row{i}]", column: label} for i, label in enumerate(labels)
    ]


JUDGES = {
    "boolean": {},
    "continuous": {"continuous": True},
    "choices": {"choices": [1, 2, 3]},
}

# (judge kind, rows, calibrate options, exception, words the message must hold)
CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any], type[Exception], list[str]]] = [
    ("boolean", _rows([True, False], "verdict"), {}, ValueError, ["'label'", "verdict", "label="]),
    ("boolean", _rows([True, None, False]), {}, ValueError, ["1 row(s) have no label", "rows 1"]),
    ("boolean", _rows([0.2, 0.9, 0.5]), {}, ValueError, ["boolean (pass/fail)", "continuous"]),
    ("boolean", _rows(["good", "bad"]), {}, ValueError, ["text labels", "label_map={'good'"]),
    ("continuous", _rows(["good", "bad"]), {}, ValueError, ["text labels", "label_map="]),
    ("continuous", _rows([True, False]), {}, ValueError, ["boolean", "continuous scores"]),
    ("continuous", _rows([1, 5, 3]), {}, ValueError, ["outside [0, 1]", "rescale"]),
    ("choices", _rows([1, 4, 2]), {}, ValueError, ["[4]", "outside the judge's choices"]),
    ("choices", _rows([True, False]), {}, ValueError, ["bool labels", "choices 1, 2, 3"]),
    ("boolean", _rows([True, 1, 0.5]), {}, ValueError, ["mix", "label_map"]),
    ("boolean", _rows([[1], [2]]), {}, TypeError, ["booleans, numbers or text", "list"]),
    (
        "boolean",
        _rows([True, False]),
        {"label_type": "continuous"},
        ValueError,
        ["declared continuous"],
    ),
    ("boolean", _rows([True, False]), {"label_type": "ordinal"}, ValueError, ["`label_type`"]),
    ("boolean", _rows(["p", "x"]), {"label_map": {"p": True}}, ValueError, ["'x'", "label_map"]),
    ("boolean", _rows([True, False]), {"label": 3}, TypeError, ["`label`"]),
    ("boolean", _rows([True, False]), {"reason": ""}, TypeError, ["`reason`"]),
    ("boolean", _rows([True, False]), {"tolerance": -1}, ValueError, ["`tolerance`"]),
    ("boolean", _rows([True, False]), {"judge_scores": "ordinal"}, ValueError, ["`judge_scores`"]),
    ("boolean", _rows([True, False]), {"concurrency": 0}, ValueError, ["concurrency"]),
    ("boolean", _rows([True, False]), {"confidence": 2.0}, ValueError, ["`confidence`"]),
    ("boolean", _rows([True]), {}, ValueError, ["at least 2 labelled rows"]),
    ("boolean", _rows([True, False]), {"choices": "ab"}, TypeError, ["`choices`"]),
    ("boolean", _rows([True, False]), {"feedback_key": ""}, TypeError, ["`feedback_key`"]),
]


@pytest.mark.parametrize(("kind", "rows", "options", "error", "words"), CASES)
def test_bad_input_fails_before_any_model_call(
    fake_openai: FakeOpenAIServer,
    kind: str,
    rows: list[dict[str, Any]],
    options: dict[str, Any],
    error: type[Exception],
    words: list[str],
) -> None:
    before = [dict(r) for r in rows]
    with pytest.raises(error) as info:
        calibrate(rows, sync_judge(fake_openai, **JUDGES[kind]), progress=False, **options)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert fake_openai.chat_requests == [], "no model call was made"
    assert rows == before, "the caller's rows are not mutated"


async def test_async_twin_checks_before_any_call(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="boolean"):
        await acalibrate(_rows([0.2, 0.8]), sync_judge(fake_openai), progress=False)
    assert fake_openai.chat_requests == []


def test_other_bad_arguments() -> None:
    judge = lambda **kw: True  # noqa: E731
    with pytest.raises(TypeError, match="`judge` must be an evaluator"):
        calibrate(_rows([True, False]), 42, progress=False)
    with pytest.raises(TypeError, match="one dict"):
        calibrate({"inputs": 1, "label": True}, judge, progress=False)
    with pytest.raises(TypeError, match="`judge_factory`"):
        cross_validate(_rows([True, False]), "judge", progress=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`k`"):
        cross_validate(_rows([True, False]), lambda ex: judge, k=1, progress=False)
    with pytest.raises(ValueError, match="larger than the number"):
        cross_validate(_rows([True, False]), lambda ex: judge, k=3, progress=False)
    with pytest.raises(ValueError, match="`examples_per_fold`"):
        cross_validate(_rows([True, False]), lambda ex: judge, examples_per_fold=0)
    with pytest.raises(TypeError, match="`report`"):
        suggest_few_shot_examples({"rows": []})  # type: ignore[arg-type]


def test_an_undeclared_judge_is_checked_against_the_labels_after_the_run() -> None:
    def judge(**kw: Any) -> float:
        return 0.7

    with pytest.raises(
        JudgeScoresError, match=r"scored row 0 .* 0.7, but the labels .* boolean"
    ) as e:
        calibrate(_rows([True, False]), judge, progress=False)
    assert isinstance(e.value, ValueError)
    # the run is not lost with the report: every row and its score are on the error
    assert [r["evaluations"]["judge"]["results"][0]["score"] for r in e.value.result.rows] == [
        0.7,
        0.7,
    ]
    # declaring its score type moves the check before the run
    calls: list[Any] = []

    def counting(**kw: Any) -> float:
        calls.append(kw)
        return 0.7

    with pytest.raises(ValueError, match="continuous scores"):
        calibrate(_rows([True, False]), counting, judge_scores="continuous", progress=False)
    assert calls == []


def test_rows_the_labels_cannot_use_are_reported_not_fatal() -> None:
    """Issue 28: a check that can only run after the model calls never discards the rows it
    does not concern."""
    scores = iter([True, 0.7, False, True])

    def judge(**kw: Any) -> Any:
        return next(scores)

    report = calibrate(_rows([True, False, False, True]), judge, progress=False, concurrency=1)
    assert report.n == 3 and [f.id for f in report.failed] == [report.result.rows[1]["id"]]
    assert "cannot be compared with the labels" in report.notes[0]
    assert "scored row 1" in report.failed[0].error


def test_a_judge_that_fails_everywhere_keeps_its_run() -> None:
    def judge(**kw: Any) -> bool:
        raise RuntimeError("server down")

    with pytest.raises(JudgeFailedError, match="server down") as e:
        calibrate(_rows([True, False]), judge, progress=False)
    assert len(e.value.result.rows) == 2


def test_a_judge_with_several_results_needs_a_feedback_key() -> None:
    def judge(**kw: Any) -> list[dict[str, Any]]:
        return [{"key": "a", "score": True}, {"key": "b", "score": False}]

    with pytest.raises(ValueError, match="pass `feedback_key=`"):
        calibrate(_rows([True, False]), judge, progress=False)
    report = calibrate(_rows([True, False]), judge, feedback_key="b", progress=False)
    assert report.agreement.accuracy.value == 0.5 and report.feedback_key == "b"
