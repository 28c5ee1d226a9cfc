"""What :func:`~openevals.comparison.compare` returns (:class:`Comparison`, per key
:class:`KeyComparison`) and the per-key statistics and verdict it is built from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.comparison import gate, stats

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "ChangedRow",
    "Comparison",
    "KeyComparison",
    "finite_statistics",
    "key_comparison",
    "verdict",
]


@dataclass(frozen=True)
class KeyComparison:
    """One feedback key compared on its paired rows (differences are candidate - baseline)."""

    key: str
    kind: str
    """``"boolean"`` or ``"continuous"``."""
    n: int
    baseline_mean: float | None
    candidate_mean: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    test: str
    statistic: float | None
    p_value: float
    p_adjusted: float
    verdict: str
    detectable: float | None
    """The smallest difference these pairs would detect at ``alpha`` with 80% power."""
    higher_is_better: bool = True
    flips_to_fail: int = 0
    """Boolean keys: rows that passed in the baseline and fail in the candidate."""
    flips_to_pass: int = 0
    excluded: Mapping[str, int] = field(default_factory=dict)
    """Rows left out of the pairs, by reason."""
    corrected: Any = None
    """With ``calibration=``: the judge-corrected difference
    (:class:`~openevals.trust.ppi.PPIEstimate`), on which the verdict is then decided."""

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {
            "excluded": dict(self.excluded),
            "corrected": None if self.corrected is None else self.corrected.as_dict(),
        }


@dataclass(frozen=True)
class ChangedRow:
    """A row whose score changed: a boolean flip or one of the largest continuous changes."""

    id: str
    key: str
    change: str
    """``"pass -> fail"``, ``"fail -> pass"``, or ``"up"`` / ``"down"`` for numbers."""
    baseline_score: float
    candidate_score: float
    group: Any = None
    baseline_outputs: Any = None
    candidate_outputs: Any = None
    baseline_comment: Any = None
    candidate_comment: Any = None


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` returns. Print it for the per-key table; ``to_dict()`` for data;
    ``report_html(path)`` for the HTML report; ``failures(...)`` / ``check(...)`` for a CI gate."""

    baseline: str
    candidate: str
    keys: tuple[KeyComparison, ...]
    rows_baseline: int
    rows_candidate: int
    rows_paired: int
    only_in_baseline: tuple[str, ...]
    """Row ids present in the baseline only (the first 100; ``count_only_in_baseline`` has all)."""
    only_in_candidate: tuple[str, ...]
    count_only_in_baseline: int
    count_only_in_candidate: int
    keys_only_in_baseline: tuple[str, ...]
    keys_only_in_candidate: tuple[str, ...]
    excluded_keys: Mapping[str, str]
    """Keys both runs have that cannot be compared, with the reason."""
    evaluators_only_in_baseline: tuple[str, ...]
    evaluators_only_in_candidate: tuple[str, ...]
    changed: tuple[ChangedRow, ...]
    groups: Mapping[str, tuple[KeyComparison, ...]]
    alpha: float
    min_effect: float
    seed: int
    notes: tuple[str, ...] = ()
    head_to_head: Any = None
    unpaired_same_inputs: int = 0
    """Unpaired baseline rows with the inputs of an unpaired candidate row (the same examples
    with changed content, most likely; see the notes)."""
    """With ``judge=``: the :class:`~openevals.comparison.head_to_head.HeadToHead` figures."""

    def key(self, name: str) -> KeyComparison:
        for item in self.keys:
            if item.key == name:
                return item
        raise KeyError(
            f"no compared key {show(name)}; compared: {show([k.key for k in self.keys])}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "alpha": self.alpha,
            "min_effect": self.min_effect,
            "seed": self.seed,
            "rows": {
                "baseline": self.rows_baseline,
                "candidate": self.rows_candidate,
                "paired": self.rows_paired,
                "only_in_baseline": self.count_only_in_baseline,
                "only_in_candidate": self.count_only_in_candidate,
                "only_in_baseline_ids": list(self.only_in_baseline),
                "only_in_candidate_ids": list(self.only_in_candidate),
                "unpaired_same_inputs": self.unpaired_same_inputs,
            },
            "keys": [k.as_dict() for k in self.keys],
            "keys_only_in_baseline": list(self.keys_only_in_baseline),
            "keys_only_in_candidate": list(self.keys_only_in_candidate),
            "excluded_keys": dict(self.excluded_keys),
            "evaluators_only_in_baseline": list(self.evaluators_only_in_baseline),
            "evaluators_only_in_candidate": list(self.evaluators_only_in_candidate),
            "groups": {g: [k.as_dict() for k in ks] for g, ks in self.groups.items()},
            "changed": [{f: getattr(r, f) for f in r.__dataclass_fields__} for r in self.changed],
            "notes": list(self.notes),
            "head_to_head": None if self.head_to_head is None else self.head_to_head.as_dict(),
        }

    failures = gate.failures
    check = gate.check

    def to_pandas(self) -> Any:
        """The per-key table as a ``pandas.DataFrame`` (needs ``openevals-suite[pandas]``): one
        row per compared key (``group`` ``None``), then one per key and group (with
        ``group_by``); the columns of :meth:`KeyComparison.as_dict` plus ``group``."""
        from openevals.data.sources import require

        pd = require("pandas", "pandas", "Comparison.to_pandas()")
        records = [{"group": None, **item.as_dict()} for item in self.keys]
        for group, items in self.groups.items():
            records += [{"group": group, **item.as_dict()} for item in items]
        columns = ["group", *KeyComparison.__dataclass_fields__]
        return pd.DataFrame.from_records(records, columns=columns)

    def __str__(self) -> str:
        from openevals.comparison.report import text_table

        return text_table(self)

    def _repr_html_(self) -> str:
        from openevals.comparison.report import summary_html

        return summary_html(self)

    def report_html(self, path: Any, *, title: str = "openevals comparison") -> Any:
        """Write the self-contained HTML comparison report to ``path``; return the path."""
        from openevals.comparison.report import write_report

        return write_report(self, path, title=title)


def key_comparison(
    key: str,
    kind: str,
    b: NDArray[np.float64],
    c: NDArray[np.float64],
    *,
    alpha: float,
    min_effect: float,
    seed: int,
    test: str,
    higher: bool,
    resamples: int,
    excluded: Mapping[str, int],
) -> KeyComparison:
    """The comparison of one key on aligned pairs (verdict decided after Holm, by the caller)."""
    n = len(b)
    d = c - b
    # No pairs: no interval, no test, and the verdict is already known.
    low = high = statistic = None
    ci_method, name, p, verdict = "no pairs", "none", 1.0, "underpowered"
    flips_to_fail = flips_to_pass = 0
    if n:
        verdict = ""  # decided after Holm's adjustment, by the caller
        low, high, ci_method = stats.paired_bootstrap_ci(
            d, confidence=1.0 - alpha, resamples=resamples, seed=seed
        )
        if kind == "boolean":
            flips_to_fail = int(((b == 1) & (c == 0)).sum())
            flips_to_pass = int(((b == 0) & (c == 1)).sum())
        if test == "sign" or kind == "boolean":
            ups, downs = int((d > 0).sum()), int((d < 0).sum())
            name = "sign test" if test == "sign" else "exact McNemar"
            p = stats.sign_test(ups, ups + downs)
            statistic = float(min(ups, downs))
        else:
            statistic, p, method = stats.wilcoxon(d)
            name = f"Wilcoxon signed-rank ({method})"
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    means = (float(b.mean()), float(c.mean()), float(d.mean())) if n else (None, None, None)
    return KeyComparison(
        key=key,
        kind=kind,
        n=n,
        baseline_mean=means[0],
        candidate_mean=means[1],
        difference=means[2],
        ci_low=low,
        ci_high=high,
        ci_method=ci_method,
        test=name,
        statistic=statistic,
        p_value=p,
        p_adjusted=p,
        verdict=verdict,
        detectable=stats.detectable_difference(sd, n, alpha=alpha),
        higher_is_better=higher,
        flips_to_fail=flips_to_fail,
        flips_to_pass=flips_to_pass,
        excluded=dict(excluded),
    )


def finite_statistics(item: KeyComparison) -> bool:
    """Whether the means, the difference and its interval are all finite numbers (scores near the
    float range's ends, or infinite ones, make them inf or NaN: no verdict can rest on them)."""
    values = (item.baseline_mean, item.candidate_mean, item.difference, item.ci_low, item.ci_high)
    return all(v is None or math.isfinite(v) for v in values)


def verdict(item: KeyComparison, adjusted: float, alpha: float, min_effect: float) -> str:
    if item.n and not finite_statistics(item):
        return stats.NOT_FINITE
    if item.corrected is not None:
        from openevals.comparison.corrected import corrected_verdict

        return corrected_verdict(item.corrected, adjusted, alpha, min_effect, item.higher_is_better)
    if item.n and adjusted < alpha and item.difference:
        better = (item.difference > 0) == item.higher_is_better
        return "improved" if better else "regressed"
    if item.n < 2 or item.detectable is None or item.detectable > min_effect:
        return "underpowered"
    return "no detectable change"
