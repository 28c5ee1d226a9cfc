"""Agreement between a judge and human labels, each figure with a bootstrap confidence interval.

Two families of figures, matched to the label type:

* :func:`categorical_agreement` for boolean and categorical (``choices``) labels: accuracy,
  Cohen's kappa, weighted kappa for ordered choices, the confusion matrix and, for booleans,
  precision and recall of the "fail" class;
* :func:`continuous_agreement` for continuous scores: Pearson, Spearman and Kendall (tau-b)
  correlation, mean absolute error and bias (mean signed error, judge minus human).

Every figure is computed once on the data and once per bootstrap resample, in one vectorised
pass: a resample is a row of multiplicities ``w`` (how often each labelled row was drawn), so a
count becomes ``w @ indicator``, a mean ``w @ values / n``, and pairwise statistics (Kendall's
tau, average ranks) become ``w @ M @ w`` for an ``n x n`` matrix ``M`` built once. The point
estimate is the same computation with ``w = 1``, so point and interval never disagree on a
definition. Intervals are percentile intervals; resamples on which a figure is undefined (a
constant resample for a correlation, a single class for kappa) are left out, and the estimate
says how many were.

The definitions follow scikit-learn (``cohen_kappa_score``, ``confusion_matrix``) and scipy
(``pearsonr``, ``spearmanr``, ``kendalltau`` with its default tau-b); the tests check them against
both. numpy is imported when a function is called, never at package import.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from openevals._repr import show
from openevals._stats import Estimate, average_ranks, bootstrap_weights, check_resampling, estimate

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "CategoricalAgreement",
    "ContinuousAgreement",
    "Estimate",
    "categorical_agreement",
    "continuous_agreement",
]

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
MAX_PAIRWISE_ROWS = 5000
"""Above this many rows, Spearman and Kendall are computed without a bootstrap interval (their
resampling needs ``n x n`` matrices); every other figure keeps its interval."""
MAX_KENDALL_ROWS = 50_000
"""Above this many rows Kendall's tau is not computed (its exact point estimate is quadratic)."""
_BLOCK = 128  # bootstrap rows per block for the pairwise products (bounds memory)

Weighting = Literal["linear", "quadratic"]


@dataclass(frozen=True)
class CategoricalAgreement:
    """Agreement on boolean or categorical labels (rows of ``confusion`` are human labels)."""

    n: int
    labels: tuple[Hashable, ...]
    accuracy: Estimate
    kappa: Estimate
    weighted_kappa: Estimate | None
    confusion: tuple[tuple[int, ...], ...]
    fail_precision: Estimate | None = None
    fail_recall: Estimate | None = None
    confidence: float = 0.95
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class ContinuousAgreement:
    """Agreement on continuous scores."""

    n: int
    pearson: Estimate
    spearman: Estimate
    kendall: Estimate
    mae: Estimate
    bias: Estimate
    confidence: float = 0.95
    notes: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------------- checks


def _check_common(
    human: Sequence[Any], judge: Sequence[Any], resamples: int, confidence: float
) -> int:
    for name, value in (("human", human), ("judge", judge)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(f"`{name}` must be a sequence of labels; got {type(value).__name__}")
    if len(human) != len(judge):
        raise ValueError(
            f"`human` and `judge` must have one label per row; got {len(human)} and {len(judge)}"
        )
    if len(human) < 2:
        raise ValueError(f"agreement needs at least 2 labelled rows; got {len(human)}")
    check_resampling(resamples, confidence)
    return len(human)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    import numpy as np

    out = np.full(num.shape, np.nan)
    ok = den > 0
    np.divide(num, den, out=out, where=ok)
    return out


# --------------------------------------------------------------------------- categorical


def _kappa(counts: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cohen's kappa per resample from ``counts`` (resamples x K x K) and disagreement weights."""
    import numpy as np

    total = counts.sum(axis=(1, 2))
    rows = counts.sum(axis=2)
    cols = counts.sum(axis=1)
    expected = rows[:, :, None] * cols[:, None, :] / total[:, None, None]
    observed_d = (counts * weights).sum(axis=(1, 2))
    expected_d = (expected * weights).sum(axis=(1, 2))
    single = (rows > 0).sum(axis=1) < 2  # one human class in the resample: kappa undefined
    out = np.where(
        expected_d > 0, 1.0 - observed_d / np.where(expected_d > 0, expected_d, 1), np.nan
    )
    return np.where(single, np.nan, out)


def categorical_agreement(
    human: Sequence[Hashable],
    judge: Sequence[Hashable],
    *,
    labels: Sequence[Hashable] | None = None,
    ordered: bool = False,
    weighting: Weighting = "quadratic",
    fail_label: Hashable | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> CategoricalAgreement:
    """Accuracy, Cohen's kappa, the confusion matrix and more, for categorical labels.

    Args:
        human, judge: one label per row (booleans or choices).
        labels: every possible label, in order (default: the labels seen, sorted when they can
            be). The confusion matrix's rows (human) and columns (judge) follow this order.
        ordered: the labels are ordered (numeric ``choices``): also report weighted kappa.
        weighting: ``"quadratic"`` or ``"linear"`` disagreement weights for weighted kappa.
        fail_label: the label that means "fail" (``False`` for booleans): report precision and
            recall of that class.
        resamples, seed, confidence: the bootstrap (``resamples=0`` computes no intervals).
    """
    import numpy as np

    n = _check_common(human, judge, resamples, confidence)
    if weighting not in ("linear", "quadratic"):
        raise ValueError(f"`weighting` must be 'linear' or 'quadratic'; got {show(weighting)}")
    order = _label_order(human, judge, labels)
    index = {label: i for i, label in enumerate(order)}
    k = len(order)
    h = np.array([index[label] for label in human])
    j = np.array([index[label] for label in judge])

    weights = bootstrap_weights(n, resamples, seed)
    pair = np.zeros((n, k * k))
    pair[np.arange(n), h * k + j] = 1.0
    counts = (weights @ pair).reshape(-1, k, k)
    total = counts.sum(axis=(1, 2))

    notes: list[str] = []
    accuracy = estimate(np.trace(counts, axis1=1, axis2=2) / total, confidence, "")
    if len(set(h.tolist())) < 2:
        note = (
            "kappa is undefined: the human labels hold one class only, so chance agreement "
            "cannot be separated from skill; accuracy is reported alone"
        )
        notes.append(note)
        kappa = Estimate(None, note=note)
        weighted = kappa if ordered else None
    else:
        nominal = 1.0 - np.eye(k)
        kappa = estimate(_kappa(counts, nominal), confidence, "kappa is undefined on these labels")
        weighted = None
        if ordered:
            grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
            grid = grid**2 if weighting == "quadratic" else grid
            weighted = estimate(
                _kappa(counts, grid), confidence, "weighted kappa is undefined on these labels"
            )

    precision = recall = None
    if fail_label is not None:
        if fail_label not in index:
            raise ValueError(
                f"`fail_label` {show(fail_label)} is not one of the labels {show(order)}"
            )
        f = index[fail_label]
        hit = counts[:, f, f]
        precision = estimate(
            _ratio(hit, counts[:, :, f].sum(axis=1)),
            confidence,
            f"precision of {show(fail_label)} is undefined: the judge never gave it",
        )
        recall = estimate(
            _ratio(hit, counts[:, f, :].sum(axis=1)),
            confidence,
            f"recall of {show(fail_label)} is undefined: the human labels never give it",
        )
    confusion = tuple(tuple(int(c) for c in row) for row in counts[0].round().astype(int))
    return CategoricalAgreement(
        n=n,
        labels=tuple(order),
        accuracy=accuracy,
        kappa=kappa,
        weighted_kappa=weighted,
        confusion=confusion,
        fail_precision=precision,
        fail_recall=recall,
        confidence=confidence,
        notes=tuple(notes),
    )


def sorted_labels(values: Sequence[Any]) -> list[Any]:
    """The distinct values, sorted when they can be (else in order of appearance)."""
    unique = list(dict.fromkeys(values))
    try:
        return sorted(unique)
    except TypeError:
        return unique


def _label_order(
    human: Sequence[Hashable], judge: Sequence[Hashable], labels: Sequence[Hashable] | None
) -> list[Hashable]:
    seen = list(dict.fromkeys([*human, *judge]))
    if labels is None:
        return sorted_labels(seen)
    order = list(dict.fromkeys(labels))
    missing = [label for label in seen if label not in order]
    if missing:
        raise ValueError(
            f"labels {show(missing)} occur in the data but not in `labels` {show(order)}; add "
            "them, or fix the data"
        )
    return order


# --------------------------------------------------------------------------- continuous


def _floats(name: str, values: Sequence[Any]) -> NDArray[np.float64]:
    import numpy as np

    out = np.empty(len(values))
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"`{name}` must hold numbers for continuous agreement; row {i} is "
                f"{type(value).__name__} ({show(value)})"
            )
        if not math.isfinite(value):
            raise ValueError(f"`{name}` must hold finite numbers; row {i} is {show(value)}")
        out[i] = value
    return out


def _weighted_pearson(
    w: NDArray[np.float64], x: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Pearson correlation per resample; ``x``/``y`` are per-row values (n,) or (B, n)."""
    import numpy as np

    total = w.sum(axis=1, keepdims=True)
    mx = (w * x).sum(axis=1, keepdims=True) / total
    my = (w * y).sum(axis=1, keepdims=True) / total
    dx, dy = x - mx, y - my
    cov = (w * dx * dy).sum(axis=1)
    vx = (w * dx * dx).sum(axis=1)
    vy = (w * dy * dy).sum(axis=1)
    den = np.sqrt(vx * vy)
    # Constant resamples (variance zero up to rounding) have no correlation.
    tiny = (
        1e-12
        * np.maximum(1.0, (w * (x * x)).sum(axis=1))
        * np.maximum(1.0, (w * (y * y)).sum(axis=1))
    )
    return np.where(vx * vy > tiny, cov / np.where(den > 0, den, 1.0), np.nan)


def _blocks(weights: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    return [weights[i : i + _BLOCK] for i in range(0, len(weights), _BLOCK)]


def _spearman(
    weights: NDArray[np.float64], x: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Spearman's rho per resample: Pearson of average ranks within each resample."""
    import numpy as np

    def below(v: NDArray[np.float64]) -> NDArray[np.float32]:
        # rank of row i in a resample w = (L @ w)[i] + 0.5, with L[i, j] = 1 if v[j] < v[i],
        # 0.5 if v[j] == v[i] (i itself included): the average rank among ties.
        matrix: NDArray[np.float32] = (
            np.less.outer(v, v) * 0.5 + np.less_equal.outer(v, v) * 0.5
        ).T.astype(np.float32)
        return matrix

    lx, ly = below(x), below(y)
    out = []
    for w in _blocks(weights):
        w32 = w.astype(np.float32)
        rx = (w32 @ lx.T).astype(np.float64) + 0.5
        ry = (w32 @ ly.T).astype(np.float64) + 0.5
        out.append(_weighted_pearson(w, rx, ry))
    return np.concatenate(out)


def _kendall(
    weights: NDArray[np.float64], x: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Kendall's tau-b per resample, from pair matrices built once.

    Over the pairs of a resample with multiplicities ``w``: concordant minus discordant pairs is
    ``w S w / 2`` with ``S = sign(dx) * sign(dy)``; pairs tied on x are ``(w Tx w - sum w) / 2``
    with ``Tx = [x_i == x_j]`` (copies of one row are tied with each other).
    """
    import numpy as np

    sx, sy = np.sign(np.subtract.outer(x, x)), np.sign(np.subtract.outer(y, y))
    s = (sx * sy).astype(np.float32)
    tx = (sx == 0).astype(np.float32)
    ty = (sy == 0).astype(np.float32)
    out = []
    for w in _blocks(weights):
        w32 = w.astype(np.float32)
        total = w.sum(axis=1)
        pairs = total * (total - 1) / 2

        def quad(m: NDArray[np.float32], w: NDArray[np.float64] = w, w32: Any = w32) -> Any:
            return ((w32 @ m).astype(np.float64) * w).sum(axis=1)

        concordance = quad(s) / 2
        tied_x = (quad(tx) - total) / 2
        tied_y = (quad(ty) - total) / 2
        den = np.sqrt(np.maximum(pairs - tied_x, 0) * np.maximum(pairs - tied_y, 0))
        out.append(np.where(den > 0, concordance / np.where(den > 0, den, 1.0), np.nan))
    return np.concatenate(out)


def _kendall_point(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    """Kendall's tau-b on the data alone, in row blocks (no ``n x n`` matrix is kept)."""
    import numpy as np

    n = len(x)
    concordance = tied_x = tied_y = 0.0
    for a in range(0, n, 1024):
        dx = np.sign(x[a : a + 1024, None] - x[None, :])
        dy = np.sign(y[a : a + 1024, None] - y[None, :])
        concordance += float((dx * dy).sum())
        tied_x += float((dx == 0).sum())
        tied_y += float((dy == 0).sum())
    pairs = n * (n - 1) / 2
    # Every pair is counted twice over the full matrix, and each row is tied with itself.
    den = math.sqrt((pairs - (tied_x - n) / 2) * (pairs - (tied_y - n) / 2))
    return concordance / 2 / den if den > 0 else math.nan


def continuous_agreement(
    human: Sequence[float],
    judge: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> ContinuousAgreement:
    """Pearson, Spearman and Kendall correlation, MAE and bias (judge minus human)."""
    import numpy as np

    n = _check_common(human, judge, resamples, confidence)
    x, y = _floats("human", human), _floats("judge", judge)
    weights = bootstrap_weights(n, resamples, seed)
    total = weights.sum(axis=1)
    diff = y - x
    notes: list[str] = []
    constant = "undefined: the human labels or the judge scores are constant"
    if n <= MAX_PAIRWISE_ROWS:
        spearman = estimate(_spearman(weights, x, y), confidence, constant)
        kendall = estimate(_kendall(weights, x, y), confidence, constant)
    else:
        notes.append(
            f"{n} rows: Spearman and Kendall are given without intervals above "
            f"{MAX_PAIRWISE_ROWS} rows"
        )
        ones = weights[:1]
        spearman = estimate(
            _weighted_pearson(ones, average_ranks(x)[0], average_ranks(y)[0]), confidence, constant
        )
        kendall = (
            estimate(np.array([_kendall_point(x, y)]), confidence, constant)
            if n <= MAX_KENDALL_ROWS
            else Estimate(None, note=f"Kendall's tau is not computed above {MAX_KENDALL_ROWS} rows")
        )
    return ContinuousAgreement(
        n=n,
        pearson=estimate(_weighted_pearson(weights, x, y), confidence, constant),
        spearman=spearman,
        kendall=kendall,
        mae=estimate(weights @ np.abs(diff) / total, confidence, ""),
        bias=estimate(weights @ diff / total, confidence, ""),
        confidence=confidence,
        notes=tuple(notes),
    )


_CATEGORICAL_NAMES = (
    ("accuracy", "accuracy"),
    ("kappa", "Cohen's kappa"),
    ("weighted_kappa", "weighted kappa (quadratic)"),
    ("fail_precision", "fail precision"),
    ("fail_recall", "fail recall"),
)
_CONTINUOUS_NAMES = (
    ("pearson", "Pearson r"),
    ("spearman", "Spearman rho"),
    ("kendall", "Kendall tau-b"),
    ("mae", "MAE"),
    ("bias", "bias (judge - human)"),
)


def figures_of(agreement: CategoricalAgreement | ContinuousAgreement) -> list[tuple[str, Any]]:
    """``(attribute, Estimate)`` of every figure reported for ``agreement`` (in display order)."""
    names = _CATEGORICAL_NAMES if isinstance(agreement, CategoricalAgreement) else _CONTINUOUS_NAMES
    figures = [(attr, getattr(agreement, attr)) for attr, _ in names]
    return [(attr, value) for attr, value in figures if value is not None]


def figure_label(attr: str) -> str:
    return dict(_CATEGORICAL_NAMES + _CONTINUOUS_NAMES).get(attr, attr)
