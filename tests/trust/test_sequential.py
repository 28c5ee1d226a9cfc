"""Sequential A/B: the error rate holds under optional stopping (simulation), a real difference
stops the run early, and the confidence sequence is a valid interval."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from openevals._contract import EvaluatorInfo, attach_info
from openevals.comparison.sequential import asequential_compare, sequential_compare
from openevals.trust.sequential import SequentialTest, log_wealth


def test_type_one_error_under_optional_stopping() -> None:
    """2,000 simulated A/B streams (seed 0) with no true difference: paired differences -1, 0, 1
    with probabilities 1/4, 1/2, 1/4, watched after every one of 400 rows. A stream is a false
    discovery if the wealth at the true mean ever reaches 1/alpha (the test rejects at its first
    look there). The share of such streams is at most alpha = 0.05 (+2 binomial s.d., 0.01); the
    bound is Ville's inequality, so it holds at any stopping rule (measured: about 0.035)."""
    rng = np.random.default_rng(0)
    d = rng.choice([-1.0, 0.0, 1.0], size=(2000, 400), p=[0.25, 0.5, 0.25])
    wealth = log_wealth((d + 1) / 2, 0.5, 0.05)[..., 0]
    ever = (wealth >= math.log(20)).any(axis=1).mean()
    assert ever <= 0.06
    # A fixed-n z-test looked at after every 10 rows rejects far more often (the reason for the
    # anytime-valid test): the same streams, peeking 40 times.
    means = np.cumsum(d, axis=1) / np.arange(1, 401)
    sds = np.sqrt(0.5 / np.arange(1, 401))
    peeked = (np.abs(means / sds)[:, 9::10] > 1.96).any(axis=1).mean()
    assert peeked > 0.15


def test_a_real_difference_is_found_early_and_covered() -> None:
    """500 streams (seed 1) with a true difference of +0.2: most decide "candidate better" within
    400 rows, and the interval covers +0.2 throughout in at least 95% of them."""
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, 0.0, 1.0], size=(500, 400), p=[0.15, 0.5, 0.35])
    wealth = log_wealth((d + 1) / 2, 0.5, 0.05)[..., 0]
    decided = (wealth >= math.log(20)).any(axis=1)
    assert decided.mean() > 0.9
    # The sequence holds +0.2 (0.6 on the [0, 1] scale) exactly while the wealth there stays
    # below 1/alpha.
    at_truth = log_wealth((d + 1) / 2, 0.6, 0.05)[..., 0]
    assert (at_truth < math.log(20)).all(axis=1).mean() >= 0.95
    test = SequentialTest()
    test.update(d[0])
    assert (test.low <= 0.2 <= test.high) == bool((at_truth[0] < math.log(20)).all())


def test_sequential_test_decisions_and_options() -> None:
    test = SequentialTest(width=0.5)
    assert test.decision == "undecided" and test.estimate is None
    assert test.update([1.0] * 30) == "candidate better" and test.low > 0
    worse = SequentialTest()
    assert worse.update([-1.0] * 30) == "candidate worse" and worse.high < 0
    settled = SequentialTest(width=0.5)
    rng = random.Random(3)
    for _ in range(20):
        settled.update([rng.choice([-1.0, 1.0]) for _ in range(100)])
        if settled.decision != "undecided":
            break
    assert settled.decision == "settled" and settled.high - settled.low <= 0.5
    assert settled.low <= 0 <= settled.high
    wide = SequentialTest(bounds=(0, 10))
    wide.update([5.0, -3.0])
    assert wide.estimate == pytest.approx(1.0)
    with pytest.raises(ValueError, match="within"):
        SequentialTest().update([2.0])
    for bad in ({"alpha": 1.5}, {"width": 0}, {"bounds": (1, 0)}):
        with pytest.raises(ValueError):
            SequentialTest(**bad)  # type: ignore[arg-type]


def _judge(*, outputs: Any = None, **_: Any) -> dict[str, Any]:
    return {"key": "ok", "score": outputs == "good"}


attach_info(_judge, EvaluatorInfo(run_name="ok", feedback_keys=("ok",), score_type="boolean"))
ROWS = [{"id": f"r{i}", "inputs": i} for i in range(2000)]


def _system(rate: float, seed: int) -> Any:
    def target(inputs: int) -> str:  # a fixed answer per row, so reruns are stable
        return "good" if random.Random(seed * 100_000 + inputs).random() < rate else "bad"

    return target


def test_sequential_compare_stops_once_settled() -> None:
    found = sequential_compare(
        ROWS, [_judge], key="ok", baseline=_system(0.4, 1), candidate=_system(0.8, 2)
    )
    assert found.decision == "candidate better" and found.stopped_early
    assert found.rows < 300 and found.rows % 50 == 0
    assert found.low > 0 and found.low <= found.estimate <= found.high  # type: ignore[operator]
    assert "candidate better after" in str(found)
    same = sequential_compare(
        ROWS[:100], [_judge], key="ok", baseline=_system(0.5, 3), candidate=_system(0.5, 3)
    )
    assert same.decision == "undecided" and same.rows == 100 and not same.stopped_early


async def test_async_twin_gives_the_same_answer() -> None:
    options = dict(key="ok", baseline=_system(0.4, 1), candidate=_system(0.8, 2), max_rows=400)
    found = await asequential_compare(ROWS, [_judge], **options)  # type: ignore[arg-type]
    assert found == sequential_compare(ROWS, [_judge], **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"key": ""}, TypeError, "`key`"),
        ({"baseline": 3}, TypeError, "`baseline`"),
        ({"batch_size": 0}, ValueError, "`batch_size`"),
        ({"max_rows": 0}, ValueError, "`max_rows`"),
        ({"run_options": {"output": "x"}}, ValueError, "run_options"),
        ({"alpha": 2.0}, ValueError, "`alpha`"),
    ],
)
def test_bad_options(kwargs: Any, error: Any, match: str) -> None:
    options = {"key": "ok", "baseline": _system(0.5, 1), "candidate": _system(0.5, 2), **kwargs}
    with pytest.raises(error, match=match):
        sequential_compare(ROWS, [_judge], **options)
