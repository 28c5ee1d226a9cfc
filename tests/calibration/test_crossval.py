"""cross_validate: examples come from training folds only, and on synthetic labels with a planted
error pattern the measured before/after agreement matches the truth.

The synthetic judge (pure Python, see ``_SyntheticJudge``) errs on a known set of rows:

* a *blind spot*: every row of topic "units" (20% of rows) is judged wrong - unless the judge
  was shown a few-shot example of a "units" row, as an LLM can learn a rule it misread from one
  corrected example of that kind;
* *noise*: a fixed 10% of rows, independent of topic, are judged wrong whatever the examples.

So the true accuracy without examples is 1 - P(blind xor noise) = 1 - (0.2 * 0.9 + 0.8 * 0.1) =
0.74, and with a "units" example 0.90. The examples only help through rows the judge is not
scored on: the judge never sees the labels of the rows it scores.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from openevals.calibration import CrossValidation, across_validate, cross_validate
from openevals.testing import FakeOpenAIServer
from tests.calibration.fakes import sync_judge

N = 400
BLIND = "units"
TOPICS = ["units", "dates", "names", "maths", "places"]


def _dataset(seed: int = 11) -> tuple[list[dict[str, Any]], list[bool], list[bool]]:
    rng = random.Random(seed)
    topics = [BLIND] * (N // 5) + [TOPICS[1 + i % 4] for i in range(N - N // 5)]
    rng.shuffle(topics)
    truth = [rng.random() < 0.6 for _ in range(N)]
    noisy = set(rng.sample(range(N), N // 10))
    noise = [i in noisy for i in range(N)]
    rows = [
        {
            "id": f"s{i}",
            "inputs": {"i": i, "topic": topics[i]},
            "outputs": f"answer {i}",
            "label": truth[i],
        }
        for i in range(N)
    ]
    return rows, truth, noise


ROWS, TRUTH, NOISE = _dataset()
BLIND_ROWS = [r["inputs"]["topic"] == BLIND for r in ROWS]


class _SyntheticJudge:
    """A judge factory; records which rows each judge it built scored and learned from."""

    def __init__(self, *, use_async: bool = False) -> None:
        self.built: list[dict[str, Any]] = []
        self.use_async = use_async

    def __call__(self, examples: list[dict[str, Any]]) -> Any:
        record: dict[str, Any] = {
            "examples": [e["inputs"]["i"] for e in examples],
            "scored": [],
        }
        self.built.append(record)
        learned = any(e["inputs"]["topic"] == BLIND for e in examples)

        def verdict(inputs: dict[str, Any]) -> dict[str, Any]:
            i = inputs["i"]
            record["scored"].append(i)
            wrong = NOISE[i] ^ (inputs["topic"] == BLIND and not learned)
            return {"key": "correct", "score": TRUTH[i] != wrong, "comment": f"row {i}"}

        if self.use_async:

            async def judge_async(*, inputs: Any, outputs: Any) -> dict[str, Any]:
                return verdict(inputs)

            return judge_async

        def judge(*, inputs: Any, outputs: Any) -> dict[str, Any]:
            return verdict(inputs)

        return judge


def _expected(learned: bool) -> float:
    wrong = [n ^ (b and not learned) for n, b in zip(NOISE, BLIND_ROWS, strict=True)]
    return 1 - sum(wrong) / N


def _check_synthetic(cv: CrossValidation, factory: _SyntheticJudge) -> None:
    before, after = cv.before.accuracy, cv.after.accuracy
    assert cv.n == N and cv.left_out == 0
    # the measured figures are exactly the realised agreement of the planted errors ...
    assert before.value == pytest.approx(_expected(learned=False))
    assert after.value == pytest.approx(_expected(learned=True))
    # ... and the intervals cover the planted rates (0.74 without examples, 0.90 with)
    assert before.low is not None and before.high is not None
    assert after.low is not None and after.high is not None
    assert before.low < 0.74 < before.high
    assert after.low < 0.90 < after.high
    change = cv.change
    assert change.low is not None and change.high is not None
    assert change.value == pytest.approx(after.value - before.value)
    assert 0 < change.low < 0.16 < change.high
    # every fold learned from a 'units' row of its training folds
    assert all(
        any(ROWS[i]["inputs"]["topic"] == BLIND for i in b["examples"]) for b in factory.built[1:]
    )


def test_examples_are_never_scored_by_the_judge_shown_them() -> None:
    factory = _SyntheticJudge()
    cv = cross_validate(ROWS, factory, k=5, examples_per_fold=4, progress=False)
    baseline, *folds = factory.built
    assert baseline["examples"] == [] and sorted(baseline["scored"]) == list(range(N))
    assert len(folds) == 5
    held_out_everywhere: list[int] = []
    for fold_judge, fold in zip(folds, cv.folds, strict=True):
        assert fold_judge["examples"], "each fold picked examples"
        assert not set(fold_judge["examples"]) & set(fold_judge["scored"])
        assert {f"s{i}" for i in fold_judge["scored"]} == set(fold.held_out)
        assert {f"s{i}" for i in fold_judge["examples"]} == set(fold.example_rows)
        held_out_everywhere += fold_judge["scored"]
    assert sorted(held_out_everywhere) == list(range(N)), "each row held out exactly once"
    _check_synthetic(cv, factory)
    text = str(cv)
    assert "change in accuracy" in text and "fold 4" in text


async def test_async_twin_gives_the_same_figures() -> None:
    sync_factory, async_factory = _SyntheticJudge(), _SyntheticJudge(use_async=True)
    expected = cross_validate(ROWS, sync_factory, k=5, progress=False)
    got = await across_validate(ROWS, async_factory, k=5, progress=False)
    _check_synthetic(got, async_factory)
    assert str(got) == str(expected)
    for a, b in zip(async_factory.built, sync_factory.built, strict=True):
        assert a["examples"] == b["examples"] and sorted(a["scored"]) == sorted(b["scored"])


def test_cross_validation_with_a_judge_factory_on_the_fake_server(
    fake_openai: FakeOpenAIServer,
) -> None:
    """The documented factory shape: rebuild create_llm_as_judge with the fold's examples."""
    rows = [
        {
            "id": f"r{i}",
            "inputs": f"question {i} topic {'units' if i % 3 == 0 else 'other'}",
            "outputs": f"[row{i}]",
            "label": i % 2 == 0,
            "why": f"reason {i}",
        }
        for i in range(12)
    ]
    shown: list[str] = []

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        i = int(re.search(r"Answer: \[row(\d+)\]", text).group(1))  # type: ignore[union-attr]
        knows_units = bool(re.search(r"<example>(?:(?!</example>).)*topic units", text, re.S))
        shown.append(text)
        wrong = i % 3 == 0 and not knows_units
        return {"json": {"reasoning": "r", "score": (i % 2 == 0) != wrong}}

    fake_openai.set_responder(respond)
    cv = cross_validate(
        rows,
        lambda examples: sync_judge(fake_openai, few_shot_examples=examples),
        k=2,
        examples_per_fold=2,
        reason="why",
        progress=False,
    )
    assert len(fake_openai.chat_requests) == 12 + 12  # the baseline, then each held-out row once
    assert cv.before.accuracy.value == pytest.approx(8 / 12)
    assert cv.after.accuracy.value == pytest.approx(1.0)
    for fold in cv.folds:
        assert not set(fold.example_rows) & set(fold.held_out)
        assert all(e["reasoning"].startswith("reason") for e in fold.examples)
