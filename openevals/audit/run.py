"""``audit_judge`` / ``aaudit_judge``: does a judge's score move when only an answer's form does?

The audit samples rows, writes each test's two forms of every sampled answer with the
deterministic transforms of :mod:`openevals.audit.transforms`, has the judge score all of them in
one batch run (through the runner: concurrency, judge cache, ``output=`` resume, progress), and
measures each test's paired effect (:mod:`openevals.audit.battery`). Like ``calibrate`` it is a
plan (:mod:`openevals.evaluation.plans`) run by ``run_plan`` (sync) or ``arun_plan`` (async).
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openevals._contract import (
    EvaluatorInfo,
    is_async_callable,
    make_async_evaluator,
    make_evaluator,
)
from openevals._repr import show
from openevals.audit.battery import POINTWISE, TESTS, pointwise_forms, probe_result, verdicts
from openevals.audit.report import AuditReport
from openevals.audit.transforms import apply
from openevals.calibration.run import judge_spec
from openevals.evaluation.plans import BatchRun, Plan, async_plan_entry, run_plan

if TYPE_CHECKING:
    from openevals.data.rows import Row
    from openevals.evaluation.result import EvaluationResult

__all__ = ["aaudit_judge", "audit_judge"]

_SEP = "::"
_RUNNER_OPTIONS = ("concurrency", "cache", "progress", "output")


@dataclass(frozen=True)
class Settings:
    """The audit's options, checked before any model call."""

    tests: tuple[str, ...] | None
    sample: int
    seed: int
    alpha: float
    min_effect: float
    resamples: int
    family: str
    feedback_key: str | None
    model: str | None
    runner: dict[str, Any]

    @classmethod
    def from_call(cls, *, tests: Sequence[str] | None, **options: Any) -> Settings:
        """The settings of one call, from its keyword options (the runner's go to ``runner``)."""
        runner = {name: options.pop(name) for name in _RUNNER_OPTIONS}
        return cls(tests=None if tests is None else tuple(tests), runner=runner, **options)

    def __post_init__(self) -> None:
        if self.tests is not None:
            unknown = [t for t in self.tests if t not in TESTS]
            if unknown or not self.tests:
                raise ValueError(
                    f"`tests` must name some of {show(sorted(TESTS))}; got {show(self.tests)}"
                )
            if "position" in self.tests and len(self.tests) > 1:
                raise ValueError(
                    "`tests`: 'position' audits a pairwise judge and cannot be mixed with the "
                    "pointwise tests"
                )
        for name, least in (("sample", 2), ("resamples", 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"`{name}` must be an int >= {least}; got {show(value)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"`seed` must be an int; got {show(self.seed)}")
        if not isinstance(self.alpha, float) or not 0.0 < self.alpha < 1.0:
            raise ValueError(
                f"`alpha` must be a float strictly between 0 and 1; got {show(self.alpha)}"
            )
        effect = self.min_effect
        if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not effect >= 0:
            raise ValueError(f"`min_effect` must be a number >= 0; got {show(effect)}")
        if not isinstance(self.family, str) or not self.family:
            raise TypeError(f"`family` must be a non-empty str; got {show(self.family)}")
        from openevals.evaluation.options import RunOptions

        RunOptions(**self.runner)


def _pairwise_rows(rows: list[Row]) -> bool:
    outputs = [r.fields.get("outputs") for r in rows]
    return all(isinstance(o, (list, tuple)) and len(o) == 2 for o in outputs)


def _first_score(result: Any) -> float:
    """The score of the answer shown first, from a pairwise judge's comparative result."""
    scores = result.get("scores") if isinstance(result, dict) else None
    if not isinstance(scores, dict) or len(scores) != 2:
        raise ValueError(
            "the position test needs a pairwise judge (create_pairwise_llm_as_judge) returning "
            f"`scores` for the two answers; got {show(result)}"
        )
    return float(scores[0] if 0 in scores else next(iter(scores.values())))


_FIRST = EvaluatorInfo(run_name="first_shown", feedback_keys=("first_shown",), judge=True)


def _first_shown(judge: Any) -> Any:
    """An evaluator scoring the answer a pairwise ``judge`` was shown first."""
    if is_async_callable(judge):

        async def ascore(**call: Any) -> float:
            return _first_score(await judge(**call))

        return make_async_evaluator(ascore, _FIRST.as_async(), name="first_shown", module=__name__)

    def score(**call: Any) -> float:
        return _first_score(judge(**call))

    return make_evaluator(score, _FIRST, name="first_shown", module=__name__)


def _forms(tests: Sequence[str], family: str) -> dict[str, Any]:
    if tests == ("position",):
        return {"ab": lambda pair: list(pair), "ba": lambda pair: [pair[1], pair[0]]}
    every = pointwise_forms(family)
    wanted = {name for t in tests for name in (TESTS[t].base, TESTS[t].variant)}
    return {
        name: (lambda value, fn=every[name]: apply(value, fn)) for name in every if name in wanted
    }


def _sample(rows: list[Row], size: int, seed: int) -> list[Row]:
    if len(rows) <= size:
        return rows
    return sorted(random.Random(seed).sample(rows, size), key=lambda r: r.index)


def _scores(result: EvaluationResult, name: str, key: str | None) -> tuple[dict[str, float], int]:
    """``{run row id: numeric score}`` and the number of failed or unscorable calls."""
    from openevals.evaluation.aggregates import numeric_score

    found: dict[str, float] = {}
    failed = 0
    for row in result.rows:
        entry = (row.get("evaluations") or {}).get(name) or {}
        results = entry.get("results") or []
        picked = [r for r in results if key is None or r.get("key") == key]
        number = numeric_score(picked[0].get("score")) if len(picked) == 1 else None
        if entry.get("status") != "success" or number is None:
            failed += 1
            continue
        found[str(row["id"])] = number
    return found, failed


def _plan_of_call(data: Any, judge: Any, **options: Any) -> Plan[AuditReport]:
    """The plan of one audit_judge / aaudit_judge call (its options checked before any run)."""
    import numpy as np

    from openevals.data.rows import iter_rows

    settings = Settings.from_call(**options)
    rows = _sample(list(iter_rows(data)), settings.sample, settings.seed)
    if len(rows) < 2:
        raise ValueError(f"`data` must hold at least 2 rows with `outputs`; got {len(rows)}")
    pairwise = _pairwise_rows(rows)
    tests = settings.tests or (("position",) if pairwise else POINTWISE)
    if (tests == ("position",)) != pairwise:
        raise ValueError(
            "the position test needs rows whose `outputs` are two answers (a pairwise judge); the "
            "other tests need one answer per row"
        )
    spec = judge_spec(_first_shown(judge) if pairwise else judge, settings.model, "judge")
    forms = _forms(tests, settings.family)
    batch = [
        {**row.fields, "id": f"{row.id}{_SEP}{form}", "outputs": write(row.fields.get("outputs"))}
        for row in rows
        for form, write in forms.items()
    ]
    result = yield BatchRun(batch, [spec], settings.runner)
    scores, failed = _scores(result, spec.name or "judge", settings.feedback_key)
    found = []
    for index, name in enumerate(tests):
        probe = TESTS[name]
        ids = [(f"{r.id}{_SEP}{probe.base}", f"{r.id}{_SEP}{probe.variant}") for r in rows]
        paired = [(scores[b], scores[v]) for b, v in ids if b in scores and v in scores]
        base, variant = np.array(paired, dtype=np.float64).reshape(-1, 2).T
        seed = settings.seed + index
        found.append(
            probe_result(
                probe, base, variant, alpha=settings.alpha, resamples=settings.resamples, seed=seed
            )
        )
    failed_note = f"{failed} judge call(s) failed or gave no number; their rows are left out"
    return AuditReport(
        tests=tuple(verdicts(found, settings.alpha, settings.min_effect)),
        rows=len(rows),
        alpha=settings.alpha,
        min_effect=float(settings.min_effect),
        family=settings.family,
        failed_calls=failed,
        result=result,
        notes=(failed_note,) if failed else (),
    )


def audit_judge(
    data: Any,
    judge: Any,
    *,
    tests: Sequence[str] | None = None,
    sample: int = 100,
    seed: int = 0,
    alpha: float = 0.05,
    min_effect: float = 0.05,
    resamples: int = 1000,
    family: str = "GPT-4o",
    feedback_key: str | None = None,
    model: str | None = None,
    concurrency: int = 16,
    cache: Any = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
) -> AuditReport:
    """Test ``judge`` for biases of form on a sample of ``data``'s rows.

    Args:
        data: the runner's row formats; each row's ``outputs`` is the answer to rewrite (two
            answers, ``[a, b]``, for a pairwise judge).
        judge: any evaluator with a numeric or boolean score (an LLM judge, a panel, a function),
            or a pairwise judge (``create_pairwise_llm_as_judge``) for the position test.
        tests: which tests to run (:data:`openevals.audit.battery.TESTS`); default every
            pointwise test, or ``("position",)`` for pairwise rows.
        sample: how many rows to audit (a seeded random sample when there are more).
        seed: for the sample and the bootstrap intervals.
        alpha: the significance level, after Holm's adjustment across the tests.
        min_effect: the smallest effect (in score units) worth calling a bias.
        resamples: bootstrap resamples per interval.
        family: the model family the ``family_hint`` test names.
        feedback_key: the judge result to read (default: its only one).
        model: the judge model when ``judge`` is a registry name such as ``"llm:..."``.
        concurrency, cache, progress, output: as for :func:`openevals.evaluate`.

    Returns an :class:`~openevals.audit.report.AuditReport`; ``report.check()`` fails a CI job on
    a biased judge.
    """
    plan = _plan_of_call(
        data,
        judge,
        tests=tests,
        sample=sample,
        seed=seed,
        alpha=alpha,
        min_effect=min_effect,
        resamples=resamples,
        family=family,
        feedback_key=feedback_key,
        model=model,
        concurrency=concurrency,
        cache=cache,
        progress=progress,
        output=output,
    )
    return run_plan(plan)


aaudit_judge = async_plan_entry(
    audit_judge,
    _plan_of_call,
    doc="Async twin of :func:`audit_judge` (the run goes through :func:`aevaluate`).",
)
