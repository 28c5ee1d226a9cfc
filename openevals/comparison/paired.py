"""``compare(baseline, candidate)``: did the candidate run get better, key by key, on paired rows?

Rows are paired by row id. For each feedback key both runs scored: the mean difference with a
paired bootstrap interval, the paired test that fits the score type (exact McNemar for booleans,
Wilcoxon signed-rank for numbers, or the sign test on request), Holm-adjusted p-values across keys,
and a verdict. Rows and keys present in one run only, NaN scores and rows whose evaluator failed on
one side are counted, listed and excluded from the pairs, never dropped silently. See
:mod:`openevals.comparison.stats` for the tests' exact definitions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.comparison import stats
from openevals.comparison._runs import read_run, skipped_notes
from openevals.comparison._unpaired import refuse_parquet
from openevals.evaluation.plans import async_plan_entry, run_plan

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from openevals.evaluation.plans import Plan

__all__ = ["ChangedRow", "Comparison", "KeyComparison", "acompare", "compare"]

TESTS = ("auto", "sign")


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
            "changed": [_row(r) for r in self.changed],
            "notes": list(self.notes),
            "head_to_head": None if self.head_to_head is None else self.head_to_head.as_dict(),
        }

    def failures(
        self,
        *,
        fail_on_regression: bool = True,
        max_drop: Mapping[str, float] | None = None,
        allow_unpaired: float = 0.0,
    ) -> list[str]:
        """Why the candidate should not ship: significant regressions and drops beyond
        ``max_drop`` (key -> largest allowed fall of its mean); empty when no gate trips.
        ``UnpairedRowsError`` when more than ``allow_unpaired`` of the rows are unpaired."""
        from openevals.comparison.gate import failures

        return failures(
            self,
            fail_on_regression=fail_on_regression,
            max_drop=max_drop,
            allow_unpaired=allow_unpaired,
        )

    def check(
        self,
        *,
        fail_on_regression: bool = True,
        max_drop: Mapping[str, float] | None = None,
        allow_unpaired: float = 0.0,
    ) -> None:
        """Raise ``AssertionError`` with the per-key table when a gate trips (for pytest)."""
        from openevals.comparison.gate import check

        check(
            self,
            fail_on_regression=fail_on_regression,
            max_drop=max_drop,
            allow_unpaired=allow_unpaired,
        )

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


def _row(row: ChangedRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__dataclass_fields__}


def _number(value: Any, name: str, accepted: str) -> float:
    """``value`` as a finite float; ``TypeError`` naming ``name`` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"`{name}` must be {accepted}; got {type(value).__name__} {show(value)}")
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be {accepted}; got {show(value)}")
    return float(value)


def _whole(value: Any, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; ``TypeError`` / ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"`{name}` must be a whole number >= {minimum}; got {type(value).__name__} "
            f"{show(value)}"
        )
    if value < minimum:
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {show(value)}")
    return int(value)


def _check_group_by(group_by: Any) -> None:
    if group_by is None:
        return
    if not isinstance(group_by, str):
        raise TypeError(
            "`group_by` must be one row field name as a str (a dotted path such as "
            f"'extra.topic' for a nested field), or None; got {type(group_by).__name__} "
            f"{show(group_by)}"
        )
    if not group_by or any(not part for part in group_by.split(".")):
        raise ValueError(
            f"`group_by` must name a row field (e.g. 'topic' or 'extra.topic'); got {show(group_by)}"
        )


def _check_options(
    *,
    alpha: Any,
    min_effect: Any,
    seed: Any,
    test: Any,
    resamples: Any,
    max_rows: Any,
    group_by: Any,
) -> None:
    """``TypeError`` for an option of the wrong type, ``ValueError`` for one out of range; both
    name the option."""
    if not 0.0 < _number(alpha, "alpha", "a float strictly between 0 and 1") < 1.0:
        raise ValueError(f"`alpha` must be a float strictly between 0 and 1; got {show(alpha)}")
    if _number(min_effect, "min_effect", "a finite number >= 0") < 0:
        raise ValueError(f"`min_effect` must be a finite number >= 0; got {show(min_effect)}")
    _whole(seed, "seed", 0)
    if not isinstance(test, str):
        raise TypeError(f"`test` must be one of {TESTS}; got {type(test).__name__} {show(test)}")
    if test not in TESTS:
        raise ValueError(f"`test` must be one of {TESTS}; got {show(test)}")
    _whole(resamples, "resamples", 100)
    _whole(max_rows, "max_rows", 0)
    _check_group_by(group_by)


def _key_names(value: Any, name: str) -> list[str]:
    """``keys`` / ``lower_is_better`` as a list of feedback keys (each a str)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"`{name}` must be a list of feedback keys; got {show(value)}")
    listed = list(value)
    for index, key in enumerate(listed):
        if not isinstance(key, str):
            raise TypeError(
                f"`{name}` must be a list of feedback keys (str); item {index} is "
                f"{type(key).__name__} {show(key)}"
            )
    return listed


def compare(
    baseline: Any,
    candidate: Any,
    *,
    keys: Sequence[str] | None = None,
    group_by: str | None = None,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    seed: int = 0,
    test: str = "auto",
    lower_is_better: Sequence[str] = (),
    resamples: int = 2000,
    max_rows: int = 50,
    judge: Any = None,
    judge_options: Mapping[str, Any] | None = None,
    calibration: Mapping[str, Any] | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` on the rows both scored (paired by row id).

    Args:
        baseline, candidate: an :class:`~openevals.evaluation.EvaluationResult`, or the path of a
            run's ``output=`` JSONL file (read as a stream: only the per-key scores are kept).
        keys: the feedback keys to compare (default: every key both runs have).
        group_by: a row field (dotted path, e.g. ``"extra.topic"`` or a column name) to compare
            within each group too.
        alpha: the significance level, after Holm's adjustment across keys.
        min_effect: the smallest difference of interest: a key with no significant change whose
            pairs could not detect a difference this large (at ``alpha``, 80% power) is
            ``"underpowered"`` rather than ``"no detectable change"``.
        seed: for the bootstrap intervals.
        test: ``"auto"`` (exact McNemar for boolean keys, Wilcoxon signed-rank for numbers) or
            ``"sign"`` (the exact sign test for every key).
        lower_is_better: keys where a smaller score is the better one (distances, costs).
        resamples: bootstrap resamples.
        max_rows: how many flipped / most-changed rows per key to show with their outputs.
        judge: a pairwise judge (``create_pairwise_llm_as_judge``): also judge the two runs'
            outputs head to head on every paired row, in both orders, through the batch runner
            (``comparison.head_to_head``: the candidate's win rate with its interval and the
            order-flip rate). ``judge_options``: ``concurrency``, ``cache``, ``output``,
            ``progress``, ``retry_errors``, ``engine`` (a ``LocalEngine`` / ``RayEngine``) and
            ``budget`` (a ``Budget``) for that run, as for :func:`~openevals.evaluation.evaluate`.
        calibration: ``{"baseline": ..., "candidate": ...}``, human labels with the judge's
            scores on each run's outputs (a :func:`~openevals.calibration.calibrate` report or
            its ``--json`` file): the calibrated key also gets the judge-corrected difference
            (prediction-powered inference, :mod:`openevals.comparison.corrected`) and its
            verdict, and so the gate, is decided on that interval.

    Raises:
        ValueError / TypeError: bad options; a file that is not a run's output; runs with no
            scored rows; runs that share no row id; ``keys`` naming a key neither run has.
        FileNotFoundError: a run file that does not exist.
    """
    plan = _flow(
        baseline,
        candidate,
        keys=keys,
        group_by=group_by,
        alpha=alpha,
        min_effect=min_effect,
        seed=seed,
        test=test,
        lower_is_better=lower_is_better,
        resamples=resamples,
        max_rows=max_rows,
        judge=judge,
        judge_options=judge_options,
        calibration=calibration,
    )
    return run_plan(plan)


_JUDGE_OPTIONS = ("concurrency", "cache", "output", "progress", "retry_errors", "engine", "budget")


def _flow(
    baseline: Any,
    candidate: Any,
    *,
    keys: Sequence[str] | None,
    group_by: str | None,
    alpha: float,
    min_effect: float,
    seed: int,
    test: str,
    lower_is_better: Sequence[str],
    resamples: int,
    max_rows: int,
    judge: Any,
    judge_options: Mapping[str, Any] | None,
    calibration: Mapping[str, Any] | None,
) -> Plan[Comparison]:
    """The comparison as a plan: it yields one :class:`~openevals.evaluation.plans.BatchRun`
    when ``judge`` is given."""
    from openevals.comparison._pairs import build
    from openevals.comparison.corrected import pair_calibration
    from openevals.comparison.head_to_head import judge_rows, summarize
    from openevals.evaluation.plans import BatchRun

    _check_options(
        alpha=alpha,
        min_effect=min_effect,
        seed=seed,
        test=test,
        resamples=resamples,
        max_rows=max_rows,
        group_by=group_by,
    )
    if isinstance(keys, str):
        raise TypeError(f"`keys` must be a list of feedback keys; got the string {show(keys)}")
    if isinstance(lower_is_better, str):
        raise TypeError(f"`lower_is_better` must be a list of keys; got {show(lower_is_better)}")
    if keys is not None:
        keys = _key_names(keys, "keys")
    lower_is_better = _key_names(lower_is_better, "lower_is_better")
    if judge_options is not None and not isinstance(judge_options, Mapping):
        raise TypeError(
            f"`judge_options` must be a dict of options for the judge's run; got "
            f"{type(judge_options).__name__} {show(judge_options)}"
        )
    options = dict(judge_options or {})
    unknown = [name for name in options if name not in _JUDGE_OPTIONS]
    if unknown:
        raise ValueError(f"`judge_options` takes {list(_JUDGE_OPTIONS)}; got {show(unknown)}")
    if judge is not None and not callable(judge):
        raise TypeError(
            f"`judge` must be a pairwise judge (create_pairwise_llm_as_judge); got {show(judge)}"
        )
    refuse_parquet(baseline, "baseline")
    refuse_parquet(candidate, "candidate")
    calibrated = pair_calibration(calibration)
    base = read_run(baseline, "baseline", group_by)
    cand = read_run(candidate, "candidate", group_by)
    for run in (base, cand):
        if not run.ids:
            raise ValueError(f"the {run.label} run is empty: it has no rows to compare")
    comparison = build(
        base,
        cand,
        keys=keys,
        group_by=group_by,
        alpha=float(alpha),
        min_effect=float(min_effect),
        seed=seed,
        test=test,
        lower=set(lower_is_better),
        resamples=resamples,
        max_rows=max_rows,
        judged=judge is not None,
        calibration=calibrated,
    )
    corrupt = skipped_notes(base) + skipped_notes(cand)
    if corrupt:
        comparison = replace(comparison, notes=(*corrupt, *comparison.notes))
    if judge is None:
        return comparison
    shared = [i for i in base.ids if i in cand.ids]
    options.setdefault("progress", False)
    result = yield BatchRun(
        judge_rows(base, cand, shared), [judge], {**options, "systems": ["candidate", "baseline"]}
    )
    return replace(comparison, head_to_head=summarize(result))


acompare = async_plan_entry(
    compare,
    _flow,
    doc="Async twin of :func:`compare`: head-to-head judging runs through ``aevaluate``.",
)


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
    if n == 0:
        return KeyComparison(
            key=key,
            kind=kind,
            n=0,
            baseline_mean=None,
            candidate_mean=None,
            difference=None,
            ci_low=None,
            ci_high=None,
            ci_method="no pairs",
            test="none",
            statistic=None,
            p_value=1.0,
            p_adjusted=1.0,
            verdict="underpowered",
            detectable=None,
            higher_is_better=higher,
            excluded=dict(excluded),
        )
    low, high, ci_method = stats.paired_bootstrap_ci(
        d, confidence=1.0 - alpha, resamples=resamples, seed=seed
    )
    flips_to_fail = flips_to_pass = 0
    if kind == "boolean":
        flips_to_fail = int(((b == 1) & (c == 0)).sum())
        flips_to_pass = int(((b == 0) & (c == 1)).sum())
    if test == "sign" or kind == "boolean":
        ups, downs = int((d > 0).sum()), int((d < 0).sum())
        name = "sign test" if test == "sign" else "exact McNemar"
        p = stats.sign_test(ups, ups + downs)
        statistic: float | None = float(min(ups, downs))
    else:
        statistic, p, method = stats.wilcoxon(d)
        name = f"Wilcoxon signed-rank ({method})"
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    return KeyComparison(
        key=key,
        kind=kind,
        n=n,
        baseline_mean=float(b.mean()),
        candidate_mean=float(c.mean()),
        difference=float(d.mean()),
        ci_low=low,
        ci_high=high,
        ci_method=ci_method,
        test=name,
        statistic=statistic,
        p_value=p,
        p_adjusted=p,
        verdict="",
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
