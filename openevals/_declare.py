"""Public factories derived from one declared factory, so that a family states its options once.

A family spells out one factory, usually the sync ``create_x``: its signature (options, defaults,
annotations) and docstring are the declaration. :func:`async_twin` derives ``create_async_x``
from it, and :func:`derive` any other factory with the same options:

* the derived factory has the declaration's real signature (``__signature__`` and
  ``__annotations__``, with its own return annotation), its own ``__name__``, ``__qualname__``,
  ``__module__`` and ``__doc__``, so ``help()``, IDEs and the signature snapshot see every option
  (``__wrapped__`` is the declaration, or a declared dataclass's ``__init__``:
  ``typing.get_type_hints`` resolves the annotations in the declaring module, which must bind
  the return annotation's names at run time);
* it is typed ``Callable[P, R]`` with ``P`` the declaration's parameters (``ParamSpec``), so
  ``mypy --strict`` checks every call of it as it checks calls of the declaration;
* a call binds its arguments to the declaration's signature (a wrong or missing option raises the
  ``TypeError`` a call of the declaration would), fills in the defaults and hands ``build`` the
  options by name.

Where the two forms differ (an awaited sandbox or embedding call, concurrent judge requests), the
family writes one builder taking ``is_async`` and passes ``lambda options: build(options,
is_async=True)``; :func:`evaluator_for` is the last step of such a builder.

The signature is read once, at import. A call of a derived factory by keywords costs one dict of
its options (any other call goes through ``Signature.bind``), and the evaluators it makes are
those the family's builder makes: their per-call path is the builder's alone.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from typing_extensions import Unpack

from openevals._contract import EvaluatorInfo, How, make_async_evaluator, make_evaluator

_P = ParamSpec("_P")
_R = TypeVar("_R")


def derive(
    declared: Callable[_P, object],
    build: Callable[[dict[str, Any]], _R],
    *,
    name: str,
    returns: str,
    doc: str,
    module: str | None = None,
    drop: int = 0,
) -> Callable[_P, _R]:
    """A factory ``name`` taking the options of ``declared``: ``build(options)`` makes its result
    (``options``: every option by name, defaults filled in, a new dict per call that ``build``
    may consume).

    ``returns`` is the derived factory's return annotation as text (the form
    ``from __future__ import annotations`` gives), ``doc`` its docstring, ``module`` its
    ``__module__`` (default: the declaration's). ``drop``: how many leading parameters of
    ``declared`` (its data, e.g. ``outputs``) the factory leaves out; the caller then types the
    result itself (``Concatenate`` strips them).

    ``declared`` may be a dataclass: its fields (inherited ones included, in the constructor's
    order) are the options, so several factories can share option declarations by inheritance."""
    signature = inspect.signature(declared)
    signature = signature.replace(parameters=list(signature.parameters.values())[drop:])
    parameters = signature.parameters.values()
    defaults = {p.name: p.default for p in parameters}
    required = {p.name for p in parameters if p.default is p.empty}
    by_name_only = all(p.kind is p.KEYWORD_ONLY for p in parameters)

    def factory(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if by_name_only and not args and required <= kwargs.keys() <= defaults.keys():
            # The common call, with the options bind would give, without its cost.
            return build({name: kwargs.get(name, default) for name, default in defaults.items()})
        return build(bind(signature, name, args, kwargs))  # any other call

    annotations = {p.name: p.annotation for p in parameters if p.annotation is not p.empty}
    present(
        factory,
        name=name,
        module=declared.__module__ if module is None else module,
        doc=doc,
        signature=signature.replace(return_annotation=returns),
        annotations={**annotations, "return": returns},
    )
    # get_type_hints reads the globals of the declaration (a dataclass's: its generated __init__'s)
    wrapped = vars(declared)["__init__"] if isinstance(declared, type) else declared
    factory.__wrapped__ = wrapped  # type: ignore[attr-defined]
    return factory


def async_entry(
    sync: Callable[_P, _R], body: Callable[..., Awaitable[_R]], *, name: str, doc: str
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """``async def name(...)`` with the signature of the run function ``sync``: it binds a call's
    arguments as ``sync`` would (``TypeError`` for a missing or unknown one) and awaits
    ``body(**arguments)``.

    The run functions (``evaluate``, ``calibrate``, ``cross_validate``, ``audit_judge``,
    ``compare``, ``sequential_compare``, ``run_multiturn_simulation``) keep an explicit
    signature, written once on the sync function; the sync function passes its options by
    name, once, to the one function that builds its options object (``RunOptions.from_call``,
    or a plan's ``_plan_of_call``), and ``body`` hands the same names to the same function.
    Plans use :func:`openevals.evaluation.plans.async_plan_entry`, which builds on this."""
    signature = inspect.signature(sync)

    async def twin(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await body(**bind(signature, name, args, kwargs))

    present(
        twin,
        name=name,
        module=sync.__module__,
        doc=doc,
        signature=signature,
        annotations=dict(sync.__annotations__),
    )
    return twin


def bind(
    signature: inspect.Signature, name: str, args: Any, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """A call's arguments bound to ``signature``, defaults filled in; a wrong or missing one raises
    the ``TypeError`` a call of a plain function would, naming it: ``name() got an unexpected
    keyword argument 'x'``."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{name}() {exc}") from None
    bound.apply_defaults()
    return bound.arguments


def present(
    function: Callable[..., Any],
    *,
    name: str,
    module: str,
    doc: str,
    signature: inspect.Signature,
    annotations: dict[str, Any],
) -> None:
    """Give a derived ``function`` its public face: name, module, docstring, signature."""
    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = doc
    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__annotations__ = annotations


def async_twin(
    declared: Callable[_P, object],
    build: Callable[[dict[str, Any]], _R],
    *,
    returns: str,
    note: str = "",
) -> Callable[_P, _R]:
    """``create_async_x`` for the declared ``create_x``: the same options, ``build`` makes the
    async evaluator. Its docstring is "Async twin of create_x" (with ``note``, e.g. what the async
    form does differently) followed by the declaration's docstring."""
    sync_name = declared.__name__
    if not sync_name.startswith("create_"):
        raise ValueError(f"async_twin derives from a create_* factory; got {sync_name}")
    head = f"Async twin of :func:`{sync_name}`{f' ({note})' if note else ''}."
    return derive(
        declared,
        build,
        name="create_async_" + sync_name.removeprefix("create_"),
        returns=returns,
        doc=f"{head}\n\n{inspect.getdoc(declared) or ''}".rstrip(),
    )


def evaluator_for(
    is_async: bool, scorer: Callable[..., Any], info: EvaluatorInfo, **how: Unpack[How]
) -> Any:
    """``make_evaluator(scorer, info, **how)``, or with ``is_async``
    ``make_async_evaluator(scorer, info.as_async(), **how)``: the one place a builder shared by a
    sync factory and its twin chooses the form (``how``: ``passes``, ``name``, ...)."""
    if is_async:
        return make_async_evaluator(scorer, info.as_async(), **how)
    return make_evaluator(scorer, info, **how)
