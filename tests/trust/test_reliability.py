"""Krippendorff's alpha equals the ``krippendorff`` package (dev reference; tolerance 1e-10), its
bootstrap interval is sane, and the effective number of judges behaves at its extremes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openevals.trust.reliability import effective_judges, krippendorff_alpha, panel_agreement

krippendorff = pytest.importorskip("krippendorff")

# The worked example of the krippendorff package's docs (3 coders, 15 units, missing votes).
EXAMPLE = [
    [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
    [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
    [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
]


def _reference(data: Any, level: str) -> float:
    matrix = np.array([[np.nan if v is None else float(v) for v in row] for row in data])
    return float(krippendorff.alpha(matrix, level_of_measurement=level))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_the_documented_example(level: str) -> None:
    found = krippendorff_alpha(EXAMPLE, level=level, resamples=0)  # type: ignore[arg-type]
    assert found.value == pytest.approx(_reference(EXAMPLE, level), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_random_panels_with_missing_votes(seed: int, level: str) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 300)
    data: list[list[Any]] = []
    for _ in range(4):
        votes = np.clip(truth + rng.integers(-1, 2, 300), 1, 5)
        data.append([None if rng.random() < 0.25 else int(v) for v in votes])
    found = krippendorff_alpha(data, level=level, resamples=200, seed=seed)  # type: ignore[arg-type]
    assert found.value == pytest.approx(_reference(data, level), rel=1e-10)
    assert found.low is not None and found.high is not None
    assert found.low < found.value < found.high and found.high - found.low < 0.2


def test_continuous_scores_and_booleans() -> None:
    rng = np.random.default_rng(4)
    truth = rng.random(200)
    # Scores on a 0.02 grid: the reference's cost grows with the square of the distinct values.
    scores = [list(np.round((truth + rng.normal(0, 0.1, 200)) * 50) / 50) for _ in range(3)]
    found = krippendorff_alpha(scores, level="interval", resamples=0)
    assert found.value == pytest.approx(_reference(scores, "interval"), rel=1e-10)
    flags = [[bool(v > 0.5) for v in judge] for judge in scores]
    found = krippendorff_alpha(flags, resamples=0)
    assert found.value == pytest.approx(_reference(flags, "nominal"), rel=1e-10)
    with pytest.raises(ValueError, match="too many"):
        krippendorff_alpha([list(rng.random(300)), list(rng.random(300))], level="nominal")


def test_undefined_and_bad_input() -> None:
    same = krippendorff_alpha([[1, 1, 1], [1, 1, 1]], resamples=10)
    assert same.value is None and "undefined" in (same.note or "")
    with pytest.raises(ValueError, match="at least 2 judges"):
        krippendorff_alpha([[1, 2]])
    with pytest.raises(ValueError, match="one vote per row"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(ValueError, match="booleans or numbers"):
        krippendorff_alpha([["a", "b"], ["a", "b"]])
    with pytest.raises(ValueError, match="`level`"):
        krippendorff_alpha([[1, 2], [1, 2]], level="ratio")  # type: ignore[arg-type]


def test_effective_number_of_judges() -> None:
    rng = np.random.default_rng(8)
    base = list(rng.random(500))
    assert effective_judges([base, base, base]) == (pytest.approx(1.0), pytest.approx(1.0))
    independent = [list(rng.random(500)) for _ in range(4)]
    count, correlation = effective_judges(independent)
    assert count is not None and count > 3.6 and abs(correlation or 0) < 0.1
    assert effective_judges([[1, 1, 1], [0, 1, 0]]) == (None, None)  # a constant judge
    found = panel_agreement([base, base], level="interval", resamples=0)
    assert found.judges == 2 and found.rows == 500 and found.effective_judges == pytest.approx(1)
