"""The judge's options, declared once, and the checks every judge factory runs at creation.

:class:`ModelOptions` (what every judge takes: its prompt, model and request options) and
:class:`JudgeOptions` (those plus how a score is asked for and read) are the declaration: each
field's annotation and default are what every judge factory's signature shows, and
``__post_init__`` converts and checks them. A family's public ``create_x`` / ``create_async_x``
factories are derived from an options type (one of these, or a subclass adding the family's own
options) by :func:`openevals._judge.declare.judge_factories`, which also registers their
:class:`FactorySpec` here. Adding a judge option is one field and its check, in this file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from openevals._repr import show

if TYPE_CHECKING:
    from openevals.types import FewShotExample

ScoreWeighting = Literal["logprobs"]
"""How a score is read from the judge's answer: ``None`` (the answer's own value) or
``"logprobs"`` (weighted by the probabilities of the score tokens, G-Eval style)."""

_MAX_SAMPLES = 128
_MAX_WEIGHTED_CHOICE = 999
_REQUIRED = {"required": True}
"""Field metadata: the option has no default unless the family gives one (the prompt)."""


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """The options of every judge: its prompt, the model it asks and how (checked on creation)."""

    prompt: Any = field(default=None, metadata=_REQUIRED)
    judge: Any = None
    model: str | None = None
    system: str | None = None
    max_retries: int = 3
    samples: int = 1
    timeout: float | None = None

    def __post_init__(self) -> None:
        for name, convert in _CONVERSIONS.items():
            if hasattr(self, name):
                object.__setattr__(self, name, convert(getattr(self, name)))
        _check_model(self)


@dataclass(frozen=True, kw_only=True)
class JudgeOptions(ModelOptions):
    """Every judge option: :class:`ModelOptions` plus how the score is asked for and read."""

    feedback_key: str = "score"
    continuous: bool = False
    choices: Sequence[float] | None = None
    use_reasoning: bool = True
    few_shot_examples: Sequence[FewShotExample] | None = None
    output_schema: Any = None
    structured_output_kwargs: Mapping[str, Any] | None = None
    score_weighting: ScoreWeighting | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_score(self)


@dataclass(frozen=True)
class Option:
    """One judge option as the factories spell it (derived from :class:`JudgeOptions`)."""

    name: str
    default: Any
    annotation: str
    required: bool = False


OPTIONS: dict[str, Option] = {
    f.name: Option(f.name, f.default, str(f.type), bool(f.metadata.get("required")))
    for f in fields(JudgeOptions)
}
"""Every judge option by name, with the default a factory uses unless its spec says."""

JUDGE_ORDER = (
    "prompt feedback_key judge model system continuous choices use_reasoning "
    "few_shot_examples output_schema structured_output_kwargs max_retries samples "
    "score_weighting"
)
"""The order of ``create_llm_as_judge``'s parameters (0.2.2's, then the options added since;
options added later follow in their declaration order), for ``judge_factories(order=...)``."""

TRAJECTORY_ORDER = (
    "prompt model feedback_key judge continuous choices use_reasoning "
    "few_shot_examples system output_schema structured_output_kwargs max_retries "
    "samples score_weighting"
)
"""The order of the (graph) trajectory judges' parameters (agentevals', then the new options)."""


@dataclass(frozen=True)
class FactorySpec:
    """Which judge options one factory takes, with its own defaults (e.g. its prompt)."""

    name: str
    takes: tuple[str, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    is_async: bool = False
    sync_twin: str | None = None
    async_twin: str | None = None

    def __post_init__(self) -> None:
        unknown = [n for n in (*self.takes, *self.defaults) if n not in OPTIONS]
        if unknown:
            raise ValueError(f"{self.name}: unknown judge options {show(unknown)}")

    def default(self, name: str) -> Any:
        """The default of option ``name`` in this factory."""
        return self.defaults[name] if name in self.defaults else OPTIONS[name].default

    def required(self, name: str) -> bool:
        return OPTIONS[name].required and name not in self.defaults

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` keyword arguments completed with this factory's defaults.

        Unknown names and missing required options are a ``TypeError``, as in a call.
        """
        unknown = sorted(set(given) - set(self.takes))
        if unknown:
            raise TypeError(f"{self.name}() got unexpected keyword arguments {show(unknown)}")
        missing = [n for n in self.takes if self.required(n) and n not in given]
        if missing:
            raise TypeError(f"{self.name}() missing required keyword arguments {show(missing)}")
        return {name: given.get(name, self.default(name)) for name in self.takes}


FACTORIES: dict[str, FactorySpec] = {}
"""Every declared judge factory by name (filled by
:func:`~openevals._judge.declare.judge_factories` as the factory modules are imported)."""


def judge_options(
    spec: FactorySpec, values: Mapping[str, Any] | ModelOptions, **fixed: Any
) -> JudgeOptions:
    """The checked :class:`JudgeOptions` of one factory call.

    ``values`` holds the factory's options (its parameters by name, or its options object);
    only the options ``spec`` takes are read from it, the others keep their declared defaults.
    ``fixed`` sets options the factory decides itself (e.g. the RAG metrics' output schema).
    """
    if isinstance(values, ModelOptions):
        chosen: dict[str, Any] = {name: getattr(values, name) for name in spec.takes}
    else:
        chosen = {name: values[name] for name in spec.takes}
    samples = chosen.get("samples", 1)
    if chosen.get("output_schema") is not None and samples != 1 and isinstance(samples, int):
        # (Factories that set a schema themselves aggregate their samples on their own.)
        raise ValueError(
            f"`samples={samples}` votes on scores, but with `output_schema` the judge returns "
            "your structured answer, which cannot be aggregated; drop `output_schema` or use "
            "samples=1"
        )
    if chosen.get("output_schema") is not None and chosen.get("score_weighting") == "logprobs":
        # (Factories that set a schema themselves weight its scores on their own.)
        raise ValueError(
            "score_weighting='logprobs' weights boolean and `choices` scores by the "
            "probabilities of their tokens; it cannot be combined with `output_schema`"
        )
    if type(values) is JudgeOptions and not fixed and len(chosen) == len(OPTIONS):
        return values  # already checked, every option as the factory took it
    chosen.update(fixed)
    return JudgeOptions(**chosen)


# --------------------------------------------------------------------------- checks


def _choices(choices: Any) -> tuple[float, ...] | None:
    if choices is None:
        return None
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence):
        raise TypeError(f"`choices` must be a list of numbers, got {type(choices).__name__}")
    if not choices:
        raise ValueError(
            "`choices` is empty; give the allowed scores, e.g. choices=[0.0, 0.5, 1.0]"
        )
    bad = [c for c in choices if isinstance(c, bool) or not isinstance(c, (int, float))]
    if bad:
        raise TypeError(f"`choices` must hold numbers, got {show(bad[0])}")
    return tuple(float(c) for c in choices)


def _examples(examples: Any) -> tuple[dict[str, Any], ...]:
    if examples is None:
        return ()
    if isinstance(examples, (str, bytes, Mapping)) or not isinstance(examples, Sequence):
        raise TypeError("`few_shot_examples` must be a list of example dicts")
    out = []
    for i, example in enumerate(examples):
        if not isinstance(example, Mapping):
            raise TypeError(
                f"few_shot_examples[{i}] must be a dict with 'score' (and inputs/outputs/"
                f"reasoning); got {type(example).__name__}"
            )
        if "score" not in example:
            raise ValueError(f"few_shot_examples[{i}] has no 'score'")
        out.append(dict(example))
    return tuple(out)


def check_timeout(value: Any) -> float | None:
    """``timeout``: seconds (per request to the model, per code check), a finite number > 0,
    or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"`timeout` must be a number of seconds or None; got {type(value).__name__} "
            f"({show(value)})"
        )
    if not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"`timeout` must be a finite number of seconds > 0 (e.g. timeout=30); got {show(value)}"
        )
    return float(value)


def _mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"`structured_output_kwargs` must be a dict, got {type(value).__name__}")
    return dict(value)


_CONVERSIONS: dict[str, Callable[[Any], Any]] = {
    "choices": _choices,
    "few_shot_examples": _examples,
    "structured_output_kwargs": _mapping,
    "timeout": check_timeout,
}
"""Options checked and converted to their stored form before :class:`JudgeOptions` is built."""


def _check_model(o: ModelOptions) -> None:
    if o.system is not None and not isinstance(o.system, str):
        raise TypeError(f"`system` must be a string, got {type(o.system).__name__}")
    if not isinstance(o.max_retries, int) or isinstance(o.max_retries, bool) or o.max_retries < 0:
        raise ValueError(f"`max_retries` must be an integer >= 0, got {show(o.max_retries)}")
    if o.judge is None and o.model is None:
        raise ValueError(
            "pass `model` (a 'provider:model' string such as 'openai:gpt-4.1-mini') or `judge` "
            "(a LangChain chat model or an OpenAI client)"
        )
    if o.model is not None and not isinstance(o.model, str):
        raise TypeError(f"`model` must be a 'provider:model' string, got {type(o.model).__name__}")
    if isinstance(o.samples, bool) or not isinstance(o.samples, int):
        raise TypeError(f"`samples` must be an integer >= 1, got {show(o.samples)}")
    if not 1 <= o.samples <= _MAX_SAMPLES:
        raise ValueError(
            f"`samples` must be between 1 and {_MAX_SAMPLES} (how many times the judge is "
            f"asked), got {o.samples}"
        )


def _check_score(o: JudgeOptions) -> None:
    if not isinstance(o.feedback_key, str) or not o.feedback_key:
        raise ValueError(f"`feedback_key` must be a non-empty string, got {show(o.feedback_key)}")
    if o.continuous and o.choices is not None:
        raise ValueError(
            "`continuous=True` and `choices` are mutually exclusive: continuous scores are any "
            "float in [0, 1], choices restrict the score to a list; pass one of them"
        )
    if o.score_weighting is None:
        return
    if o.score_weighting != "logprobs":
        raise ValueError(
            f"`score_weighting` must be None or 'logprobs', got {show(o.score_weighting)}"
        )
    if o.continuous:
        raise ValueError(
            "score_weighting='logprobs' weights boolean and `choices` scores by the "
            "probabilities of their tokens; it cannot be combined with `continuous=True`"
        )
    if o.choices is not None:
        check_weighted_choices(o.choices, "`choices`")


def check_weighted_choices(choices: Sequence[float], what: str) -> None:
    """``score_weighting="logprobs"`` reads each choice as one token: whole numbers 0-999."""
    bad = [c for c in choices if not c.is_integer() or not 0 <= c <= _MAX_WEIGHTED_CHOICE]
    if bad:
        raise ValueError(
            f"score_weighting='logprobs' needs {what} that are whole numbers from 0 to "
            f"{_MAX_WEIGHTED_CHOICE} (each written as one token), got {show(bad)}; use e.g. "
            "choices=[1, 2, 3, 4, 5]"
        )


def check_async_use(
    spec: FactorySpec, *, async_prompt: bool, async_client: bool, what: str = "`prompt`"
) -> None:
    """The sync/async rules, checked when the evaluator is created.

    A sync evaluator cannot await: an async prompt function or an ``AsyncOpenAI`` client is a
    ``TypeError`` naming the async twin. An async evaluator accepts both kinds of each.
    """
    if spec.is_async:
        return
    twin = spec.async_twin or "the async factory"
    if async_prompt:
        raise TypeError(
            f"{what} is an async function, which the sync {spec.name} cannot await; use {twin} "
            "for async prompts"
        )
    if async_client:
        raise TypeError(
            f"`judge` is an async OpenAI client (AsyncOpenAI); use {twin}, or pass "
            f"openai.OpenAI() to {spec.name}"
        )
