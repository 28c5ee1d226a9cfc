"""Prediction-powered means: equal to ppi-python, and covering at the nominal rate where the judge
alone does not.

Reference: ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (the ``ppi-python`` package, a
dev dependency). Tolerance: 1e-10 relative (the same formulas in floating point).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openevals.trust.ppi import classical_mean, ppi_arrays, ppi_difference, ppi_mean

ppi_py = pytest.importorskip("ppi_py")

TOL = 1e-10


def _biased(rng: Any, n: int, rate: float = 0.6) -> tuple[Any, Any]:
    """Boolean truths and a judge that passes 30% of the failures and misses 10% of the passes."""
    truth = rng.random(n) < rate
    u = rng.random(n)
    judge = np.where(truth, u < 0.9, u < 0.3)
    return truth.astype(float), judge.astype(float)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tuned", [True, False])
def test_boolean_mean_equals_ppi_python(seed: int, tuned: bool) -> None:
    rng = np.random.default_rng(seed)
    human, labelled = _biased(rng, 200)
    _, unlabelled = _biased(rng, 5000)
    found = ppi_mean(human, labelled, unlabelled, confidence=0.9, tuned=tuned)
    lam = None if tuned else 1.0
    low, high = ppi_py.ppi_mean_ci(human, labelled, unlabelled, alpha=0.1, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(human, labelled, unlabelled, lam=lam)
    assert found.value == pytest.approx(float(np.ravel(point)[0]), rel=TOL)
    assert found.low == pytest.approx(float(low[0]), rel=TOL)
    assert found.high == pytest.approx(float(high[0]), rel=TOL)
    assert found.n_labelled == 200 and found.n_unlabelled == 5000
    assert (0.0 <= found.lam <= 1.0) if tuned else found.lam == 1.0


def test_continuous_mean_equals_ppi_python() -> None:
    rng = np.random.default_rng(7)
    truth = rng.normal(0.5, 0.2, 6300)
    judge = 0.8 * truth + 0.2 + rng.normal(0, 0.1, 6300)  # shrunk towards 1 and noisy
    found = ppi_mean(truth[:300], judge[:300], judge[300:])
    low, high = ppi_py.ppi_mean_ci(truth[:300], judge[:300], judge[300:], alpha=0.05)
    assert (found.low, found.high) == pytest.approx((float(low[0]), float(high[0])), rel=TOL)


def test_a_useless_judge_falls_back_to_the_human_interval() -> None:
    rng = np.random.default_rng(3)
    human = (rng.random(300) < 0.5).astype(float)
    noise = (rng.random(300) < 0.5).astype(float)
    found = ppi_mean(human, noise, (rng.random(3000) < 0.5).astype(float))
    # lam near 0: the interval is about the classical one on the labels alone, never much wider.
    _, low, high = classical_mean(human, confidence=0.95)
    assert found.lam < 0.15
    assert found.high - found.low < 1.1 * (float(high) - float(low))


def test_paired_difference_is_the_mean_of_differences() -> None:
    rng = np.random.default_rng(11)
    hb, jb = _biased(rng, 250, 0.5)
    hc, jc = _biased(rng, 250, 0.65)
    _, ub = _biased(rng, 4000, 0.5)
    _, uc = _biased(rng, 4000, 0.65)
    found = ppi_mean(hc - hb, jc - jb, uc - ub)
    low, high = ppi_py.ppi_mean_ci(hc - hb, jc - jb, uc - ub, alpha=0.05)
    assert (found.low, found.high) == pytest.approx((float(low[0]), float(high[0])), rel=TOL)


def test_difference_with_a_rectifier_per_side() -> None:
    rng = np.random.default_rng(5)
    hb, jb = _biased(rng, 150)
    hc, jc = _biased(rng, 220)
    d = rng.integers(-1, 2, 3000).astype(float)
    found = ppi_difference((hb, jb), (hc, jc), d)
    rb, rc = hb - jb, hc - jc
    value = d.mean() + rc.mean() - rb.mean()
    se = np.sqrt(d.var() / 3000 + rc.var() / 220 + rb.var() / 150)
    assert found.value == pytest.approx(value, rel=TOL)
    assert found.se == pytest.approx(se, rel=TOL)
    assert found.high - found.value == pytest.approx(1.959963984540054 * se, rel=1e-9)
    assert found.n_labelled == 370


def test_coverage_on_a_biased_judge() -> None:
    """3,000 simulated studies (seed 2026): 200 labels, 1,000 judged rows, a judge that passes
    30% of failures and misses 10% of passes (true rate 0.6, judge's rate 0.66).

    The corrected 95% interval covers the true rate in 93-97% of studies (the binomial s.d. of
    the measured coverage is 0.004, so the band is 5 s.d. wide each side); the judge's own
    interval, centred on the wrong value, almost never does.
    """
    rng = np.random.default_rng(2026)
    reps, n, big_n, rate = 3000, 200, 1000, 0.6
    human, labelled = _biased(rng, reps * n, rate)
    _, unlabelled = _biased(rng, reps * big_n, rate)
    human, labelled = human.reshape(reps, n), labelled.reshape(reps, n)
    unlabelled = unlabelled.reshape(reps, big_n)
    for tuned in (True, False):
        found = ppi_arrays(human, labelled, unlabelled, confidence=0.95, tuned=tuned)
        covered = ((found["low"] <= rate) & (rate <= found["high"])).mean()
        assert 0.93 <= covered <= 0.97, (tuned, covered)
    _, low, high = classical_mean(unlabelled, confidence=0.95)
    raw = ((low <= rate) & (rate <= high)).mean()
    assert raw < 0.2


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([1, 0, 1], [1, 1], [1, 0, 1]), {}, "one value per labelled row"),
        (([1], [1], [1, 0]), {}, "at least 2"),
        ((["a", "b"], [1, 0], [1, 0]), {}, "sequence of numbers"),
        (([1, float("nan")], [1, 0], [1, 0]), {}, "finite"),
        (([1, 0], [1, 0], [1, 0]), {"confidence": 95}, "confidence"),
        (("10", [1, 0], [1, 0]), {}, "sequence of numbers"),
    ],
)
def test_bad_input_names_the_parameter(args: Any, kwargs: Any, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        ppi_mean(*args, **kwargs)
