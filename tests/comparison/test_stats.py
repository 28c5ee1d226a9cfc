"""The paired statistics against scipy.stats and statsmodels (dev-only references)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sp
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from openevals.comparison import stats


@given(st.integers(0, 400), st.integers(0, 400))
def test_sign_test_equals_scipy_binomtest(k: int, extra: int) -> None:
    n = k + extra
    expected = sp.binomtest(k, n, 0.5).pvalue if n else 1.0
    assert stats.sign_test(k, n) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 9), (40, 70), (120, 95), (1, 0), (500, 560)])
def test_exact_mcnemar_equals_statsmodels(b: int, c: int) -> None:
    expected = mcnemar([[10, b], [c, 10]], exact=True).pvalue
    assert stats.sign_test(c, b + c) == pytest.approx(expected, rel=1e-9)


@given(
    st.lists(st.integers(-30, 30).filter(lambda v: v != 0), min_size=1, max_size=50, unique_by=abs)
)
def test_wilcoxon_exact_equals_scipy_without_ties(values: list[int]) -> None:
    d = np.array(values, dtype=float)
    statistic, p, method = stats.wilcoxon(d)
    ref = sp.wilcoxon(d, method="exact")
    assert method == "exact"
    assert statistic == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


@given(
    st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0]), min_size=5, max_size=300).filter(
        lambda v: sum(1 for x in v if x) >= 2
    )
)
def test_wilcoxon_with_zeros_and_ties_equals_scipy(values: list[float]) -> None:
    """Zeros are dropped; then exact without ties (n <= 50), all sign flips with ties (n <= 13),
    else the tie-corrected normal."""
    d = np.array(values)
    statistic, p, method = stats.wilcoxon(d)
    nonzero = d[d != 0]
    tied = len(np.unique(np.abs(nonzero))) < len(nonzero)
    if tied and len(nonzero) <= 13:
        assert method == "exact (all sign flips)"
        ref = sp.wilcoxon(nonzero)  # scipy's default: a permutation test over all 2**n flips
    elif tied or len(nonzero) > 50:
        assert method == "normal approximation"
        ref = sp.wilcoxon(d, zero_method="wilcox", method="approx", correction=False)
    else:
        assert method == "exact"
        ref = sp.wilcoxon(nonzero, method="exact")
    assert statistic == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue, rel=1e-7)


def test_wilcoxon_large_continuous_sample_equals_scipy() -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(0.05, 1.0, 5000)
    _, p, _ = stats.wilcoxon(d)
    ref = sp.wilcoxon(d, method="approx")
    assert p == pytest.approx(ref.pvalue, rel=1e-7)
    assert stats.wilcoxon(np.zeros(10)) == (0.0, 1.0, "no non-zero differences")


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_equals_statsmodels(pvalues: list[float]) -> None:
    # statsmodels' Holm branch ends with a full gc.collect(), which costs a second per call in a
    # test process with a large heap; the reference values do not depend on it.
    with mock.patch("gc.collect", return_value=0):
        expected = multipletests(pvalues, method="holm")[1]
    assert stats.holm(pvalues) == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.parametrize("kind", ["boolean", "continuous"])
def test_bootstrap_interval_agrees_with_scipy_bootstrap(kind: str) -> None:
    rng = np.random.default_rng(11)
    if kind == "boolean":
        b = rng.random(2000) < 0.7
        c = rng.random(2000) < 0.75
        d = c.astype(float) - b.astype(float)
    else:
        d = rng.normal(0.03, 0.3, 2000)
    low, high, _ = stats.paired_bootstrap_ci(d, confidence=0.95, resamples=4000, seed=1)
    ref = sp.bootstrap(
        (d,), np.mean, confidence_level=0.95, n_resamples=4000, method="percentile", random_state=2
    ).confidence_interval
    width = ref.high - ref.low
    assert low == pytest.approx(ref.low, abs=0.06 * width)
    assert high == pytest.approx(ref.high, abs=0.06 * width)


def test_large_samples_use_the_normal_interval_and_say_so() -> None:
    d = np.random.default_rng(0).normal(0.01, 0.2, stats.BOOTSTRAP_LIMIT + 1)
    low, high, method = stats.paired_bootstrap_ci(d, confidence=0.95, resamples=2000, seed=0)
    assert method.startswith("normal")
    half = 1.959964 * d.std(ddof=1) / np.sqrt(len(d))
    assert low == pytest.approx(d.mean() - half) and high == pytest.approx(d.mean() + half)


def test_detectable_difference() -> None:
    # z_{0.975} + z_{0.8} = 2.8016; sd 0.5, 400 pairs -> 0.0700
    assert stats.detectable_difference(0.5, 400, alpha=0.05) == pytest.approx(0.07004, rel=1e-3)
    assert stats.detectable_difference(0.5, 1, alpha=0.05) is None


def test_wilcoxon_few_tied_pairs_are_exact_not_normal() -> None:
    """Nine pairs with ties: the normal approximation gives p = 0.13, the exact test 0.19."""
    d = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0, -1.0, 0.0, -2.0])
    statistic, p, method = stats.wilcoxon(d)
    ref = sp.wilcoxon(d)
    assert method == "exact (all sign flips)"
    assert (statistic, p) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue, rel=1e-9))
