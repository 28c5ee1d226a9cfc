"""Aggregate statistics: hand-computed values, bootstrap CI, grouping, and invariants."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.evaluation.aggregates import (
    OnlineStats,
    ScoreAggregator,
    bootstrap_ci,
    describe,
    normal_ci,
    numeric_score,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_describe_hand_computed() -> None:
    stats = describe([1.0, 2.0, 3.0, 4.0])
    assert stats["type"] == "numeric"
    assert stats["count"] == 4
    assert stats["sum"] == 10.0
    assert stats["mean"] == 2.5
    assert stats["median"] == 2.5
    assert (stats["min"], stats["max"]) == (1.0, 4.0)
    assert stats["stdev"] == pytest.approx(math.sqrt(5 / 3))
    assert stats["ci_method"] == "bootstrap"
    low, high = stats["ci95"]
    assert 1.0 <= low < 2.5 < high <= 4.0


def test_describe_odd_median_single_value_and_empty() -> None:
    assert describe([3.0, 1.0, 2.0])["median"] == 2.0
    one = describe([5.0])
    assert one["stdev"] is None and one["ci95"] == [5.0, 5.0] and one["median"] == 5.0
    assert describe([]) == {"type": "numeric", "count": 0}


def test_booleans_aggregate_as_rates() -> None:
    agg = ScoreAggregator()
    for score in (True, True, False, True):
        agg.add_row([("correct", score)], [])
    stats = agg.aggregates()["correct"]
    assert stats["type"] == "boolean"
    assert stats["rate"] == stats["mean"] == 0.75
    assert stats["sum"] == 3.0
    assert (stats["min"], stats["max"]) == (0.0, 1.0)


def test_mixed_bool_and_numbers_are_numeric_and_others_are_counted() -> None:
    agg = ScoreAggregator()
    rows = [[("k", True)], [("k", 0.5)], [("k", None)], [("k", "good")], [("k", float("nan"))]]
    for scores in rows:
        agg.add_row(scores, [])
    stats = agg.aggregates()["k"]
    assert stats["type"] == "numeric"
    assert stats["count"] == 2 and stats["mean"] == 0.75
    assert stats["skipped"] == 1
    assert stats["non_numeric"] == 2


def test_numeric_score() -> None:
    assert numeric_score(True) == 1.0
    assert numeric_score(False) == 0.0
    assert numeric_score(3) == 3.0
    assert numeric_score(float("inf")) is None
    assert numeric_score("1") is None
    assert numeric_score(None) is None


def test_bootstrap_is_reproducible_and_close_to_the_normal_interval() -> None:
    values = [0.0] * 50 + [1.0] * 50
    first = bootstrap_ci(values)
    assert first == bootstrap_ci(list(reversed(values)))
    low, high = first
    assert 0.38 < low < 0.45 and 0.55 < high < 0.62
    n_low, n_high = normal_ci(0.5, describe(values)["stdev"], 100)
    assert abs(low - n_low) < 0.03 and abs(high - n_high) < 0.03
    assert bootstrap_ci(values, seed=1) != first or bootstrap_ci(values, seed=2) != first


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=1.5)


def test_large_samples_use_the_normal_interval() -> None:
    rng = random.Random(3)
    values = [rng.random() for _ in range(5000)]
    stats = describe(values)
    assert stats["ci_method"] == "normal"
    assert stats["ci95"] == pytest.approx(list(normal_ci(stats["mean"], stats["stdev"], 5000)))


def test_groups_micro_and_macro_hand_computed() -> None:
    agg = ScoreAggregator(grouped=True)
    agg.add_row([("exact", True), ("lev", 0.5)], [], "A")
    agg.add_row([("exact", False), ("lev", 1.0)], ["judge"], "A")
    agg.add_row([("exact", True), ("lev", None)], [], "B")
    agg.add_row([], ["judge", "exact_evaluator"], None)
    grouped = agg.by_group()
    assert grouped is not None
    a, b, none = (grouped["per_group"][g] for g in ("A", "B", "(none)"))
    assert (a["number_of_success_samples"], a["number_of_error_samples"]) == (1, 1)
    assert a["errors"] == {"judge": 1}
    assert a["scores"]["exact"]["rate"] == 0.5
    assert a["scores"]["lev"]["mean"] == 0.75
    assert b["scores"]["exact"]["rate"] == 1.0
    assert b["scores"]["lev"] == {"type": "numeric", "count": 0, "skipped": 1}
    assert none["number_of_error_samples"] == 1 and none["scores"] == {}
    micro = grouped["micro"]
    assert micro["number_of_success_samples"] == 2 and micro["number_of_error_samples"] == 2
    assert micro["errors"] == {"exact_evaluator": 1, "judge": 2}
    assert micro["scores"]["exact"]["mean"] == pytest.approx(2 / 3)
    assert micro["scores"]["lev"]["mean"] == 0.75
    macro = grouped["macro"]["scores"]
    assert macro["exact"] == {"mean": 0.75, "groups": 2}
    assert macro["lev"] == {"mean": 0.75, "groups": 1}
    assert agg.aggregates() == micro["scores"]


def test_ungrouped_aggregator_has_no_groups() -> None:
    agg = ScoreAggregator()
    agg.add_row([("k", 1.0)], [], "ignored")
    assert agg.by_group() is None


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=60))
def test_describe_invariants(values: list[float]) -> None:
    stats = describe(values)
    lo, hi = stats["min"], stats["max"]
    assert stats["count"] == len(values)
    assert lo == min(values) and hi == max(values)
    assert lo <= stats["median"] <= hi
    assert lo <= stats["mean"] <= hi
    assert lo <= stats["ci95"][0] <= stats["ci95"][1] <= hi
    assert stats["sum"] == pytest.approx(stats["mean"] * len(values), rel=1e-9, abs=1e-6)
    assert stats["stdev"] is None or stats["stdev"] >= 0
    assert describe(list(reversed(values))) == stats, "order of rows must not matter"


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=2, max_size=80))
def test_online_stats_agree_with_describe(values: list[float]) -> None:
    online = OnlineStats()
    for value in values:
        online.add(value)
    stats = describe(values)
    assert online.count == stats["count"]
    assert online.mean == pytest.approx(stats["mean"], rel=1e-9, abs=1e-6)
    assert online.stdev == pytest.approx(stats["stdev"], rel=1e-6, abs=1e-6)
    low, high = online.ci95()
    assert low <= online.mean <= high


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), min_size=1, max_size=40))
def test_macro_is_the_mean_of_group_means(rows: list[tuple[str, bool]]) -> None:
    agg = ScoreAggregator(grouped=True)
    for group, score in rows:
        agg.add_row([("k", score)], [], group)
    grouped = agg.by_group()
    assert grouped is not None
    means = {}
    for group in {g for g, _ in rows}:
        scores = [s for g, s in rows if g == group]
        means[group] = sum(scores) / len(scores)
    assert grouped["macro"]["scores"]["k"]["mean"] == pytest.approx(
        sum(means.values()) / len(means)
    )
    assert grouped["micro"]["scores"]["k"]["mean"] == pytest.approx(
        sum(s for _, s in rows) / len(rows)
    )
    total = sum(
        g["number_of_success_samples"] + g["number_of_error_samples"]
        for g in grouped["per_group"].values()
    )
    assert total == len(rows)
