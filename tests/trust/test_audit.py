"""audit_judge: scripted judges with planted biases are caught; unbiased ones pass at the nominal
false-positive rate; the transforms are deterministic and keep the content."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openevals._contract import EvaluatorInfo, attach_info
from openevals.audit import aaudit_judge, audit_judge, transforms
from openevals.audit.battery import POINTWISE, paired_pvalue, verdict_of
from openevals.comparison.stats import holm

GOOD = "The result is 4. It is the sum of two and two, which you can check by counting."
BAD = "The result is 5. It is the sum of two and two, which you can check by counting."
ROWS = [
    {"id": f"r{i}", "inputs": "What is 2 + 2?", "outputs": GOOD if i % 2 else BAD}
    for i in range(60)
]


def _judge(name: str, extra: Any = None) -> Any:
    """A boolean judge: passes correct answers (a "4"), plus whatever ``extra`` lets through."""

    def judge(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        text = str(outputs)
        passed = " 4." in text or " 4" in text.split("\n")[0]
        if extra is not None:
            passed = extra(text, passed)
        return {"key": "correct", "score": passed}

    judge.__name__ = name
    return attach_info(
        judge, EvaluatorInfo(run_name=name, feedback_keys=("correct",), score_type="boolean")
    )


PLANTED = {
    "length": _judge("wordy", lambda text, ok: ok or len(text) > 250),
    "style": _judge("stiff", lambda text, ok: ok and not text.startswith("ok so")),
    "format": _judge("markdown_fan", lambda text, ok: ok or "**" in text),
    "family_hint": _judge("brand_fan", lambda text, ok: ok or "GPT-4o" in text),
    "anchoring": _judge("suggestible", lambda text, ok: ok or "9/10" in text),
}


@pytest.mark.parametrize("bias", sorted(PLANTED))
def test_each_planted_bias_is_detected_and_only_it(bias: str) -> None:
    report = audit_judge(ROWS, PLANTED[bias], progress=False, resamples=200)
    assert [t.name for t in report.tests] == list(POINTWISE)
    found = report.test(bias)
    assert found.verdict == "biased", str(report)
    assert found.n == 60
    expected = -0.5 if bias == "style" else 0.5  # every wrong answer flips (or every right one)
    assert found.effect == pytest.approx(expected)
    assert found.ci_low is not None and found.ci_high is not None
    assert found.ci_low <= expected <= found.ci_high
    others = [t for t in report.tests if t.name != bias]
    assert all(t.verdict == "no bias detected" for t in others), str(report)
    assert report.failures() and report.failures()[0].startswith(f"{bias}: ")
    with pytest.raises(AssertionError, match="the judge is biased"):
        report.check()


def test_an_unbiased_judge_passes_and_the_report_shows_it(tmp_path: Path) -> None:
    def noisy(text: str, ok: bool) -> bool:
        # Noise that does not depend on the form: a hash of the answer's content words.
        digest = hashlib.sha256(("4" if " 4" in text else "5").encode()).digest()
        return ok if digest[0] % 7 else not ok

    report = audit_judge(ROWS, _judge("fair", noisy), progress=False, resamples=200)
    assert not report.biased and report.failures() == []
    report.check()
    assert all(t.effect == 0 for t in report.tests)
    page = report.report_html(tmp_path / "audit.html").read_text("utf-8")
    assert "Judge audit" in page and "no bias detected" in page
    assert "Judge audit: 60 rows" in str(report)
    assert report.to_dict()["tests"][0]["name"] == "length"


def test_position_bias_of_a_pairwise_judge() -> None:
    def first_wins(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        return {"key": "pref", "scores": {0: 1.0, 1: 0.0}}

    def fair(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
        a, b = outputs
        score_a = 1.0 if " 4." in a and " 4." not in b else 0.0 if " 4." in b else 0.5
        return {"key": "pref", "scores": {0: score_a, 1: 1.0 - score_a}}

    rows = [{"id": f"p{i}", "outputs": [GOOD, BAD] if i % 2 else [BAD, GOOD]} for i in range(40)]
    biased = audit_judge(rows, first_wins, progress=False, resamples=200)
    assert [t.name for t in biased.tests] == ["position"]
    assert biased.test("position").effect == pytest.approx(1.0)
    assert biased.test("position").verdict == "biased"
    clean = audit_judge(rows, fair, progress=False, resamples=200)
    assert clean.test("position").effect == 0 and clean.test("position").verdict != "biased"


async def test_async_audit_matches_the_sync_one() -> None:
    sync_judge = PLANTED["length"]

    async def judge(**kw: Any) -> Any:
        return sync_judge(**kw)

    report = await aaudit_judge(ROWS[:20], judge, progress=False, resamples=200, tests=["length"])
    same = audit_judge(ROWS[:20], sync_judge, progress=False, resamples=200, tests=["length"])
    assert report.tests == same.tests


def test_unbiased_judges_fail_at_most_at_the_nominal_rate() -> None:
    """1,000 simulated audits (seed 123) of an unbiased, noisy judge on 100 rows: each row has a
    quality q ~ U(0, 1) and each form passes with probability q, independently. The decision
    path of the audit (its paired test, Holm across the five tests, min_effect 0) flags at least
    one test in at most 5% of audits (+2 binomial s.d., 0.015), and each test alone at most 5% of
    the time (+2 s.d. of 5,000 tests, 0.006). The exact sign test is conservative on discrete data, so the rates sit below 5%
    (measured: about 2% and 3%)."""
    rng = np.random.default_rng(123)
    audits, n, k = 1000, 100, len(POINTWISE)
    quality = rng.random((audits, 1, n))
    d = (rng.random((audits, k, n)) < quality).astype(float) - (
        rng.random((audits, k, n)) < quality
    ).astype(float)
    flagged_any = flagged = 0
    for trial in d:
        pvalues = [paired_pvalue(row)[0] for row in trial]
        adjusted = holm(pvalues)
        verdicts = [
            verdict_of(float(row.mean()), p, 0.05, 0.0)
            for row, p in zip(trial, adjusted, strict=True)
        ]
        flagged_any += "biased" in verdicts
        flagged += sum(p < 0.05 for p in pvalues)
    assert flagged_any / audits <= 0.065
    assert flagged / (audits * k) <= 0.056
    assert flagged / (audits * k) > 0.005  # the test can fire at all


def test_transforms_are_deterministic_and_keep_the_content() -> None:
    text = "It is not 5. **The result is 4.** You do not need a calculator."
    for fn in (transforms.formal, transforms.casual, transforms.markdown, transforms.plain):
        assert fn(text) == fn(text) and "4" in fn(text)
    assert transforms.casual(text).startswith("ok so, it isn't 5.")
    assert "don't" in transforms.casual(text) and "do not" in transforms.formal("I don't know.")
    assert transforms.plain("# Title\n- a **b** _c_ `d`") == "Title a b c d"
    assert transforms.markdown("One. Two.") == "**Answer**\n\n- One.\n- Two."
    assert transforms.pad("x").endswith(transforms.FILLER)
    nested = {"answer": "It is 4.", "n": 3, "parts": ["It is.", 1]}
    out = transforms.apply(nested, transforms.anchoring)
    assert out["n"] == 3 and out["answer"].startswith("(A senior reviewer")
    assert out["parts"][1] == 1 and nested["answer"] == "It is 4."  # never mutated


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tests": ["nope"]}, ValueError, "`tests`"),
        ({"tests": ["position", "length"]}, ValueError, "cannot be mixed"),
        ({"tests": ["position"]}, ValueError, "two answers"),
        ({"sample": 1}, ValueError, "`sample`"),
        ({"alpha": 5}, ValueError, "`alpha`"),
        ({"min_effect": -1}, ValueError, "`min_effect`"),
        ({"family": ""}, TypeError, "`family`"),
        ({"concurrency": 0}, ValueError, "concurrency"),
    ],
)
def test_bad_options_name_the_parameter(kwargs: Any, error: Any, match: str) -> None:
    with pytest.raises(error, match=match):
        audit_judge(ROWS, PLANTED["length"], progress=False, **kwargs)


def test_cli_audit_gates_on_a_biased_judge(tmp_path: Path, capsys: Any) -> None:
    import json

    from openevals.cli import main

    data = tmp_path / "rows.jsonl"
    rows = [
        {"id": f"r{i}", "outputs": f"{'right' if i % 2 else 'wrong'} answer {i}."}
        for i in range(40)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    base = ["audit", str(data), "--no-progress", "--fail-on-bias"]
    out_json = tmp_path / "audit.json"
    status = main([*base, "--judge-function", "tests.trust.judges:wordy", "--json", str(out_json)])
    captured = capsys.readouterr()
    assert status == 1 and "bias: length" in captured.err and "Judge audit: 40 rows" in captured.out
    assert json.loads(out_json.read_text())["tests"][0]["verdict"] == "biased"
    assert main([*base, "--judge-function", "tests.trust.judges:fair", "--test", "length"]) == 0
    assert main([*base, "--judge-function", "tests.trust.judges:fair", "--test", "nope"]) == 2
