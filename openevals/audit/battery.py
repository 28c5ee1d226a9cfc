"""The audit's tests and their statistics (pure: no runner, no model).

A test shows the judge two forms of the same answer, ``base`` and ``variant``, and measures the
paired effect ``score(variant) - score(base)`` over the sampled rows (booleans as 0/1):

| test | base | variant | a positive effect means |
|---|---|---|---|
| ``length`` | the answer | padded with a paragraph of no content | longer answers score higher |
| ``style`` | formal | casual | casual answers score higher |
| ``format`` | plain | markdown | markdown answers score higher |
| ``family_hint`` | the answer | plus "written by <family>" | the named family is favoured |
| ``anchoring`` | the answer | plus "a reviewer rated it 9/10" | the judge follows the hint |
| ``position`` | pairwise ``[a, b]`` | ``[b, a]`` | see below |

For ``position`` (pairwise judges: rows whose ``outputs`` are two answers) each form's score is
that of the answer shown first, so for a judge without position bias the two add up to 1 on
average (a win in one order is a loss in the other): the effect is ``mean(first_ab + first_ba -
1)``, positive when the first position wins more often than it should.

Each effect gets the paired bootstrap interval of :func:`openevals.comparison.stats.
paired_bootstrap_ci` and the paired test of :mod:`openevals.comparison.stats` (the exact sign
test when the differences are -1/0/1, i.e. McNemar for boolean judges; Wilcoxon signed-rank
otherwise); p-values are Holm-adjusted across the tests. A test is ``"biased"`` when its
adjusted p-value is below ``alpha`` and its effect is at least ``min_effect`` in size,
``"negligible"`` when significant but smaller, else ``"no bias detected"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from openevals.audit import transforms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "TESTS",
    "AuditTest",
    "Probe",
    "effect_of",
    "pointwise_forms",
    "probe_result",
    "verdicts",
]


@dataclass(frozen=True)
class Probe:
    """One test: the two forms' names and what the effect measures."""

    name: str
    base: str
    variant: str
    meaning: str


TESTS: dict[str, Probe] = {
    "length": Probe("length", "original", "padded", "longer answers score higher"),
    "style": Probe("style", "formal", "casual", "casual answers score higher"),
    "format": Probe("format", "plain", "markdown", "markdown answers score higher"),
    "family_hint": Probe(
        "family_hint", "original", "family_hint", "answers said to be by the family score higher"
    ),
    "anchoring": Probe("anchoring", "original", "anchored", "a 9/10 hint raises the score"),
    "position": Probe("position", "ab", "ba", "the answer shown first wins more often"),
}
POINTWISE = ("length", "style", "format", "family_hint", "anchoring")


def pointwise_forms(family: str) -> dict[str, Callable[[str], str]]:
    """Every form a pointwise test shows the judge, by name."""
    return {
        "original": lambda text: text,
        "padded": transforms.pad,
        "formal": transforms.formal,
        "casual": transforms.casual,
        "plain": transforms.plain,
        "markdown": transforms.markdown,
        "family_hint": partial(transforms.family_hint, family=family),
        "anchored": transforms.anchoring,
    }


@dataclass(frozen=True)
class AuditTest:
    """One test's outcome: the effect (variant minus base, see the module docstring) with its
    paired interval, the test's p-value (Holm-adjusted across tests) and the verdict."""

    name: str
    meaning: str
    n: int
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_adjusted: float
    test: str
    verdict: str
    base_mean: float | None = None
    variant_mean: float | None = None
    changed: int = 0
    """Rows whose score changed between the two forms."""

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def effect_of(name: str, base: NDArray[np.float64], variant: NDArray[np.float64]) -> Any:
    """The per-row effects of test ``name`` (see the module docstring)."""
    return base + variant - 1.0 if name == "position" else variant - base


def paired_pvalue(d: NDArray[np.float64]) -> tuple[float, str]:
    """``(two-sided p-value, test name)`` of the paired effects ``d`` being centred on 0."""
    from openevals.comparison import stats

    if set(d.tolist()) <= {-1.0, 0.0, 1.0}:
        ups, downs = int((d > 0).sum()), int((d < 0).sum())
        return stats.sign_test(ups, ups + downs), "exact sign test (McNemar)"
    _, p, method = stats.wilcoxon(d)
    return p, f"Wilcoxon signed-rank ({method})"


def probe_result(
    probe: Probe,
    base: NDArray[np.float64],
    variant: NDArray[np.float64],
    *,
    alpha: float,
    resamples: int,
    seed: int,
) -> AuditTest:
    """The test's figures before Holm's adjustment (``p_adjusted`` = ``p_value``, no verdict)."""
    from openevals.comparison import stats

    d = effect_of(probe.name, base, variant)
    n = len(d)
    if n == 0:
        return AuditTest(probe.name, probe.meaning, 0, None, None, None, 1.0, 1.0, "none", "")
    low, high, _ = stats.paired_bootstrap_ci(
        d, confidence=1.0 - alpha, resamples=resamples, seed=seed
    )
    p, test = paired_pvalue(d)
    return AuditTest(
        name=probe.name,
        meaning=probe.meaning,
        n=n,
        effect=float(d.mean()),
        ci_low=low,
        ci_high=high,
        p_value=p,
        p_adjusted=p,
        test=test,
        verdict="",
        base_mean=float(base.mean()),
        variant_mean=float(variant.mean()),
        changed=int((base != variant).sum()),
    )


def verdicts(items: Sequence[AuditTest], alpha: float, min_effect: float) -> list[AuditTest]:
    """``items`` with Holm-adjusted p-values and their verdicts."""
    from openevals.comparison import stats

    adjusted = stats.holm([t.p_value for t in items])
    return [
        replace(item, p_adjusted=p, verdict=verdict_of(item.effect, p, alpha, min_effect))
        for item, p in zip(items, adjusted, strict=True)
    ]


def verdict_of(effect: float | None, adjusted: float, alpha: float, min_effect: float) -> str:
    """A test's verdict from its effect and Holm-adjusted p-value (see the module docstring)."""
    if effect is None or adjusted >= alpha:
        return "no bias detected"
    return "biased" if abs(effect) >= min_effect else "negligible"
