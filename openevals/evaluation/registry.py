"""Evaluator names for the CLI (and for ``evaluate(data, ["exact_match", ...])``).

A spec is ``NAME[:option=value...]``. Values are parsed as JSON-ish scalars (``true``, ``3``,
``0.5``, ``none``, ``[1, 2]``, ``{"a": "b"}``), anything else is a string; a segment without ``=``
continues the previous value, so ``embedding_similarity:model=local:all-MiniLM-L6-v2`` works.

Every spec also accepts ``inputs=PATH``, ``outputs=PATH`` and ``reference_outputs=PATH`` to feed an
argument from another (dotted) row field, e.g. ``recall:k=3:outputs=outputs.retrieved``, and
``name=...`` to rename it in results.

Names: ``exact_match``, ``levenshtein_distance``, ``json_match`` (``aggregator``,
``list_aggregator``, ``exclude_keys``, ``list_match_mode``, ``rubric`` + ``--model``),
``embedding_similarity`` (``model``, default the offline ``local:all-MiniLM-L6-v2``;
``algorithm``), ``trajectory_match`` (``mode``, ``tool_args_match_mode``), the retrieval metrics
``recall``, ``precision``, ``hit_rate``, ``reciprocal_rank`` (``mrr``), ``average_precision``
(``map``), ``ndcg`` (``k``, ``mode``, ``denominator``, ``normalize_by``, ``key``,
``empty_reference``, ``feedback_key``), the reference text metrics ``bleu`` (``tokenize``,
``lowercase``, ``smooth_method``, ...), ``chrf``, ``chrf++``, ``ter`` and ``rouge`` (``rouge_types``
as ``rouge1,rougeL``, ``use_stemmer``; the ``[text]`` extra), and ``llm:<PROMPT_CONSTANT>`` (``feedback_key``,
``continuous``, ``choices``, ``use_reasoning``, ``system``; the model comes from ``--model`` or a
``model=`` option).
"""

from __future__ import annotations

import importlib
import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from typing_extensions import Unpack

from openevals._contract import info_of
from openevals._repr import show
from openevals.evaluation.spec import EvaluatorSpec

__all__ = [
    "BATCH_METRIC_NAMES",
    "EVALUATOR_NAMES",
    "NOT_FROM_TEXT",
    "SpecError",
    "build_batch_metric",
    "build_evaluator",
    "factory_options",
    "parse_spec",
]

_FIELD_OPTIONS = ("inputs", "outputs", "reference_outputs")


class SpecError(ValueError):
    """An evaluator spec that cannot be built (unknown name, bad option)."""


@dataclass(frozen=True)
class ParsedSpec:
    name: str
    positional: str | None
    options: dict[str, Any]
    text: str


def _parse_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    stripped = text.strip()
    if stripped[:1] in ("[", "{", '"'):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        return float(stripped)
    except ValueError:
        return text


def parse_spec(text: str) -> ParsedSpec:
    """Split ``NAME[:POSITIONAL][:option=value...]`` into its parts (values still raw strings)."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"an evaluator spec must be a non-empty string; got {show(text)}")
    parts = text.strip().split(":")
    name = parts[0].strip()
    positional: str | None = None
    raw: list[list[str]] = []
    for segment in parts[1:]:
        if "=" in segment:
            key, _, value = segment.partition("=")
            raw.append([key.strip(), value])
        elif raw:
            raw[-1][1] += ":" + segment
        elif positional is None:
            positional = segment.strip()
        else:
            positional += ":" + segment
    options: dict[str, Any] = {}
    for key, value in raw:
        if not key:
            raise SpecError(
                f"evaluator spec {show(text)} has an option without a name ({'=' + value})"
            )
        if key in options:
            raise SpecError(f"evaluator spec {show(text)} sets option {show(key)} twice")
        options[key] = value
    return ParsedSpec(name=name, positional=positional, options=options, text=text.strip())


# --------------------------------------------------------------------------- builders

Builder = Callable[[ParsedSpec, dict[str, Any], "str | None"], Callable[..., Any]]

NOT_FROM_TEXT = frozenset(
    {
        "prompt",  # the positional part of ``llm:<PROMPT_CONSTANT>``
        "judge",  # a client or chat model object: use ``model=provider:model``
        "embeddings",  # an embeddings object: use ``model=``
        "few_shot_examples",
        "output_schema",
        "structured_output_kwargs",
        "tool_args_match_overrides",  # functions
    }
)
"""Factory parameters a spec cannot set: their values are objects, not text."""


def factory_options(factory: Callable[..., Any]) -> tuple[str, ...] | None:
    """The options a spec may give ``factory``: its keyword parameters (also those declared by a
    ``**kwargs: Unpack[SomeTypedDict]``), minus :data:`NOT_FROM_TEXT`; ``None`` when it takes
    any keyword (a plain ``**kwargs``), so the factory itself judges the options."""
    names: list[str] = []
    for param in inspect.signature(factory).parameters.values():
        if param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.append(param.name)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            declared = _unpacked_keys(factory, param.name)
            if declared is None:
                return None
            names.extend(declared)
    return tuple(n for n in names if n not in NOT_FROM_TEXT)


_UNPACK = {Unpack, getattr(typing, "Unpack", Unpack)}


def _unpacked_keys(factory: Callable[..., Any], name: str) -> list[str] | None:
    """The keys of ``**name: Unpack[TD]``, or ``None`` for an undeclared ``**name``."""
    try:
        hint = typing.get_type_hints(factory).get(name)
    except Exception:  # annotations that cannot be evaluated here: treat as undeclared
        return None
    if typing.get_origin(hint) not in _UNPACK:
        return None
    return list(getattr(typing.get_args(hint)[0], "__annotations__", {}))


def _no_positional(spec: ParsedSpec) -> None:
    if spec.positional is not None:
        raise SpecError(
            f"{show(spec.name)} takes only option=value settings; got {show(spec.positional)} in "
            f"{show(spec.text)}"
        )


def _only(spec: ParsedSpec, options: dict[str, Any], allowed: tuple[str, ...] | None) -> None:
    if allowed is None:
        return
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        accepted = ", ".join(allowed) if allowed else "none"
        raise SpecError(
            f"{show(spec.name)} does not take option(s) {show(unknown)} (in {show(spec.text)}); "
            f"accepted: {accepted}"
        )


def _evaluator(module: str, attr: str) -> Builder:
    """A builder for an evaluator that takes no options (exact match, Levenshtein)."""

    def build(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
        _no_positional(spec)
        _only(spec, options, ())
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]

    return build


def _factory(module: str, attr: str, **defaults: Any) -> Builder:
    """A builder calling factory ``module.attr`` with the spec's options (over ``defaults``)."""

    def build(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
        factory = getattr(importlib.import_module(module), attr)
        _no_positional(spec)
        _only(spec, options, factory_options(factory))
        return factory(**{**defaults, **_comma_list(options, "rouge_types")})  # type: ignore[no-any-return]

    return build


def _comma_list(options: dict[str, Any], name: str) -> dict[str, Any]:
    """``options`` with option ``name`` given as ``a,b,c`` text made a list."""
    value = options.get(name)
    if not isinstance(value, str):
        return options
    return {**options, name: [item.strip() for item in value.split(",") if item.strip()]}


def _json_match(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
    from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator

    _no_positional(spec)
    _only(spec, options, factory_options(create_json_match_evaluator))
    opts = dict(_comma_list(options, "exclude_keys"))
    if opts.get("rubric") is not None:
        opts.setdefault("model", model)
        if opts["model"] is None:
            raise SpecError(f"{show(spec.text)} grades rubric keys with an LLM: pass --model")
        return create_async_json_match_evaluator(**opts)
    return create_json_match_evaluator(**opts)


def _embedding(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
    from openevals.embeddings import DEFAULT_LOCAL_MODEL
    from openevals.string.embedding_similarity import create_embedding_similarity_evaluator

    _no_positional(spec)
    _only(spec, options, factory_options(create_embedding_similarity_evaluator))
    opts = dict(options)
    opts.setdefault("model", DEFAULT_LOCAL_MODEL)
    return create_embedding_similarity_evaluator(**opts)


def _trajectory(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
    from openevals.trajectory import create_trajectory_match_evaluator

    opts = dict(options)
    if spec.positional is not None:
        opts.setdefault("mode", spec.positional)
    allowed = factory_options(create_trajectory_match_evaluator)
    _only(spec, opts, None if allowed is None else ("mode", *allowed))
    if "mode" in opts:
        if "trajectory_match_mode" in opts:
            raise SpecError(f"{show(spec.text)}: give `mode` or `trajectory_match_mode`, not both")
        opts["trajectory_match_mode"] = opts.pop("mode")
    return create_trajectory_match_evaluator(**opts)


_RETRIEVAL = {
    "recall": "create_recall_evaluator",
    "precision": "create_precision_evaluator",
    "hit_rate": "create_hit_rate_evaluator",
    "reciprocal_rank": "create_reciprocal_rank_evaluator",
    "average_precision": "create_average_precision_evaluator",
    "ndcg": "create_ndcg_evaluator",
}
_ALIASES = {
    "mrr": "reciprocal_rank",
    "map": "average_precision",
    "levenshtein": "levenshtein_distance",
}


_TEXT = {
    "bleu": "create_bleu_evaluator",
    "chrf": "create_chrf_evaluator",
    "chrf++": "create_chrf_evaluator",
    "ter": "create_ter_evaluator",
    "rouge": "create_rouge_evaluator",
}


BATCH_METRIC_NAMES: tuple[str, ...] = tuple(sorted(_TEXT))
"""Every name :func:`build_batch_metric` accepts."""


def build_batch_metric(text: str) -> Callable[..., Any]:
    """The dataset-level metric named by spec ``text`` (``bleu``, ``chrf``, ``chrf++``, ``ter``,
    ``rouge``, with ``:option=value`` settings, e.g. ``bleu:tokenize=intl``): the corpus score of
    the whole run (:func:`openevals.text.reference_batch_metric`). Raises :class:`SpecError`."""
    spec = parse_spec(text)
    if spec.name not in _TEXT:
        raise SpecError(
            f"unknown batch metric {show(spec.name)} in {show(spec.text)}; available: "
            f"{', '.join(BATCH_METRIC_NAMES)}"
        )
    _no_positional(spec)
    options = _comma_list({k: _parse_value(v) for k, v in spec.options.items()}, "rouge_types")
    from openevals.text import reference_batch_metric

    try:
        return reference_batch_metric(spec.name, **options)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"cannot build batch metric {show(spec.text)}: {exc}") from None


def _prompt_key(constant: str) -> str:
    key = constant[: -len("_PROMPT")] if constant.endswith("_PROMPT") else constant
    return key.lower() or "score"


def _llm(spec: ParsedSpec, options: dict[str, Any], model: str | None) -> Callable[..., Any]:
    from openevals.llm import create_async_llm_as_judge

    opts = dict(options)
    constant = spec.positional or opts.pop("prompt", None)
    if not constant:
        raise SpecError(
            f"{show(spec.text)}: name the prompt constant, e.g. llm:CORRECTNESS_PROMPT "
            "(see openevals.prompts)"
        )
    _only(spec, opts, factory_options(create_async_llm_as_judge))
    from openevals import prompts

    prompt = getattr(prompts, str(constant), None) if str(constant) in prompts.__all__ else None
    if not isinstance(prompt, str):
        raise SpecError(
            f"{show(spec.text)}: unknown prompt constant {show(constant)}; available: "
            f"{', '.join(prompts.__all__)}"
        )
    chosen = opts.pop("model", None) or model
    if not chosen:
        raise SpecError(f"{show(spec.text)} needs a judge model: pass --model provider:model")
    opts.setdefault("feedback_key", _prompt_key(str(constant)))
    return create_async_llm_as_judge(prompt=prompt, model=str(chosen), **opts)


_BUILDERS: dict[str, Builder] = {
    "exact_match": _evaluator("openevals.exact", "exact_match"),
    "levenshtein_distance": _evaluator("openevals.string.levenshtein", "levenshtein_distance"),
    "json_match": _json_match,
    "embedding_similarity": _embedding,
    "trajectory_match": _trajectory,
    "llm": _llm,
    **{name: _factory("openevals.rag", factory) for name, factory in _RETRIEVAL.items()},
    **{name: _factory("openevals.text.reference", factory) for name, factory in _TEXT.items()},
    # chrF++ is chrF with word bigrams
    "chrf++": _factory("openevals.text.reference", "create_chrf_evaluator", word_order=2),
}

EVALUATOR_NAMES: tuple[str, ...] = tuple(sorted([*_BUILDERS, *_ALIASES]))
"""Every name :func:`build_evaluator` accepts."""


def build_evaluator(text: str, *, model: str | None = None) -> EvaluatorSpec:
    """Build the evaluator named by spec ``text`` (see the module docstring).

    ``model`` is the default judge model for ``llm:...`` (and rubric ``json_match``) specs.
    Raises :class:`SpecError` (a ``ValueError``) for unknown names and bad options.
    """
    spec = parse_spec(text)
    canonical = _ALIASES.get(spec.name, spec.name)
    builder = _BUILDERS.get(canonical)
    if builder is None:
        raise SpecError(
            f"unknown evaluator {show(spec.name)} in {show(spec.text)}; available: "
            f"{', '.join(EVALUATOR_NAMES)}"
        )
    options = {key: _parse_value(value) for key, value in spec.options.items()}
    fields = {key: str(options.pop(key)) for key in _FIELD_OPTIONS if key in options}
    name = options.pop("name", None)
    try:
        evaluator = builder(spec, options, model)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(f"cannot build evaluator {show(spec.text)}: {exc}") from None
    return EvaluatorSpec(
        evaluator=evaluator,
        name=str(name) if name is not None else spec.text,
        fields=fields or None,
        inline=getattr(info_of(evaluator), "pure", False),
    )
