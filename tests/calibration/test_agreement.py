"""Agreement maths, cross-checked against scikit-learn and scipy."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from openevals.calibration import agreement
from openevals.calibration.agreement import categorical_agreement, continuous_agreement

LABELS = st.lists(st.sampled_from([0, 1, 2, 3]), min_size=2, max_size=40)


def _pairs(draw_len: int, rnd: random.Random, k: int) -> tuple[list[int], list[int]]:
    human = [rnd.randrange(k) for _ in range(draw_len)]
    judge = [h if rnd.random() < 0.6 else rnd.randrange(k) for h in human]
    return human, judge


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(0, 10_000), st.integers(2, 5))
def test_kappa_and_confusion_match_sklearn(n: int, seed: int, k: int) -> None:
    human, judge = _pairs(n, random.Random(seed), k)
    labels = list(range(k))
    result = categorical_agreement(human, judge, labels=labels, ordered=True, resamples=0)
    assert result.confusion == tuple(
        tuple(int(c) for c in row) for row in confusion_matrix(human, judge, labels=labels)
    )
    assert result.accuracy.value == pytest.approx(np.mean(np.array(human) == np.array(judge)))
    if len(set(human)) < 2:
        assert result.kappa.value is None
        assert "one class" in (result.kappa.note or "")
        return
    for weights, estimate in ((None, result.kappa), ("quadratic", result.weighted_kappa)):
        expected = cohen_kappa_score(human, judge, labels=labels, weights=weights)
        assert estimate is not None
        if math.isnan(expected):
            assert estimate.value is None
        else:
            assert estimate.value == pytest.approx(expected, abs=1e-12)


def test_linear_weighting_matches_sklearn() -> None:
    human, judge = _pairs(50, random.Random(7), 4)
    result = categorical_agreement(
        human, judge, labels=[0, 1, 2, 3], ordered=True, weighting="linear", resamples=0
    )
    assert result.weighted_kappa is not None
    assert result.weighted_kappa.value == pytest.approx(
        cohen_kappa_score(human, judge, weights="linear"), abs=1e-12
    )


def test_fail_precision_and_recall_for_booleans() -> None:
    human = [True, True, False, False, False, True]
    judge = [True, False, False, True, False, True]
    result = categorical_agreement(human, judge, fail_label=False, resamples=200)
    # the judge failed rows 1, 2, 4; the human failed rows 2, 3, 4
    assert result.fail_precision is not None and result.fail_recall is not None
    assert result.fail_precision.value == pytest.approx(2 / 3)
    assert result.fail_recall.value == pytest.approx(2 / 3)
    assert result.labels == (False, True)
    assert result.confusion == ((2, 1), (1, 2))


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 60), st.integers(0, 10_000), st.booleans())
def test_correlations_match_scipy(n: int, seed: int, ties: bool) -> None:
    rnd = random.Random(seed)
    human = [float(rnd.randrange(5)) if ties else rnd.random() for _ in range(n)]
    judge = [h + rnd.gauss(0, 0.5) for h in human]
    if ties:
        judge = [float(round(j)) for j in judge]
    result = continuous_agreement(human, judge, resamples=0)
    checks = (
        (result.pearson, stats.pearsonr),
        (result.spearman, stats.spearmanr),
        (result.kendall, stats.kendalltau),
    )
    for estimate, peer in checks:
        if len(set(human)) < 2 or len(set(judge)) < 2:
            assert estimate.value is None
            continue
        expected = float(peer(human, judge)[0])
        assert estimate.value == pytest.approx(expected, abs=1e-9)
    diff = np.array(judge) - np.array(human)
    assert result.mae.value == pytest.approx(float(np.abs(diff).mean()))
    assert result.bias.value == pytest.approx(float(diff.mean()))


def test_bootstrap_rows_agree_with_scipy_on_each_resample() -> None:
    """The vectorised resample statistics equal scipy on the same resampled rows."""
    rnd = random.Random(3)
    human = np.array([float(rnd.randrange(4)) for _ in range(30)])
    judge = np.array([h + rnd.choice([-1.0, 0.0, 0.0, 1.0]) for h in human])
    weights = agreement.bootstrap_weights(30, 20, seed=11)
    kendall = agreement._kendall(weights, human, judge)
    spearman = agreement._spearman(weights, human, judge)
    for row in range(1, len(weights)):
        idx = np.repeat(np.arange(30), weights[row].astype(int))
        assert kendall[row] == pytest.approx(stats.kendalltau(human[idx], judge[idx])[0], abs=1e-9)
        assert spearman[row] == pytest.approx(stats.spearmanr(human[idx], judge[idx])[0], abs=1e-9)


def test_intervals_cover_the_point_and_match_a_plain_bootstrap() -> None:
    rnd = random.Random(5)
    human = [rnd.random() for _ in range(80)]
    judge = [h + rnd.gauss(0, 0.2) for h in human]
    result = continuous_agreement(human, judge, resamples=400, seed=9)
    for est in (result.pearson, result.spearman, result.kendall, result.mae, result.bias):
        assert est.low is not None and est.high is not None and est.value is not None
        assert est.low <= est.value <= est.high
    # The same resamples drawn by hand and scored with scipy give the same percentile interval.
    weights = agreement.bootstrap_weights(80, 400, seed=9)[1:]
    h, j = np.array(human), np.array(judge)
    taus = [
        stats.kendalltau(h[idx], j[idx])[0]
        for idx in (np.repeat(np.arange(80), w.astype(int)) for w in weights)
    ]
    low, high = np.percentile(taus, [2.5, 97.5])
    assert result.kendall.low == pytest.approx(low, abs=1e-9)
    assert result.kendall.high == pytest.approx(high, abs=1e-9)


def test_same_seed_same_intervals_and_another_seed_differs() -> None:
    human = [True, False, True, True, False, False, True, False] * 5
    judge = [True, False, False, True, False, True, True, False] * 5
    a = categorical_agreement(human, judge, seed=1, resamples=300)
    b = categorical_agreement(human, judge, seed=1, resamples=300)
    c = categorical_agreement(human, judge, seed=2, resamples=300)
    assert a == b
    assert (a.kappa.low, a.kappa.high) != (c.kappa.low, c.kappa.high)


def test_large_inputs_skip_pairwise_intervals_but_keep_exact_points() -> None:
    rnd = np.random.default_rng(0)
    n = agreement.MAX_PAIRWISE_ROWS + 1
    human = rnd.normal(size=n)
    judge = human + rnd.normal(size=n)
    result = continuous_agreement(list(human), list(judge), resamples=5)
    assert result.spearman.low is None and result.kendall.low is None
    assert result.pearson.low is not None
    assert result.spearman.value == pytest.approx(stats.spearmanr(human, judge)[0], abs=1e-9)
    assert result.kendall.value == pytest.approx(stats.kendalltau(human, judge)[0], abs=1e-9)
    assert any("without intervals" in note for note in result.notes)


@pytest.mark.parametrize(
    ("human", "judge", "kwargs", "error", "match"),
    [
        ([1, 2], [1], {}, ValueError, "one label per row"),
        ([1], [1], {}, ValueError, "at least 2"),
        ("ab", "ab", {}, TypeError, "`human`"),
        ([1, 2], [1, 2], {"resamples": -1}, ValueError, "`resamples`"),
        ([1, 2], [1, 2], {"confidence": 1.0}, ValueError, "`confidence`"),
        ([1, 2], [1, 3], {"labels": [1, 2]}, ValueError, r"\[3\]"),
        ([1, 2], [1, 2], {"fail_label": 5}, ValueError, "`fail_label`"),
        ([1, 2], [1, 2], {"weighting": "cubic"}, ValueError, "`weighting`"),
    ],
)
def test_bad_categorical_input(human, judge, kwargs, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        categorical_agreement(human, judge, **kwargs)


@pytest.mark.parametrize(
    ("human", "judge", "error", "match"),
    [
        ([1.0, "x"], [1.0, 2.0], TypeError, "row 1"),
        ([1.0, True], [1.0, 2.0], TypeError, "bool"),
        ([1.0, float("nan")], [1.0, 2.0], ValueError, "finite"),
        ([1.0, 2.0], [1.0, float("inf")], ValueError, "`judge`"),
    ],
)
def test_bad_continuous_input(human, judge, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        continuous_agreement(human, judge)


def test_inputs_are_not_mutated() -> None:
    human, judge = [3.0, 1.0, 2.0], [1.0, 2.0, 3.0]
    continuous_agreement(human, judge, resamples=10)
    assert human == [3.0, 1.0, 2.0] and judge == [1.0, 2.0, 3.0]


def test_estimate_formats_with_its_interval() -> None:
    est = agreement.Estimate(0.5, 0.25, 0.75)
    assert f"{est}" == "0.500 [0.250, 0.750]"
    assert f"{agreement.Estimate(None, note='x')}" == "n/a"
