"""Prediction-powered inference (PPI): a judge's mean over many rows, corrected by human labels
on a few.

A judge scores ``N`` rows (``judge_all``); on ``n`` of them (a random sample of the same rows or
of the same distribution) a human also gave the true value (``human``, with the judge's score
on those rows in ``judge_labelled``). The judge's mean alone is biased by its error; the human
mean alone is unbiased but wide. PPI combines them:

    corrected = lam * mean(judge_all) + mean(human - lam * judge_labelled)

The second term (the *rectifier*) measures the judge's average error on the labelled rows and
removes it. The interval is the normal one with standard error
``sqrt(var(lam * judge_all) / N + var(human - lam * judge_labelled) / n)``. With ``lam = 1``
this is PPI (Angelopoulos et al., 2023); with ``tuned=True`` (default) ``lam`` is the
variance-minimising value of PPI++ (Angelopoulos, Duchi and Zrnic, 2023), clipped to
``[0, 1]``, so a useless judge (``lam = 0``) falls back to the human-only interval and never
makes it wider. The definitions (population variances for the standard errors, the sample
variance of every judge score for ``lam``) are those of the ``ppi-python`` package's
``ppi_mean_ci`` / ``ppi_mean_pointestimate``; the tests check the figures against it.

Every function works on the last axis, so a simulation passes ``(replications, rows)`` arrays
and gets one estimate per replication in one call. numpy is imported inside the functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from openevals._repr import show

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "PPIEstimate",
    "classical_mean",
    "ppi_arrays",
    "ppi_difference",
    "ppi_mean",
    "z_interval",
]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean with its normal interval.

    ``lam`` is the weight given to the judge (1 = plain PPI, 0 = humans only); ``rectifier`` the
    judge's mean error on the labelled rows (human minus judge), the part removed from the
    judge's mean; ``se`` the standard error; ``p_value`` the two-sided test of a zero mean.
    """

    value: float
    low: float
    high: float
    se: float
    lam: float
    rectifier: float
    n_labelled: int
    n_unlabelled: int
    confidence: float
    method: str

    @property
    def p_value(self) -> float:
        if self.se <= 0:
            return 0.0 if self.value != 0 else 1.0
        return min(1.0, 2.0 * NormalDist().cdf(-abs(self.value) / self.se))

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {
            "p_value": self.p_value
        }

    def __format__(self, spec: str) -> str:
        spec = spec or ".3f"
        return f"{format(self.value, spec)} [{format(self.low, spec)}, {format(self.high, spec)}]"


def z_interval(
    centre: NDArray[np.float64], se: NDArray[np.float64], confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two-sided normal interval ``centre -/+ z * se``."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    return centre - z * se, centre + z * se


def _lam(
    human: NDArray[np.float64], labelled: NDArray[np.float64], unlabelled: NDArray[np.float64]
) -> NDArray[np.float64]:
    """PPI++'s variance-minimising ``lam`` per replication, clipped to [0, 1].

    ``cov(human, judge)`` on the labelled rows (population form) over ``(1 + n/N)`` times the
    sample variance of the judge's scores on every row, labelled and not.
    """
    import numpy as np

    n, big_n = human.shape[-1], unlabelled.shape[-1]
    cov = (
        (human - human.mean(-1, keepdims=True)) * (labelled - labelled.mean(-1, keepdims=True))
    ).mean(-1)
    pooled = np.concatenate([labelled, unlabelled], axis=-1)
    var = pooled.var(-1, ddof=1)
    ratio = np.divide(cov, (1.0 + n / big_n) * var, out=np.zeros_like(cov), where=var > 0)
    return np.asarray(np.clip(ratio, 0.0, 1.0))


def ppi_arrays(
    human: NDArray[np.float64],
    labelled: NDArray[np.float64],
    unlabelled: NDArray[np.float64],
    *,
    confidence: float,
    tuned: bool = True,
) -> dict[str, NDArray[np.float64]]:
    """The PPI estimate on the last axis: ``value``, ``low``, ``high``, ``se``, ``lam`` and
    ``rectifier`` arrays (one entry per replication; 0-d for 1-d input)."""
    import numpy as np

    lam = _lam(human, labelled, unlabelled) if tuned else np.ones(human.shape[:-1])
    lam_e = lam[..., None]
    imputed = lam_e * unlabelled
    residual = human - lam_e * labelled
    value = imputed.mean(-1) + residual.mean(-1)
    se = np.sqrt(imputed.var(-1) / unlabelled.shape[-1] + residual.var(-1) / human.shape[-1])
    low, high = z_interval(value, se, confidence)
    return {
        "value": value,
        "low": low,
        "high": high,
        "se": se,
        "lam": lam,
        "rectifier": (human - labelled).mean(-1),
    }


def classical_mean(
    values: NDArray[np.float64], *, confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(mean, low, high)`` of the normal interval of a mean on the last axis (population
    variance, as PPI's standard errors use): the judge-only figure PPI is compared with."""
    import numpy as np

    centre = values.mean(-1)
    se = np.sqrt(values.var(-1) / values.shape[-1])
    low, high = z_interval(centre, se, confidence)
    return centre, low, high


def _vector(name: str, values: Any, minimum: int) -> NDArray[np.float64]:
    import numpy as np

    if isinstance(values, (str, bytes)):
        raise TypeError(f"`{name}` must be a sequence of numbers; got {show(values)}")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a sequence of numbers; got {show(values)}") from None
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional; got shape {array.shape}")
    if array.size < minimum:
        raise ValueError(f"`{name}` needs at least {minimum} values; got {array.size}")
    if not np.isfinite(array).all():
        raise ValueError(f"`{name}` must hold finite numbers (no NaN or infinity)")
    return array


def check_confidence(confidence: Any) -> float:
    """``confidence`` as a float strictly between 0 and 1 (``ValueError`` naming it otherwise)."""
    if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
        raise ValueError(
            f"`confidence` must be a float strictly between 0 and 1; got {show(confidence)}"
        )
    return confidence


def ppi_mean(
    human: Any,
    judge_labelled: Any,
    judge_all: Any,
    *,
    confidence: float = 0.95,
    tuned: bool = True,
) -> PPIEstimate:
    """The judge-corrected mean of ``judge_all`` with its interval.

    Args:
        human: the true values on the labelled rows (booleans count as 0/1).
        judge_labelled: the judge's scores on the same rows, in the same order.
        judge_all: the judge's scores on every row of the run.
        confidence: the interval's coverage.
        tuned: ``True``: PPI++ (the judge's weight chosen from the data); ``False``: plain PPI.

    Raises:
        TypeError / ValueError: values that are not finite numbers, mismatched lengths, fewer
            than 2 labelled or unlabelled rows, a ``confidence`` outside (0, 1).
    """
    y = _vector("human", human, 2)
    f = _vector("judge_labelled", judge_labelled, 2)
    big = _vector("judge_all", judge_all, 2)
    if len(y) != len(f):
        raise ValueError(
            f"`human` and `judge_labelled` must have one value per labelled row; got {len(y)} "
            f"and {len(f)}"
        )
    confidence = check_confidence(confidence)
    found = ppi_arrays(y, f, big, confidence=confidence, tuned=tuned)
    figures = {name: float(value) for name, value in found.items()}  # its fields, as floats
    method = "PPI++ (power-tuned)" if tuned else "PPI"
    return PPIEstimate(
        **figures, n_labelled=len(y), n_unlabelled=len(big), confidence=confidence, method=method
    )


def ppi_difference(
    baseline: tuple[Any, Any],
    candidate: tuple[Any, Any],
    judge_differences: Any,
    *,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The judge-corrected mean difference (candidate minus baseline) on paired rows, when the
    two sides were labelled on different rows.

    ``baseline`` and ``candidate`` are ``(human, judge)`` on each side's own labelled rows;
    ``judge_differences`` the judge's paired differences on every row. The estimate is
    ``mean(judge_differences) + rectifier(candidate) - rectifier(baseline)`` (plain PPI, one
    rectifier per side) and the standard error adds the three variances (the labelled samples
    are independent of each other). When both sides were labelled on the same rows, use
    :func:`ppi_mean` on the differences instead (the paired form, usually narrower).
    """
    import numpy as np

    confidence = check_confidence(confidence)
    sides = []
    for name, (human, judge) in (("baseline", baseline), ("candidate", candidate)):
        y = _vector(f"{name} human", human, 2)
        f = _vector(f"{name} judge", judge, 2)
        if len(y) != len(f):
            raise ValueError(
                f"the {name} labels and judge scores must have one value per labelled row; got "
                f"{len(y)} and {len(f)}"
            )
        sides.append(y - f)
    d = _vector("judge_differences", judge_differences, 2)
    rb, rc = sides
    value = float(d.mean() + rc.mean() - rb.mean())
    se = math.sqrt(float(d.var() / len(d) + rc.var() / len(rc) + rb.var() / len(rb)))
    low, high = z_interval(np.float64(value), np.float64(se), confidence)
    return PPIEstimate(
        value=value,
        low=float(low),
        high=float(high),
        se=se,
        lam=1.0,
        rectifier=float(rc.mean() - rb.mean()),
        n_labelled=len(rb) + len(rc),
        n_unlabelled=len(d),
        confidence=confidence,
        method="PPI (a rectifier per side)",
    )
