"""Win rates and the Bradley-Terry ranking, checked against a direct likelihood fit."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from openevals.pairwise.stats import bradley_terry, connected_groups, win_probability, win_rates


def _simulate(strengths: dict[str, float], n: int, seed: int, tie: float = 0.1) -> list:  # type: ignore[type-arg]
    rnd = random.Random(seed)
    names = list(strengths)
    rows = []
    for _ in range(n):
        a, b = rnd.sample(names, 2)
        if rnd.random() < tie:
            rows.append((a, b, None))
            continue
        p = 1 / (1 + math.exp(strengths[b] - strengths[a]))
        rows.append((a, b, a if rnd.random() < p else b))
    return rows


def _mle(rows: list, systems: list[str]) -> np.ndarray:  # type: ignore[type-arg]
    """Plain Bradley-Terry MLE (ties = half a win each) by numerical optimisation."""
    idx = {s: i for i, s in enumerate(systems)}

    def nll(theta: np.ndarray) -> float:  # type: ignore[type-arg]
        total = 0.0
        for a, b, w in rows:
            d = theta[idx[a]] - theta[idx[b]]
            pa = -np.logaddexp(0, -d)
            pb = -np.logaddexp(0, d)
            total -= pa if w == a else pb if w == b else 0.5 * (pa + pb)
        return total

    res = minimize(nll, np.zeros(len(systems)), method="BFGS", options={"gtol": 1e-10})
    return res.x - res.x.mean()


def test_strengths_match_the_maximum_likelihood_fit() -> None:
    rows = _simulate({"a": 1.0, "b": 0.3, "c": 0.0, "d": -0.8}, 400, seed=1)
    ranking = bradley_terry(rows, prior=0, resamples=0)
    expected = _mle(rows, ["a", "b", "c", "d"])
    fitted = {s.system: s.strength.value for s in ranking.systems}
    for name, value in zip(["a", "b", "c", "d"], expected, strict=True):
        assert fitted[name] == pytest.approx(value, abs=1e-6)
    assert ranking.order() == ["a", "b", "c", "d"]


def test_bootstrap_intervals_contain_the_point_and_cover_the_truth() -> None:
    truth = {"strong": 1.0, "mid": 0.0, "weak": -1.0}
    covered = total = 0
    for seed in range(30):
        ranking = bradley_terry(_simulate(truth, 300, seed=seed, tie=0.0), resamples=200, seed=seed)
        assert ranking.order() == ["strong", "mid", "weak"]
        for system in ranking.systems:
            est = system.strength
            assert est.low is not None and est.high is not None and est.value is not None
            assert est.low <= est.value <= est.high
            covered += est.low <= truth[str(system.system)] <= est.high
            total += 1
    # 95% intervals: coverage well above chance across 90 intervals (binomial sd ~ 2.3%).
    assert covered / total >= 0.85


def test_close_systems_get_overlapping_rank_intervals() -> None:
    ranking = bradley_terry(_simulate({"x": 0.0, "y": 0.02}, 60, seed=3), resamples=300)
    assert all(s.rank_low == 1 and s.rank_high == 2 for s in ranking.systems)


def test_prior_keeps_an_undefeated_system_finite() -> None:
    rows = [("a", "b", "a")] * 5 + [("b", "c", "b")] * 3 + [("a", "c", "a")]
    with pytest.raises(ValueError, match="prior > 0"):
        bradley_terry(rows, prior=0, resamples=0)
    ranking = bradley_terry(rows, resamples=50)
    assert ranking.order()[0] == "a"
    assert win_probability(ranking, "a", "b") > 0.5


@pytest.mark.parametrize("prior", [0.5, 2.0, 0])
def test_groups_that_never_met_are_named_not_blamed_on_the_prior(prior: float) -> None:
    """Issue 28: every system won and lost, the prior is positive, yet {a, b} and {c, d} never
    met. The error names the groups; it must not advise a prior that cannot help."""
    rows = [("a", "b", "a"), ("a", "b", "b"), ("c", "d", "c"), ("d", "c", "d")] * 3
    with pytest.raises(ValueError, match=r"2 groups .*\['a', 'b'\] \| \['c', 'd'\]") as info:
        bradley_terry(rows, prior=prior, resamples=10)
    assert "use prior > 0" not in str(info.value)
    assert connected_groups(rows) == [("a", "b"), ("c", "d")]


def test_connected_groups_largest_first_and_any_direction() -> None:
    rows = [("z", "y", None), ("x", "y", "x"), ("b", "a", "a")]
    assert connected_groups(rows) == [("x", "y", "z"), ("a", "b")]
    assert connected_groups([(1, 2, 1), (3, 2, None)]) == [(1, 2, 3)]


def test_prior_zero_names_the_systems_that_never_lost_or_won() -> None:
    rows = [("a", "b", "a")] * 3 + [("b", "c", "b"), ("c", "b", "c")]
    with pytest.raises(ValueError, match=r"\['a'\] never won or never lost") as info:
        bradley_terry(rows, prior=0, resamples=0)
    assert "use prior > 0" in str(info.value)


def test_win_rates_count_from_the_first_system_side() -> None:
    rows = [("b", "a", "a"), ("a", "b", "b"), ("a", "b", None), ("a", "b", "a"), ("a", "c", "c")]
    records = {(r.a, r.b): r for r in win_rates(rows, resamples=100)}
    ab = records[("a", "b")]
    assert (ab.n, ab.wins, ab.ties, ab.losses) == (4, 2, 1, 1)
    assert ab.win_rate.value == pytest.approx(0.5)
    assert ab.tie_rate.value == pytest.approx(0.25)
    assert ab.win_rate.low is not None and ab.win_rate.low <= 0.5 <= (ab.win_rate.high or 0)
    assert records[("a", "c")].loss_rate.value == 1.0


@pytest.mark.parametrize(
    ("rows", "kwargs", "error", "match"),
    [
        ([], {}, ValueError, "empty"),
        ([("a", "a", None)], {}, ValueError, "itself"),
        ([("a", "b", "c")], {}, ValueError, "neither"),
        ([("a", "b")], {}, TypeError, "row 0"),
        ([("a", "b", "a")], {"prior": -1}, ValueError, "`prior`"),
        ([("a", "b", "a")], {"resamples": -2}, ValueError, "`resamples`"),
    ],
)
def test_bad_input(rows, kwargs, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        bradley_terry(rows, **kwargs)
