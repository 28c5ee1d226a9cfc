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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.comparison._runs import read_run, skipped_notes
from openevals.comparison._unpaired import refuse_parquet
from openevals.comparison.gate import check
from openevals.comparison.results import Comparison
from openevals.evaluation.plans import async_plan_entry, run_plan

if TYPE_CHECKING:
    from openevals.evaluation.plans import Plan

__all__ = ["acompare", "assert_no_regression", "compare"]

TESTS = ("auto", "sign")
_JUDGE_OPTIONS = ("concurrency", "cache", "output", "progress", "retry_errors", "engine", "budget")


def _number(value: Any, name: str, accepted: str) -> float:
    """``value`` as a finite float; ``TypeError`` naming ``name`` when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"`{name}` must be {accepted}; got {type(value).__name__} {show(value)}")
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be {accepted}; got {show(value)}")
    return float(value)


def _whole(value: Any, name: str, minimum: int) -> None:
    """``TypeError`` / ``ValueError`` naming ``name`` unless ``value`` is an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"`{name}` must be a whole number >= {minimum}; got {type(value).__name__} "
            f"{show(value)}"
        )
    if value < minimum:
        raise ValueError(f"`{name}` must be a whole number >= {minimum}; got {show(value)}")


@dataclass
class Options:
    """The options of one compare / acompare call (everything after the two runs), checked and
    normalised at creation: ``TypeError`` for an option of the wrong type, ``ValueError`` for one
    out of range; both name the option."""

    keys: Sequence[str] | None
    group_by: str | None
    alpha: float
    min_effect: float
    seed: int
    test: str
    lower_is_better: Sequence[str]
    resamples: int
    max_rows: int
    judge: Any
    judge_options: Mapping[str, Any] | None
    calibration: Mapping[str, Any] | None

    def __post_init__(self) -> None:
        alpha, min_effect, test = self.alpha, self.min_effect, self.test
        self.alpha = _number(alpha, "alpha", "a float strictly between 0 and 1")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"`alpha` must be a float strictly between 0 and 1; got {show(alpha)}")
        self.min_effect = _number(min_effect, "min_effect", "a finite number >= 0")
        if self.min_effect < 0:
            raise ValueError(f"`min_effect` must be a finite number >= 0; got {show(min_effect)}")
        _whole(self.seed, "seed", 0)
        if not isinstance(test, str):
            raise TypeError(
                f"`test` must be one of {TESTS}; got {type(test).__name__} {show(test)}"
            )
        if test not in TESTS:
            raise ValueError(f"`test` must be one of {TESTS}; got {show(test)}")
        _whole(self.resamples, "resamples", 100)
        _whole(self.max_rows, "max_rows", 0)
        group_by = self.group_by
        if group_by is not None and not isinstance(group_by, str):
            raise TypeError(
                "`group_by` must be one row field name as a str (a dotted path such as "
                f"'extra.topic' for a nested field), or None; got {type(group_by).__name__} "
                f"{show(group_by)}"
            )
        if isinstance(group_by, str) and not all(group_by.split(".")):
            raise ValueError(
                f"`group_by` must name a row field (e.g. 'topic' or 'extra.topic'); got {show(group_by)}"
            )
        if isinstance(self.keys, str):
            raise TypeError(
                f"`keys` must be a list of feedback keys; got the string {show(self.keys)}"
            )
        lower = self.lower_is_better
        if isinstance(lower, str):
            raise TypeError(f"`lower_is_better` must be a list of keys; got {show(lower)}")
        if self.keys is not None:
            self.keys = _key_names(self.keys, "keys")
        self.lower_is_better = _key_names(lower, "lower_is_better")
        judge_options = self.judge_options
        if judge_options is not None and not isinstance(judge_options, Mapping):
            raise TypeError(
                f"`judge_options` must be a dict of options for the judge's run; got "
                f"{type(judge_options).__name__} {show(judge_options)}"
            )
        self.judge_options = dict(judge_options or {})
        unknown = [name for name in self.judge_options if name not in _JUDGE_OPTIONS]
        if unknown:
            raise ValueError(f"`judge_options` takes {list(_JUDGE_OPTIONS)}; got {show(unknown)}")
        if self.judge is not None and not callable(self.judge):
            raise TypeError(
                f"`judge` must be a pairwise judge (create_pairwise_llm_as_judge); got "
                f"{show(self.judge)}"
            )


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


def _flow(baseline: Any, candidate: Any, **options: Any) -> Plan[Comparison]:
    """The comparison as a plan (its options checked first): it yields one
    :class:`~openevals.evaluation.plans.BatchRun` when ``judge`` is given."""
    from openevals.comparison._pairs import build
    from openevals.comparison.corrected import pair_calibration
    from openevals.comparison.head_to_head import judge_rows, summarize
    from openevals.evaluation.plans import BatchRun

    checked = Options(**options)
    refuse_parquet(baseline, "baseline")
    refuse_parquet(candidate, "candidate")
    calibrated = pair_calibration(checked.calibration)
    base = read_run(baseline, "baseline", checked.group_by)
    cand = read_run(candidate, "candidate", checked.group_by)
    for run in (base, cand):
        if not run.ids:
            raise ValueError(f"the {run.label} run is empty: it has no rows to compare")
    comparison = build(base, cand, checked, calibrated)
    corrupt = skipped_notes(base) + skipped_notes(cand)
    if corrupt:
        comparison = replace(comparison, notes=(*corrupt, *comparison.notes))
    if checked.judge is None:
        return comparison
    shared = [i for i in base.ids if i in cand.ids]
    run_options = {
        "progress": False,
        **(checked.judge_options or {}),
        "systems": ["candidate", "baseline"],
    }
    result = yield BatchRun(judge_rows(base, cand, shared), [checked.judge], run_options)
    return replace(comparison, head_to_head=summarize(result))


acompare = async_plan_entry(
    compare,
    _flow,
    doc="Async twin of :func:`compare`: head-to-head judging runs through ``aevaluate``.",
)


def assert_no_regression(
    baseline: Any,
    candidate: Any,
    *,
    fail_on_regression: bool = True,
    max_drop: Mapping[str, float] | None = None,
    allow_unpaired: float = 0.0,
    **options: Any,
) -> Comparison:
    """For pytest: compare the runs (``options`` go to :func:`compare`) and fail the test with
    the per-key table when a gate trips; returns the comparison otherwise."""
    comparison = compare(baseline, candidate, **options)
    check(
        comparison,
        fail_on_regression=fail_on_regression,
        max_drop=max_drop,
        allow_unpaired=allow_unpaired,
    )
    return comparison
