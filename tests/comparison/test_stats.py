"""The paired statistics against scipy.stats and statsmodels (dev-only references)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from openevals.comparison.stats import (
    binomial_two_sided,
    holm,
    mcnemar_exact,
    minimum_detectable_difference,
    paired_bootstrap,
    sign_test,
    wilcoxon_signed_rank,
)


def _booleans(n: int, p_base: float, effect: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n) < p_base
    cand = rng.random(n) < p_base + effect
    return base, cand


@pytest.mark.parametrize(("n", "effect", "seed"), [(30, 0.0, 1), (200, 0.1, 2), (2000, 0.05, 3)])
def test_mcnemar_matches_statsmodels(n: int, effect: float, seed: int) -> None:
    base, cand = _booleans(n, 0.6, effect, seed)
    ours = mcnemar_exact(base, cand)
    table = [
        [np.sum(base & cand), np.sum(base & ~cand)],
        [np.sum(~base & cand), np.sum(~base & ~cand)],
    ]
    ref = mcnemar(table, exact=True)
    assert ours.statistic == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


@given(st.integers(0, 400), st.integers(0, 400))
def test_binomial_two_sided_matches_binomtest(k: int, extra: int) -> None:
    n = k + extra
    expected = sps.binomtest(k, n, 0.5).pvalue if n else 1.0
    assert binomial_two_sided(k, n) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_sign_test_matches_binomtest() -> None:
    rng = np.random.default_rng(4)
    d = np.round(rng.normal(0.1, 1.0, 300), 1)
    ours = sign_test(d)
    k, n = int((d > 0).sum()), int((d != 0).sum())
    assert ours.n_used == n
    assert ours.p_value == pytest.approx(sps.binomtest(k, n, 0.5).pvalue, rel=1e-9)


def _check_wilcoxon(d: np.ndarray) -> None:
    ours = wilcoxon_signed_rank(d)
    ref = sps.wilcoxon(d)
    assert ours.statistic == pytest.approx(float(ref.statistic))
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("n", [5, 12, 30, 50])
def test_wilcoxon_exact_small_samples(n: int) -> None:
    rng = np.random.default_rng(n)
    _check_wilcoxon(rng.normal(0.3, 1.0, n))


@pytest.mark.parametrize("n", [8, 13])
def test_wilcoxon_small_samples_with_zeros_and_ties_enumerate_sign_flips(n: int) -> None:
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(0.3, 1.0, n), 0)
    d[0] = 0.0
    ours = wilcoxon_signed_rank(d)
    assert ours.method.startswith("exact permutation")
    _check_wilcoxon(d)


@pytest.mark.parametrize(("n", "effect"), [(14, 0.5), (51, 0.0), (400, 0.1), (5000, 0.03)])
def test_wilcoxon_normal_approximation_with_zeros_and_ties(n: int, effect: float) -> None:
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(effect, 0.5, n), 1)  # many ties and zero differences
    assert (d == 0).any()
    ours = wilcoxon_signed_rank(d)
    assert ours.method == "normal approximation, tie-corrected"
    _check_wilcoxon(d)


def test_wilcoxon_all_zero_differences() -> None:
    result = wilcoxon_signed_rank(np.zeros(20))
    assert (result.p_value, result.n_used) == (1.0, 0)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_matches_multipletests(p: list[float]) -> None:
    expected = multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(list(expected), abs=1e-12)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_is_monotone_and_never_below_raw(p: list[float]) -> None:
    adjusted = holm(p)
    for raw, adj in zip(p, adjusted, strict=True):
        assert raw <= adj <= 1.0
    order = sorted(range(len(p)), key=lambda i: p[i])
    assert all(adjusted[a] <= adjusted[b] for a, b in itertools.pairwise(order))


@pytest.mark.parametrize("kind", ["boolean", "continuous", "large"])
def test_bootstrap_interval_agrees_with_scipy(kind: str) -> None:
    rng = np.random.default_rng(7)
    if kind == "boolean":
        base, cand = _booleans(800, 0.5, 0.05, 7)
        d = cand.astype(float) - base.astype(float)
    elif kind == "continuous":
        d = rng.normal(0.05, 0.3, 600)
    else:  # more distinct differences than categories: binned
        d = rng.normal(0.02, 0.3, 6000)
    ours = paired_bootstrap(d, confidence=0.95, resamples=4000, seed=0)
    ref = sps.bootstrap((d,), np.mean, method="percentile", n_resamples=4000, random_state=0)
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert ours.value == pytest.approx(d.mean())
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.04 * width)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.04 * width)


def test_bootstrap_is_seeded() -> None:
    d = np.random.default_rng(1).normal(0, 1, 100)
    a = paired_bootstrap(d, confidence=0.95, resamples=500, seed=3)
    b = paired_bootstrap(d, confidence=0.95, resamples=500, seed=3)
    c = paired_bootstrap(d, confidence=0.95, resamples=500, seed=4)
    assert a == b
    assert a != c


def test_minimum_detectable_difference_gives_80_percent_power() -> None:
    # Simulate: at the MDD as true effect, a z-test at alpha 0.05 rejects about 80% of the time.
    rng = np.random.default_rng(0)
    sd, n = 0.4, 500
    mdd = minimum_detectable_difference(rng.normal(0, sd, n), alpha=0.05)
    assert mdd == pytest.approx(2.8016 * sd / math.sqrt(n), rel=0.1)
    samples = rng.normal(mdd, sd, (2000, n))
    z = samples.mean(axis=1) / (samples.std(axis=1, ddof=1) / math.sqrt(n))
    power = float(np.mean(np.abs(z) > 1.959964))
    assert 0.76 <= power <= 0.84
    assert minimum_detectable_difference(np.array([1.0]), alpha=0.05) == math.inf


def test_planted_improvement_on_2000_boolean_rows_is_found() -> None:
    base, cand = _booleans(2000, 0.6, 0.05, 11)
    assert mcnemar_exact(base, cand).p_value < 0.05


def test_false_positive_rate_over_200_seeds() -> None:
    rejected_bool = rejected_cont = 0
    for seed in range(200):
        base, cand = _booleans(2000, 0.6, 0.0, 1000 + seed)
        rejected_bool += mcnemar_exact(base, cand).p_value < 0.05
        rng = np.random.default_rng(5000 + seed)
        shared = rng.random(2000)
        d = np.round(shared + rng.normal(0, 0.1, 2000), 2) - np.round(
            shared + rng.normal(0, 0.1, 2000), 2
        )
        rejected_cont += wilcoxon_signed_rank(d).p_value < 0.05
    assert 0.02 <= rejected_bool / 200 <= 0.08
    assert 0.02 <= rejected_cont / 200 <= 0.08
