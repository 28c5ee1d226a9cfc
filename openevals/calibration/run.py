"""``calibrate`` / ``acalibrate``: run a judge over labelled data through the batch runner.

A calibration is a *plan* (:mod:`openevals.evaluation.plans`): a generator that yields the batch
runs it needs (rows plus one judge) and receives each run's
:class:`~openevals.evaluation.result.EvaluationResult`; :func:`~openevals.evaluation.plans.run_plan`
runs them with :func:`~openevals.evaluation.evaluate`, ``arun_plan`` with
:func:`~openevals.evaluation.aevaluate`. Both therefore share the runner's concurrency, judge
cache, resume (``output=``) and progress bar, and the plan itself is written once. The options
shared by calibrate and cross_validate are one :class:`Settings`, built once per call by
:meth:`Settings.from_call`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._repr import show
from openevals._stats import check_resampling
from openevals.calibration.labels import load_labelled
from openevals.calibration.report import DEFAULT_TOLERANCE, CalibrationReport, build_report
from openevals.evaluation.plans import BatchRun, Plan, async_plan_entry, run_plan
from openevals.evaluation.spec import EvaluatorSpec

__all__ = ["acalibrate", "calibrate"]

_RUNNER_OPTIONS = ("concurrency", "cache", "progress", "output", "retry_errors")
"""The options of calibrate and cross_validate that go to every batch run as they are."""


@dataclass(frozen=True)
class Settings:
    """The options shared by calibrate and cross_validate, validated once."""

    label: str
    reason: str | None
    label_type: str | None
    choices: Sequence[Hashable] | None
    label_map: Mapping[Any, Any] | None
    judge_scores: Any
    feedback_key: str | None
    tolerance: float
    resamples: int
    seed: int
    confidence: float
    model: str | None
    runner: dict[str, Any]

    @classmethod
    def from_call(cls, **options: Any) -> Settings:
        """The settings of one call, from its keyword options: those of
        :data:`_RUNNER_OPTIONS` become ``runner``, the rest are fields."""
        runner = {name: options.pop(name) for name in _RUNNER_OPTIONS}
        return cls(runner=runner, **options)

    def __post_init__(self) -> None:
        tol = self.tolerance
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0:
            raise ValueError(f"`tolerance` must be a number >= 0; got {show(tol)}")
        if not math.isfinite(tol):
            raise ValueError(f"`tolerance` must be finite; got {show(tol)}")
        if self.feedback_key is not None and (
            not isinstance(self.feedback_key, str) or not self.feedback_key
        ):
            raise TypeError(
                f"`feedback_key` must be a non-empty str or None; got {show(self.feedback_key)}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"`seed` must be an int; got {show(self.seed)}")
        check_resampling(self.resamples, self.confidence)
        from openevals.evaluation.options import RunOptions

        RunOptions(**self.runner)  # validates concurrency, cache, progress, output, ...


def judge_spec(
    judge: Any, model: str | None, name: str, *, keep_name: bool = True
) -> EvaluatorSpec:
    """``judge`` (an evaluator, an :class:`EvaluatorSpec` or a registry name such as
    ``"llm:CORRECTNESS_PROMPT"``) as a spec named ``name`` (unless it names itself and
    ``keep_name``)."""
    if isinstance(judge, str):
        from openevals.evaluation.registry import build_evaluator

        built = build_evaluator(judge, model=model)
        return EvaluatorSpec(built.evaluator, name=name, fields=built.fields, inline=built.inline)
    if isinstance(judge, EvaluatorSpec):
        if judge.name and keep_name:
            return judge
        return EvaluatorSpec(judge.evaluator, name, judge.fields, judge.inline)
    if callable(judge):
        return EvaluatorSpec(judge, name=name)
    raise TypeError(
        "`judge` must be an evaluator (e.g. create_llm_as_judge(...)), an EvaluatorSpec or an "
        f"evaluator name such as 'llm:CORRECTNESS_PROMPT'; got {type(judge).__name__}"
    )


def _plan_of_call(data: Any, judge: Any, **options: Any) -> Plan[CalibrationReport]:
    """The plan of one calibrate / acalibrate call (its options checked before any run)."""
    settings = Settings.from_call(**options)
    spec = judge_spec(judge, settings.model, "judge")
    labelled = load_labelled(data, settings, spec.evaluator)  # every check before the first call
    name = spec.name or "judge"
    result = yield BatchRun([row.as_data() for row in labelled.rows], [spec], settings.runner)
    return build_report(labelled, result, name, settings)


def calibrate(
    data: Any,
    judge: Any,
    *,
    label: str = "label",
    reason: str | None = None,
    label_type: str | None = None,
    choices: Sequence[Hashable] | None = None,
    label_map: Mapping[Any, Any] | None = None,
    judge_scores: Any = None,
    feedback_key: str | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    model: str | None = None,
    concurrency: int = 16,
    cache: Any = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    retry_errors: bool = False,
) -> CalibrationReport:
    """Run ``judge`` over labelled ``data`` and measure how well it agrees with the labels.

    Every check on the data and its labels (a missing label column, labels whose type cannot
    meet the judge's scores) runs before the first model call. Returns a
    :class:`~openevals.calibration.report.CalibrationReport`; ``print(report)`` shows it.

    Args:
        data: the runner's row formats (a list of dicts, or a JSONL/JSON/CSV/TSV path) plus a
            human label column.
        label: the label column (a dotted path such as ``metadata.label`` works too). Labels may
            be booleans, numbers or text; CSV text ``"true"``/``"0.5"`` is read as bool/number.
        reason: an optional column with the human's reason for the label (shown with
            disagreements and used as few-shot reasoning).
        label_type: ``"boolean"``, ``"categorical"`` or ``"continuous"``; by default booleans
            are boolean, text is categorical, and numbers are categorical when the judge (or
            ``choices``) has choices, else continuous.
        choices: every categorical label, in order (default: the judge's choices, else the
            labels seen).
        label_map: raw label -> label, e.g. ``{"pass": True, "fail": False}``.
        judge_scores: the judge's score type (``"boolean"``, ``"continuous"`` or a list of
            choices) for judges that do not declare it (plain functions).
        feedback_key: which result of the judge to compare (needed when it returns several).
        tolerance: continuous labels: a row is a disagreement when ``|judge - human|`` exceeds it.
        resamples, seed, confidence: the bootstrap behind every interval.
        model: the judge model when ``judge`` is a name such as ``"llm:CORRECTNESS_PROMPT"``.
        concurrency, cache, progress, output, retry_errors: as for
            :func:`openevals.evaluation.evaluate` (``output=`` makes a rerun resume).
    """
    plan = _plan_of_call(
        data,
        judge,
        label=label,
        reason=reason,
        label_type=label_type,
        choices=choices,
        label_map=label_map,
        judge_scores=judge_scores,
        feedback_key=feedback_key,
        tolerance=tolerance,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        model=model,
        concurrency=concurrency,
        cache=cache,
        progress=progress,
        output=output,
        retry_errors=retry_errors,
    )
    return run_plan(plan)


acalibrate = async_plan_entry(
    calibrate,
    _plan_of_call,
    doc="Async twin of :func:`calibrate` (the runs go through :func:`aevaluate`).",
)
