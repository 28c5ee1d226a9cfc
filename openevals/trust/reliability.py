"""Agreement among several judges: Krippendorff's alpha with a bootstrap interval, and the
effective number of judges.

Data are a judges x rows matrix (one list per judge), missing votes as ``None`` or NaN.

* :func:`krippendorff_alpha`: ``1 - (n - 1) * sum(o * d) / sum(n_c n_k d)`` over the coincidence
  matrix ``o`` of the values (each row with ``m`` votes adds every ordered pair of its votes with
  weight ``1 / (m - 1)``; rows with one vote add nothing), ``n`` the number of pairable votes and
  ``d`` the squared distance of the level: nominal (0 same, 1 different), ordinal (the ranks
  between two values, Krippendorff's definition) or interval (squared difference). The
  definitions are those of the ``krippendorff`` package's ``alpha``; the tests check them
  against it.
* The interval resamples rows (a row keeps all its votes) with the multiplicities of
  :func:`openevals._stats.bootstrap_weights`: every sum above is a weighted sum over rows, so all
  resamples are one matrix product.
* :func:`effective_judges`: ``k / (1 + (k - 1) * r)`` for ``k`` judges whose scores correlate
  ``r`` on average (pairwise Pearson on the rows both scored, clipped to [0, 1]): how many
  independent judges the panel is worth. Judges that always agree are worth one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from openevals._repr import show
from openevals._stats import Estimate, bootstrap_weights, check_resampling, estimate

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Level", "PanelAgreement", "effective_judges", "krippendorff_alpha", "panel_agreement"]

Level = Literal["nominal", "ordinal", "interval"]
_LEVELS = ("nominal", "ordinal", "interval")
MAX_CATEGORIES = 200
"""Nominal and ordinal data with more distinct values than this are refused (the coincidence
matrix per resample grows with its square); continuous scores are interval data."""


@dataclass(frozen=True)
class PanelAgreement:
    """How much a panel's judges agree: ``alpha`` (Krippendorff, with its bootstrap interval),
    ``effective_judges`` (see :func:`effective_judges`), ``mean_correlation`` between judges,
    the ``judges`` and the ``rows`` with at least two votes."""

    alpha: Estimate
    level: str
    effective_judges: float | None
    mean_correlation: float | None
    judges: int
    rows: int

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "alpha": self.alpha.as_dict()}

    def __str__(self) -> str:
        eff = "n/a" if self.effective_judges is None else f"{self.effective_judges:.2f}"
        return (
            f"Krippendorff's alpha ({self.level}) {self.alpha} over {self.rows} rows; "
            f"{self.judges} judges worth {eff} independent ones"
        )


def _matrix(data: Any) -> NDArray[np.float64]:
    """``data`` as a float judges x rows matrix (NaN = missing); booleans as 0/1."""
    import numpy as np

    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence) or len(data) < 2:
        raise ValueError(
            "`data` must be a list of at least 2 judges' votes (one list per judge, one value "
            f"per row, None for a missing vote); got {show(data)}"
        )
    width = {len(votes) if isinstance(votes, Sequence) else -1 for votes in data}
    if len(width) != 1 or -1 in width:
        raise ValueError(f"every judge needs one vote per row (lists of equal length); got {width}")
    out = np.full((len(data), width.pop()), np.nan)
    for j, votes in enumerate(data):
        for i, vote in enumerate(votes):
            if vote is None or (isinstance(vote, float) and math.isnan(vote)):
                continue
            if isinstance(vote, (bool, int, float)) and math.isfinite(vote):
                out[j, i] = float(vote)
            else:
                raise ValueError(
                    f"judge {j}, row {i}: votes must be booleans or numbers; got {show(vote)}"
                )
    return out


def _interval_sums(x: NDArray[np.float64]) -> tuple[Any, ...]:
    """Per row: pairable votes ``m``, observed disagreement ``D``, sum and sum of squares."""
    import numpy as np

    present = ~np.isnan(x)
    m = present.sum(0).astype(np.float64)
    v = np.where(present, x, 0.0)
    s1, s2 = v.sum(0), (v * v).sum(0)
    keep = m >= 2
    m, s1, s2 = m[keep], s1[keep], s2[keep]
    disagreement = (2 * m * s2 - 2 * s1 * s1) / (m - 1)
    return m, disagreement, s1, s2


def _alpha_interval(x: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    import numpy as np

    m, disagreement, s1, s2 = _interval_sums(x)
    if not len(m):
        return np.full(len(weights), np.nan)
    w = weights[:, : len(m)]
    n, big_s1, big_s2 = w @ m, w @ s1, w @ s2
    expected = 2 * n * big_s2 - 2 * big_s1 * big_s1
    observed = w @ disagreement
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (n - 1) * observed / expected
    return np.asarray(np.where(expected > 1e-12 * np.maximum(1.0, n * big_s2), out, np.nan))


def _alpha_categories(
    x: NDArray[np.float64], weights: NDArray[np.float64], level: str
) -> NDArray[np.float64]:
    import numpy as np

    present = ~np.isnan(x)
    values = np.unique(x[present])
    k = len(values)
    if k > MAX_CATEGORIES:
        raise ValueError(
            f"{k} distinct values is too many for {level} data (at most {MAX_CATEGORIES}); "
            "use level='interval' for continuous scores"
        )
    codes = np.searchsorted(values, np.where(present, x, values[0] if k else 0.0))
    counts = np.zeros((x.shape[1], max(k, 1)))
    for j in range(x.shape[0]):
        np.add.at(counts, (np.flatnonzero(present[j]), codes[j][present[j]]), 1.0)
    m = counts.sum(1)
    keep = m >= 2
    if not keep.any():
        return np.full(len(weights), np.nan)
    counts, m = counts[keep], m[keep]
    k = counts.shape[1]
    per_row = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (m - 1)[
        :, None, None
    ]
    coincidences = (weights[:, : len(m)] @ per_row.reshape(len(m), k * k)).reshape(-1, k, k)
    n_c = coincidences.sum(2)
    n = n_c.sum(1)
    if level == "nominal":
        distance = np.broadcast_to(1.0 - np.eye(k), coincidences.shape)
    else:  # ordinal: (sum of n_g for g between c and k) - (n_c + n_k) / 2, squared
        cum = np.cumsum(n_c, axis=1)
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
        distance = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2.0) ** 2
        distance = distance * (1.0 - np.eye(k))
    observed = (coincidences * distance).sum((1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * distance).sum((1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (n - 1) * observed / expected
    return np.asarray(np.where(expected > 0, out, np.nan))


def krippendorff_alpha(
    data: Sequence[Sequence[Any]],
    *,
    level: Level = "nominal",
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Krippendorff's alpha of ``data`` (judges x rows) with a bootstrap percentile interval.

    Args:
        data: one list of votes per judge, one vote per row (``None``/NaN for a missing vote);
            booleans count as 0/1.
        level: ``"nominal"`` (booleans, unordered choices), ``"ordinal"`` (ordered choices) or
            ``"interval"`` (numbers).
        resamples, seed, confidence: the bootstrap over rows (``resamples=0``: no interval).

    Raises:
        ValueError: fewer than 2 judges, judges of unequal length, votes that are not numbers,
            an unknown level, too many categories for a nominal/ordinal level.
    """
    _check_alpha_options(level, resamples, confidence)
    return _alpha_of(_matrix(data), level, resamples, seed, confidence)


def _check_alpha_options(level: Any, resamples: int, confidence: float) -> None:
    if level not in _LEVELS:
        raise ValueError(f"`level` must be one of {_LEVELS}; got {show(level)}")
    check_resampling(resamples, confidence)


def _rated_rows(x: NDArray[np.float64]) -> int:
    """How many rows (columns of ``x``) have at least 2 votes."""
    import numpy as np

    return int(((~np.isnan(x)).sum(0) >= 2).sum())


def _alpha_of(
    x: NDArray[np.float64], level: Level, resamples: int, seed: int, confidence: float
) -> Estimate:
    """:func:`krippendorff_alpha` of the checked judges x rows matrix ``x``."""
    weights = bootstrap_weights(max(_rated_rows(x), 1), resamples, seed)
    values = (
        _alpha_interval(x, weights) if level == "interval" else _alpha_categories(x, weights, level)
    )
    return estimate(
        values,
        confidence,
        "alpha is undefined: fewer than 2 votes on every row, or every vote is the same",
    )


def effective_judges(data: Sequence[Sequence[Any]]) -> tuple[float | None, float | None]:
    """``(effective number of judges, mean pairwise correlation)`` of ``data`` (judges x rows).

    Pearson correlation of each pair of judges on the rows both scored (pairs with fewer than 3
    such rows or a constant judge are left out), averaged and clipped to [0, 1]; ``(None,
    None)`` when no pair has a correlation.
    """
    return _effective_of(_matrix(data))


def _effective_of(x: NDArray[np.float64]) -> tuple[float | None, float | None]:
    """:func:`effective_judges` of the judges x rows matrix ``x``."""
    import numpy as np

    k = x.shape[0]
    found = []
    for a in range(k):
        for b in range(a + 1, k):
            both = ~np.isnan(x[a]) & ~np.isnan(x[b])
            if both.sum() < 3:
                continue
            u, v = x[a][both], x[b][both]
            if u.std() == 0 or v.std() == 0:
                continue
            found.append(float(np.corrcoef(u, v)[0, 1]))
    if not found:
        return None, None
    mean = sum(found) / len(found)
    clipped = min(1.0, max(0.0, mean))
    return k / (1.0 + (k - 1) * clipped), mean


def panel_agreement(
    data: Sequence[Sequence[Any]],
    *,
    level: Level = "nominal",
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelAgreement:
    """Krippendorff's alpha and the effective number of judges of ``data`` (judges x rows)."""
    _check_alpha_options(level, resamples, confidence)
    x = _matrix(data)  # once, for both figures
    effective, correlation = _effective_of(x)
    return PanelAgreement(
        alpha=_alpha_of(x, level, resamples, seed, confidence),
        level=level,
        effective_judges=effective,
        mean_correlation=correlation,
        judges=x.shape[0],
        rows=_rated_rows(x),
    )
