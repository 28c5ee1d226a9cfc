"""``cross_validate``: does adding few-shot examples from labelled disagreements help, honestly?

The labelled rows are split into ``k`` folds (stratified by label for boolean and categorical
labels). The judge without examples scores every row once. Then, for each fold, examples are
picked from the disagreements on the *other* folds only, a judge is built with them by the
caller's factory, and that judge scores the held-out fold. "Before" and "after" are the agreement
of the judge without and with examples on the same held-out rows, each with a bootstrap interval,
plus a paired interval of the change. No row is ever both an example and scored by the judge
that was shown it.

Judges keep their few-shot examples as a creation option, so re-running one with examples means
building it again: pass a *factory* ``judge_factory(few_shot_examples) -> evaluator``, e.g.::

    def judge_factory(examples):
        return create_llm_as_judge(prompt=CORRECTNESS_PROMPT, model="openai:gpt-4.1-mini",
                                   few_shot_examples=examples)
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals._stats import Estimate, bootstrap_weights, estimate
from openevals.calibration.agreement import (
    CategoricalAgreement,
    ContinuousAgreement,
    figure_label,
    figures_of,
)
from openevals.calibration.fewshot import as_example, select_disagreements
from openevals.calibration.labels import LabelledData, load_labelled
from openevals.calibration.report import (
    DEFAULT_TOLERANCE,
    JudgedRow,
    agreement_of,
    judged_rows,
)
from openevals.calibration.run import Settings, judge_spec
from openevals.evaluation.plans import BatchRun, Plan, async_plan_entry, run_plan
from openevals.types import FewShotExample

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = ["CrossValidation", "Fold", "across_validate", "cross_validate"]

JudgeFactory = Callable[[list[FewShotExample]], Any]


@dataclass(frozen=True)
class Fold:
    """One fold: the rows it held out, the rows its examples came from, and the examples."""

    index: int
    held_out: tuple[str, ...]
    example_rows: tuple[str, ...]
    examples: tuple[FewShotExample, ...]
    before: float | None
    """The primary figure (accuracy, or MAE for continuous labels) on this fold without examples."""
    after: float | None


@dataclass(frozen=True)
class CrossValidation:
    """Held-out agreement of a judge without (``before``) and with (``after``) few-shot examples.

    ``change`` is the paired bootstrap estimate of after minus before for the primary figure
    (``accuracy``, or ``mae`` for continuous labels, where lower is better).
    """

    k: int
    examples_per_fold: int
    primary: str
    before: CategoricalAgreement | ContinuousAgreement
    after: CategoricalAgreement | ContinuousAgreement
    change: Estimate
    folds: tuple[Fold, ...]
    n: int
    left_out: int
    """Rows left out because the judge failed on them before or after."""

    def __str__(self) -> str:
        pct = round(self.before.confidence * 100)
        lines = [
            f"Cross-validation: {self.k} folds, up to {self.examples_per_fold} examples per fold "
            f"picked from the other folds; {self.n} held-out rows"
            + (f" ({self.left_out} left out: judge errors)" if self.left_out else ""),
            f"{'figure':<22}{'before (no examples)':<28}after ({pct}% CI)",
        ]
        after = dict(figures_of(self.after))
        for attr, est in figures_of(self.before):
            lines.append(f"{figure_label(attr):<22}{format(est):<28}{after.get(attr, '-')}")
        lines.append(f"change in {figure_label(self.primary)}: {self.change:+.3f}")
        for fold in self.folds:
            lines.append(
                f"  fold {fold.index}: {len(fold.held_out)} held out, {len(fold.examples)} examples"
                f" from rows {list(fold.example_rows)}; {self.primary} "
                f"{_num(fold.before)} -> {_num(fold.after)}"
            )
        return "\n".join(lines)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def make_folds(data: LabelledData, k: int, seed: int) -> list[list[str]]:
    """``k`` folds of row ids, stratified by label (not for continuous labels), seeded."""
    rng = random.Random(seed)
    strata: dict[Any, list[str]] = {}
    for row in data.rows:
        key = repr(row.label) if data.label_type != "continuous" else None
        strata.setdefault(key, []).append(row.id)
    dealt: list[str] = []  # each stratum shuffled, then dealt round the folds in turn
    for key in sorted(strata, key=str):
        rng.shuffle(strata[key])
        dealt += strata[key]
    return [dealt[i::k] for i in range(k)]


def _primary(rows: Sequence[JudgedRow], continuous: bool) -> list[float]:
    if continuous:
        return [abs(float(r.judge) - float(r.human)) for r in rows]
    return [1.0 if r.agrees else 0.0 for r in rows]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _plan_of_call(
    data: Any, judge_factory: JudgeFactory, *, k: int, examples_per_fold: int, **options: Any
) -> Plan[CrossValidation]:
    """The plan of one cross_validate / across_validate call (every option checked first)."""
    import numpy as np

    _checked(judge_factory, k, examples_per_fold)
    settings = Settings.from_call(**options)
    baseline = judge_spec(judge_factory([]), settings.model, "judge", keep_name=False)
    labelled = load_labelled(data, settings, baseline.evaluator)  # checks before any model call
    if k > len(labelled.rows):
        raise ValueError(
            f"`k` ({k}) is larger than the number of labelled rows ({len(labelled.rows)})"
        )
    continuous = labelled.label_type == "continuous"
    by_id = labelled.by_id()
    before_result: EvaluationResult = yield BatchRun(
        [row.as_data() for row in labelled.rows], [baseline], settings.runner
    )
    before_rows, _ = judged_rows(labelled, before_result, "judge", settings)
    scored_before = {r.id: r for r in before_rows}
    folds: list[Fold] = []
    pairs: list[tuple[JudgedRow, JudgedRow]] = []
    for index, held_out in enumerate(make_folds(labelled, k, settings.seed)):
        held = set(held_out)
        training = [r for r in before_rows if r.id not in held]
        chosen = select_disagreements(
            training, examples_per_fold, continuous=continuous, seed=settings.seed + index
        )
        examples = [as_example(r) for r in chosen]
        name = f"judge+examples[fold {index}]"
        spec = judge_spec(judge_factory(list(examples)), settings.model, name, keep_name=False)
        after_result = yield BatchRun(
            [by_id[i].as_data() for i in held_out], [spec], settings.runner
        )
        after_rows, _ = judged_rows(labelled, after_result, name, settings)
        fold_pairs = [(scored_before[r.id], r) for r in after_rows if r.id in scored_before]
        pairs.extend(fold_pairs)
        folds.append(
            Fold(
                index=index,
                held_out=tuple(held_out),
                example_rows=tuple(r.id for r in chosen),
                examples=tuple(examples),
                before=_mean(_primary([b for b, _ in fold_pairs], continuous)),
                after=_mean(_primary([a for _, a in fold_pairs], continuous)),
            )
        )
    pairs.sort(key=lambda p: p[0].index)
    held_before, held_after = [b for b, _ in pairs], [a for _, a in pairs]
    diff = np.array(_primary(held_after, continuous)) - np.array(_primary(held_before, continuous))
    weights = bootstrap_weights(len(diff), settings.resamples, settings.seed)
    return CrossValidation(
        k=k,
        examples_per_fold=examples_per_fold,
        primary="mae" if continuous else "accuracy",
        before=agreement_of(labelled, held_before, settings),
        after=agreement_of(labelled, held_after, settings),
        change=estimate(weights @ diff / len(diff), settings.confidence, ""),
        folds=tuple(folds),
        n=len(pairs),
        left_out=len(labelled.rows) - len(pairs),
    )


def _checked(judge_factory: Any, k: Any, examples: Any) -> None:
    if not callable(judge_factory):
        raise TypeError(
            "`judge_factory` must be a function few_shot_examples -> evaluator (e.g. a lambda "
            f"calling create_llm_as_judge(..., few_shot_examples=examples)); got "
            f"{type(judge_factory).__name__}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"`k` must be a whole number >= 2; got {show(k)}")
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise ValueError(f"`examples_per_fold` must be a whole number >= 1; got {show(examples)}")


def cross_validate(
    data: Any,
    judge_factory: JudgeFactory,
    *,
    k: int = 5,
    examples_per_fold: int = 4,
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
) -> CrossValidation:
    """Measure, on held-out folds, how few-shot examples from disagreements change agreement.

    Args:
        judge_factory: ``judge_factory(few_shot_examples) -> evaluator``; called with ``[]`` for
            the judge without examples and once per fold with that fold's examples.
        k: the number of folds (>= 2).
        examples_per_fold: the most examples picked from each fold's training rows.

    The other arguments are those of :func:`~openevals.calibration.calibrate`. The runs go
    through the batch runner (``k + 1`` of them); with ``output=`` a rerun resumes.
    """
    plan = _plan_of_call(
        data,
        judge_factory,
        k=k,
        examples_per_fold=examples_per_fold,
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


across_validate = async_plan_entry(
    cross_validate,
    _plan_of_call,
    doc="Async twin of :func:`cross_validate` (the runs go through :func:`aevaluate`).",
)
