"""Multi-criteria rubric judge: one model call grades several named criteria.

Each criterion has a description and a kind of grade: ``"boolean"`` (true/false),
``"continuous"`` (0 to 1) or ``"choices"`` (one of given numbers). The judge answers with one
structured object (the shared reasoning plus a grade per criterion, under the criterion's name);
the evaluator returns one result per criterion (``key`` = its name) carrying that reasoning and the
call's usage. An answer that misses a criterion, adds an unknown one or gives a grade of the wrong
kind is sent back once for repair and then raises :class:`~openevals._judge.errors.JudgeOutputError`;
it never becomes a score.

The judge is built on the shared judge core: :func:`_answer_model` (the answer's schema) and
:func:`_results` (answer -> results) are the only rubric-specific steps.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.options import FactorySpec, JudgeOptions, check_weighted_choices
from openevals._judge.schema import default_score_schema
from openevals._judge.shell import Ask, JudgeCall, build_core, judge_evaluator
from openevals._repr import show
from openevals.prompts.quality import RUBRIC_PROMPT

__all__ = [
    "RUBRIC_PROMPT",
    "Criterion",
    "calibrate_rubric",
    "create_async_rubric_judge",
    "create_rubric_judge",
]

_CRITERIA: weakref.WeakKeyDictionary[Any, tuple[Criterion, ...]] = weakref.WeakKeyDictionary()
CriterionKind = Literal["boolean", "continuous", "choices"]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}")
_RESERVED = frozenset({"reasoning"})


@dataclass(frozen=True)
class Criterion:
    """One graded criterion: its ``name`` (the result's key), what it checks (``description``),
    its ``kind`` of grade and, for ``"choices"``, the allowed numbers."""

    name: str
    description: str
    kind: CriterionKind = "boolean"
    choices: tuple[float, ...] = ()

    def line(self) -> str:
        if self.kind == "choices":
            allowed = ", ".join(f"{c:g}" for c in self.choices)
            return f"- {self.name} (choices: one of {allowed}): {self.description}"
        return f"- {self.name} ({self.kind}): {self.description}"


def _criterion(name: Any, spec: Any) -> Criterion:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name in _RESERVED:
        raise ValueError(
            f"criterion names must be identifiers (letters, digits, '_' or '-', up to 64 "
            f"characters) other than 'reasoning'; got {show(name)}"
        )
    if isinstance(spec, str):
        spec = {"description": spec}
    if isinstance(spec, Criterion):
        spec = {"description": spec.description, "kind": spec.kind, "choices": spec.choices}
    if not isinstance(spec, Mapping):
        raise TypeError(
            f"`criteria[{show(name)}]` must be a description string or a dict with 'description', "
            f"'kind' ('boolean', 'continuous' or 'choices') and 'choices'; got "
            f"{type(spec).__name__}"
        )
    unknown = sorted(set(spec) - {"description", "kind", "choices"})
    if unknown:
        raise ValueError(
            f"`criteria[{show(name)}]` has unknown fields {show(unknown)}; accepted: "
            "description, kind, choices"
        )
    description = spec.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"`criteria[{show(name)}]['description']` must be a non-empty string")
    choices = spec.get("choices")
    kind = spec.get("kind", "choices" if choices is not None else "boolean")
    if kind not in ("boolean", "continuous", "choices"):
        raise ValueError(
            f"`criteria[{show(name)}]['kind']` must be 'boolean', 'continuous' or 'choices'; got "
            f"{show(kind)}"
        )
    allowed: tuple[float, ...] = ()
    if kind == "choices":
        if (
            isinstance(choices, (str, bytes))
            or not isinstance(choices, Sequence)
            or len(choices) < 2
            or any(isinstance(c, bool) or not isinstance(c, (int, float)) for c in choices)
            or not all(math.isfinite(c) for c in choices)
            or len(set(choices)) != len(choices)
        ):
            raise ValueError(
                f"`criteria[{show(name)}]['choices']` must be two or more distinct finite numbers; got "
                f"{show(choices)}"
            )
        allowed = tuple(float(c) for c in choices)
    elif choices is not None:
        raise ValueError(
            f"`criteria[{show(name)}]` has choices but kind={show(kind)}; use kind='choices'"
        )
    return Criterion(name, description.strip(), kind, allowed)


def _criteria(criteria: Any) -> tuple[Criterion, ...]:
    if isinstance(criteria, Mapping):
        items = list(criteria.items())
    elif isinstance(criteria, Sequence) and not isinstance(criteria, (str, bytes)):
        if not all(isinstance(c, Criterion) for c in criteria):
            raise TypeError("`criteria` as a list must hold Criterion objects")
        items = [(c.name, c) for c in criteria]
    else:
        raise TypeError(
            "`criteria` must be a dict of criterion name -> description (or spec dict), or a list "
            f"of Criterion; got {type(criteria).__name__}"
        )
    if not items:
        raise ValueError("`criteria` must name at least one criterion")
    names = [name for name, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"`criteria` names must be distinct; got {show(names)}")
    return tuple(_criterion(name, spec) for name, spec in items)


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got the boolean {show(value)}")
    return value


def _answer_model(criteria: tuple[Criterion, ...], use_reasoning: bool) -> Any:
    """A Pydantic model of the judge's answer: ``reasoning`` (unless ``use_reasoning`` is off)
    plus one grade per criterion, no other field (so a missing, unknown or ill-typed grade fails
    validation and gets repaired)."""
    from pydantic import BeforeValidator, ConfigDict, Field, StrictBool, create_model

    # A number grade given as true/false is the wrong kind of answer (repaired, then rejected),
    # never 1.0 or 0.0: Pydantic's lax mode would take a bool for a float or a Literal number.
    numbers_only = BeforeValidator(_no_bool)
    fields: dict[str, Any] = {}
    if use_reasoning:
        fields["reasoning"] = (str, Field(description="Step-by-step reasoning."))
    for i, c in enumerate(criteria):
        kind: Any
        if c.kind == "boolean":
            kind = StrictBool
        elif c.kind == "continuous":
            kind = Annotated[float, numbers_only]
        else:
            kind = Annotated[Literal[c.choices], numbers_only]
        extra: dict[str, Any] = {"ge": 0, "le": 1} if c.kind == "continuous" else {}
        fields[f"criterion_{i}"] = (kind, Field(alias=c.name, description=c.description, **extra))
    return create_model(
        "RubricGrades",
        __config__=ConfigDict(extra="forbid", populate_by_name=False),
        **fields,
    )


def _grades(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        return dict(value.model_dump(by_alias=True))
    return dict(value)


def _results(criteria: tuple[Criterion, ...], outcome: Any, weighted: bool) -> list[dict[str, Any]]:
    """One result per criterion from the judge's (validated) answers; several samples are combined
    per criterion (boolean and choices by vote, continuous by mean). ``weighted``
    (``score_weighting="logprobs"``): each grade is read from the probabilities of its tokens,
    and samples are averaged."""
    from openevals._judge.samples import read_scores

    answers = [_grades(v) for v in outcome.values] or [_grades(outcome.value)]
    reasoning = answers[0].get("reasoning")
    results = []
    for c in criteria:
        spec = default_score_schema(
            continuous=c.kind == "continuous",
            choices=list(c.choices) if c.kind == "choices" else None,
            use_reasoning=True,
        )
        scores = [a[c.name] for a in answers]
        reasonings = [a.get("reasoning") for a in answers]
        score, _, metadata = read_scores(
            spec, outcome, scores, reasonings, weighted=weighted, key=c.name
        )
        results.append(
            {"key": c.name, "score": score, "comment": reasoning, "metadata": metadata or None}
        )
    return results


def _prepare(criteria: tuple[Criterion, ...]) -> Any:
    text = "\n".join(c.line() for c in criteria)

    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        if call.get("outputs") is None:
            raise ValueError("the rubric judge needs `outputs` (the output to grade); got None")
        return {**call, "criteria": text}

    return prepare


@dataclass(frozen=True, kw_only=True)
class RubricOptions(JudgeOptions):
    """The rubric judge's options: its criteria, and the judge's (it sets the answer schema)."""

    criteria: Mapping[str, Any] | Sequence[Criterion]
    prompt: Any = RUBRIC_PROMPT


def _check_weighting(criteria: tuple[Criterion, ...], score_weighting: Any) -> None:
    """``score_weighting="logprobs"`` reads boolean and whole-number ``choices`` grades only."""
    if score_weighting != "logprobs":
        return  # None, or a value the shared option check refuses
    for c in criteria:
        if c.kind == "continuous":
            raise ValueError(
                f"score_weighting='logprobs' weights boolean and `choices` grades by the "
                f"probabilities of their tokens; criterion {show(c.name)} is continuous (give "
                "it kind='choices' with whole numbers, or drop score_weighting)"
            )
        if c.kind == "choices":
            check_weighted_choices(c.choices, f"the choices of criterion {show(c.name)}")


def _rubric(spec: FactorySpec, options: RubricOptions) -> Any:
    """The evaluator both public factories return: one judge call, one result per criterion."""
    checked = _criteria(options.criteria)
    use_reasoning = options.use_reasoning
    if not isinstance(use_reasoning, bool):
        raise TypeError(f"`use_reasoning` must be True or False; got {show(use_reasoning)}")
    _check_weighting(checked, options.score_weighting)
    core = build_core(
        spec,
        options,
        run_name="rubric_judge",
        output_schema=_answer_model(checked, use_reasoning),
    )
    weighted = core.weighted

    def flow(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Generator[Any, Any, list[dict[str, Any]]]:
        (outcome,) = yield Ask((JudgeCall(inputs, outputs, reference_outputs, kw),))
        return _results(checked, outcome, weighted)

    evaluator = judge_evaluator(
        core,
        is_async=spec.is_async,
        flow=flow,
        prepare=_prepare(checked),
        run_name="rubric_judge",
        feedback_keys=tuple(c.name for c in checked),
        raw=True,
        name="rubric_judge_async" if spec.is_async else "rubric_judge",
        module=__name__,
    )
    _CRITERIA[evaluator] = checked
    return evaluator


create_rubric_judge, create_async_rubric_judge = judge_factories(
    "create_rubric_judge",
    RubricOptions,
    _rubric,
    EVALUATORS,
    order=(
        "criteria prompt judge model system few_shot_examples structured_output_kwargs "
        "max_retries samples timeout use_reasoning score_weighting"
    ),
    leaves_out=("feedback_key", "continuous", "choices", "output_schema"),
    doc="""A judge that grades every criterion of ``criteria`` in one model call.

``criteria`` maps each name to its description (a boolean criterion) or to a dict with
``description``, ``kind`` (``"boolean"``, ``"continuous"``: 0-1, ``"choices"``) and
``choices`` (numbers); a list of :class:`Criterion` works too. The evaluator takes
``inputs``, ``outputs``, ``reference_outputs`` (and ``attachments``) and returns one result per
criterion, ``key`` = its name, ``comment`` = the shared reasoning, ``metadata["usage"]`` = the
call's tokens. The prompt gets ``{criteria}`` (the rendered list) besides the usual variables.
Other options are those of :func:`openevals.llm.create_llm_as_judge`; with ``samples=n`` each
criterion is voted (boolean, choices) or averaged (continuous) over the samples.
``use_reasoning=False`` drops the reasoning field from the answer (``comment`` is then None).
``score_weighting="logprobs"`` reads each grade from the probabilities of its tokens (G-Eval
style): a boolean criterion scores ``P(true)``, a ``choices`` criterion the
probability-weighted mean of its choices (whole numbers 0-999), with
``metadata["score_probabilities"]``; samples are then averaged. It needs an OpenAI client or
an ``openai:`` model string and no continuous criterion.

Raises ValueError/TypeError for bad criteria or options at creation, and
:class:`~openevals._judge.errors.JudgeOutputError` when the judge's answer (after one repair
request) misses a criterion, adds an unknown one or gives a grade of the wrong kind.
""",
)


class _MemoryCache(dict[str, dict[str, Any]]):
    """A per-call in-memory judge cache (get/set/close), so the criteria's calibration runs share
    one model call per row."""

    def set(self, key: str, value: dict[str, Any]) -> None:
        self[key] = value

    def close(self) -> None:
        self.clear()


def calibrate_rubric(
    data: Any,
    judge: Any,
    *,
    labels: Mapping[str, str],
    cache: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """One :func:`openevals.calibration.calibrate` report per criterion of a rubric judge.

    ``labels`` maps each criterion to the column holding the human label for it (criteria without
    a column are skipped). The judge is asked once per row: the runs share ``cache`` (by default an
    in-memory cache for this call). ``options`` are :func:`calibrate`'s (``reason``, ``tolerance``,
    ``concurrency``, ...). Raises ValueError for a label column of an unknown criterion.
    """
    from openevals._contract import info_of
    from openevals.calibration import calibrate

    info = info_of(judge)
    keys = info.feedback_keys if info is not None else ()
    if not isinstance(labels, Mapping) or not labels:
        raise TypeError("`labels` must be a non-empty dict of criterion name -> label column")
    unknown = sorted(set(labels) - set(keys))
    if unknown:
        raise ValueError(
            f"`labels` names criteria the judge does not grade: {show(unknown)}; its criteria: "
            f"{show(list(keys))}"
        )
    # Criterion name -> the score type calibration checks labels against.
    kinds = {
        c.name: list(c.choices) if c.kind == "choices" else c.kind for c in _CRITERIA.get(judge, ())
    }
    shared = cache if cache is not None else _MemoryCache()
    return {
        name: calibrate(
            data,
            judge,
            label=column,
            feedback_key=name,
            judge_scores=kinds.get(name),
            cache=shared,
            **options,
        )
        for name, column in labels.items()
    }
