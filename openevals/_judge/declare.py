"""A judge family declared once: its public ``create_x`` and ``create_async_x`` are derived.

A family gives its options type (:class:`~openevals._judge.options.ModelOptions`,
:class:`~openevals._judge.options.JudgeOptions` or a subclass adding the family's own options),
its defaults (prompt, feedback key), the order of its parameters, and one builder
``build(spec, options)`` that returns the evaluator for a sync or an async
:class:`~openevals._judge.options.FactorySpec`. :func:`judge_factories` then makes, at import,
both public factories:

* their real signature (``__signature__``, ``__name__``, ``__qualname__``, ``__module__``,
  ``__doc__``): every option keyword-only, with its annotation and default, so ``help()``,
  IDEs, the signature snapshots and the CLI registry see them;
* their type for mypy: the options type's constructor (a ``ParamSpec``), returning the kinds
  the family names;
* their :class:`FactorySpec` pair, registered in
  :data:`~openevals._judge.options.FACTORIES`.

A call checks its keywords against the signature, builds the options object (which checks
every option) and hands it to the builder; nothing is derived per call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from typing import Any, ParamSpec, TypeVar, cast

from openevals._declare import present
from openevals._judge.options import FACTORIES, OPTIONS, FactorySpec, ModelOptions
from openevals._repr import show
from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator

P = ParamSpec("P")
Opts = TypeVar("Opts", bound=ModelOptions)
S = TypeVar("S")
A = TypeVar("A")

_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def as_evaluator(evaluator: Any) -> SimpleEvaluator:
    """The kind of a sync judge factory's result (see :func:`judge_factories`)."""
    return cast(SimpleEvaluator, evaluator)


def as_async_evaluator(evaluator: Any) -> SimpleAsyncEvaluator:
    """The kind of an async judge factory's result (see :func:`judge_factories`)."""
    return cast(SimpleAsyncEvaluator, evaluator)


EVALUATORS = (as_evaluator, as_async_evaluator)
"""The kinds of most judge families: a :class:`SimpleEvaluator` and its async twin."""


def _parameter(
    option: Field[Any], defaults: Mapping[str, Any], annotations: Mapping[str, str]
) -> Any:
    """The keyword-only parameter of ``option``: the family's default, else the field's (none
    for a required one); its annotation the field's unless ``annotations`` overrides it."""
    if option.name in defaults:
        default = defaults[option.name]
    elif option.default is MISSING or option.metadata.get("required"):
        default = inspect.Parameter.empty
    else:
        default = option.default
    annotation = annotations.get(option.name, str(option.type))
    return inspect.Parameter(option.name, _KEYWORD, default=default, annotation=annotation)


def _factory(
    spec: FactorySpec,
    signature: inspect.Signature,
    options: Callable[..., Any],
    build: Callable[[FactorySpec, Any], Any],
    kind: Callable[[Any], Any],
    doc: str,
) -> Callable[..., Any]:
    """One public factory: keywords checked against ``signature``, then ``build``."""
    params = signature.parameters
    required = tuple(n for n, p in params.items() if p.default is inspect.Parameter.empty)
    defaults = {n: p.default for n, p in params.items() if n not in required}

    def factory(**given: Any) -> Any:
        unknown = [name for name in given if name not in params]
        if unknown:
            raise TypeError(
                f"{spec.name}() got an unexpected keyword argument {show(unknown[0])}; it takes "
                f"{', '.join(params)}"
            )
        missing = [name for name in required if name not in given]
        if missing:
            raise TypeError(f"{spec.name}() missing required keyword argument {show(missing[0])}")
        return kind(build(spec, options(**{**defaults, **given})))

    present(
        factory,
        name=spec.name,
        module=build.__module__,
        doc=doc,
        signature=signature,
        annotations={
            **{n: p.annotation for n, p in params.items()},
            "return": signature.return_annotation,
        },
    )
    return factory


def judge_factories(
    name: str,
    options: Callable[P, Opts],
    build: Callable[[FactorySpec, Opts], object],
    kinds: tuple[Callable[[Any], S], Callable[[Any], A]],
    *,
    order: str | tuple[str, ...],
    doc: str,
    leaves_out: tuple[str, ...] = (),
    async_annotations: Mapping[str, str] | None = None,
    **defaults: Any,
) -> tuple[Callable[P, S], Callable[P, A]]:
    """The public ``name`` factory of a judge family and its async twin ``create_async_...``.

    ``options`` is the family's options type (its fields are the factories' parameters);
    ``order`` (names, or one string of them separated by spaces) the order of the parameters
    0.2.2 and the signature snapshots fix, the other fields following in their declaration
    order (so a new option lands last, where the compatibility check allows it);
    ``leaves_out`` fields the family does not take; ``defaults`` the family's own defaults
    (a subclass may instead redeclare the field with its default). ``build(spec, options)`` makes the evaluator of a sync or async
    ``spec``; ``kinds`` turn it into the declared result types (their return annotations are
    the signatures'). ``async_annotations`` overrides an annotation in the async twin.
    """
    if not isinstance(options, type):
        raise TypeError(f"{name}: the options type must be a dataclass, got {show(options)}")
    order = tuple(order.split()) if isinstance(order, str) else order
    declared = {f.name: f for f in fields(options)}
    unknown = [n for n in (*order, *leaves_out, *defaults) if n not in declared]
    if unknown:
        raise ValueError(f"{name}: {show(unknown)} are not fields of {options.__name__}")
    names = tuple(n for n in (*order, *declared) if n not in leaves_out)
    names = tuple(dict.fromkeys(names))  # ``order`` first, then the other fields
    async_name = name.replace("create_", "create_async_", 1)
    takes = tuple(n for n in names if n in OPTIONS)
    own = {n: declared[n].default for n in takes if declared[n].default is not OPTIONS[n].default}
    own.update((n, defaults[n]) for n in takes if n in defaults)
    specs = (
        FactorySpec(name, takes, own, is_async=False, async_twin=async_name),
        FactorySpec(async_name, takes, own, is_async=True, sync_twin=name),
    )
    FACTORIES.update((spec.name, spec) for spec in specs)
    made = []
    for spec, kind in zip(specs, kinds, strict=True):
        returns = kind.__annotations__["return"]
        overrides = (async_annotations or {}) if spec.is_async else {}
        parameters = [_parameter(declared[n], defaults, overrides) for n in names]
        signature = inspect.Signature(parameters, return_annotation=str(returns))
        text = (
            f"The async twin of :func:`{name}`: the same options, an evaluator to await.\n\n{doc}"
            if spec.is_async
            else doc
        )
        made.append(_factory(spec, signature, options, cast(Any, build), kind, text))
    sync, asyn = made
    return cast(Callable[P, S], sync), cast(Callable[P, A], asyn)
