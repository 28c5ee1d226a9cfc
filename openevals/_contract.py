"""The evaluator contract: the one place where a scorer becomes a sync or async evaluator.

Every evaluator this package makes is built here. A family writes a *scorer* — a plain function
(or coroutine function) that computes a score from keyword arguments and returns whatever
:func:`openevals.utils._run_evaluator` accepts (a bool or number, ``(score, comment)``,
``(score, comment, metadata)``, a dict of feedback key -> value, a list of result dicts) — plus an
:class:`EvaluatorInfo` that describes it. :func:`make_evaluator` / :func:`make_async_evaluator`
then return the public evaluator callable, which

* checks its arguments (``prepare``), before anything is scored;
* runs the scorer through ``_run_evaluator`` (LangSmith tracing when switched on, feedback inside a
  LangSmith pytest case, result mapping under the info's feedback key);
* carries its info as ``evaluator.openevals_info``, read with :func:`info_of`.

The batch runner, the CLI and the report read only :class:`EvaluatorInfo` (never a module's
private attributes) to name an evaluator, label its model, decide whether it can run inline on
the event loop, and account for judge calls.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, TypeVar, cast

from typing_extensions import Unpack

from openevals._repr import show
from openevals.types import EvaluatorResult, SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import (
    _arun_evaluator_untyped,
    _ascore_untraced,
    _needs_langsmith,
    _run_evaluator_untyped,
    _score_untraced,
)

INFO_ATTRIBUTE = "openevals_info"
"""The attribute under which every evaluator of this package carries its :class:`EvaluatorInfo`."""

F = TypeVar("F", bound=Callable[..., Any])

Prepare = Callable[[dict[str, Any]], dict[str, Any]]
"""Checks (and may rewrite) one call's keyword arguments before scoring; raises on bad input."""


@dataclass(frozen=True)
class EvaluatorInfo:
    """What the runner, the CLI and reports may know about an evaluator.

    Attributes:
        run_name: the LangSmith run name, and the evaluator's default name in batch runs.
        feedback_keys: the feedback keys its results carry; the first is the key a scalar score is
            reported under. Evaluators whose keys depend on the data (e.g. a JSON match that
            reports one key per field) list the keys known at creation, possibly none.
        model: a label for the judge model (``"gpt-4.1-mini"``), or ``None`` when no model is
            called or it cannot be named without resolving anything.
        pure: scoring is deterministic, cheap and does no I/O, so a batch runner may call it
            inline on the event loop instead of in a worker thread.
        linear: with ``pure``, scoring takes time linear in the size of its input (an equality
            check, not an alignment), so it stays inline even when the run has an
            ``eval_timeout`` (which moves every other pure evaluator under the limit).
        judge: scoring calls an LLM judge (so judge caches, retries and token usage apply).
        is_async: the evaluator is a coroutine function.
        score_type: for a judge that answers with a score, what kind: ``"boolean"``,
            ``"continuous"`` or ``"choices"`` (``None`` for structured answers and evaluators that
            do not say). Calibration checks human labels against it before any model call.
        choices: the allowed scores when ``score_type`` is ``"choices"``.
        twin: for a sync evaluator, an async evaluator with the same parameters that gives the
            same results without blocking a thread (a judge that owns its client), which a batch
            runner may await on its event loop instead; ``None`` when there is none.
    """

    run_name: str
    feedback_keys: tuple[str, ...] = ()
    model: str | None = None
    pure: bool = False
    linear: bool = False
    judge: bool = False
    is_async: bool = False
    score_type: Literal["boolean", "continuous", "choices"] | None = None
    choices: tuple[float, ...] = ()
    twin: Callable[..., Awaitable[Any]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.run_name, str) or not self.run_name:
            raise ValueError(
                f"EvaluatorInfo.run_name must be a non-empty str; got {show(self.run_name)}"
            )
        if isinstance(self.feedback_keys, str) or not all(
            isinstance(k, str) and k for k in self.feedback_keys
        ):
            raise ValueError(
                "EvaluatorInfo.feedback_keys must be a tuple of non-empty strings; "
                f"got {show(self.feedback_keys)}"
            )
        if self.score_type not in (None, "boolean", "continuous", "choices"):
            raise ValueError(
                "EvaluatorInfo.score_type must be 'boolean', 'continuous', 'choices' or None; "
                f"got {show(self.score_type)}"
            )
        if bool(self.choices) != (self.score_type == "choices"):
            raise ValueError("EvaluatorInfo.choices is given exactly when score_type is 'choices'")
        if self.pure and self.judge:
            raise ValueError("EvaluatorInfo: an evaluator that calls a judge cannot be pure")
        if self.twin is not None and (self.is_async or not callable(self.twin)):
            raise ValueError("EvaluatorInfo.twin is an async callable, given for sync evaluators")

    @property
    def feedback_key(self) -> str:
        """The key a scalar score is reported under (the first feedback key, else the run name)."""
        return self.feedback_keys[0] if self.feedback_keys else self.run_name

    def as_async(self) -> EvaluatorInfo:
        """The info of this evaluator's async twin: ``is_async`` set, ``pure`` cleared (an async
        evaluator is awaited on the event loop anyway, so "run it inline" says nothing)."""
        return replace(self, is_async=True, pure=False, twin=None)


def attach_info(fn: F, info: EvaluatorInfo) -> F:
    """Record ``info`` on ``fn`` (an evaluator callable) and return ``fn``."""
    setattr(fn, INFO_ATTRIBUTE, info)
    return fn


def unwrap(evaluator: Any) -> tuple[Any, list[functools.partial[Any]]]:
    """The callable inside any ``functools.partial`` wrappers of ``evaluator``, and those
    wrappers, outermost first. The one place the package looks through ``partial``."""
    target, partials = evaluator, []
    while isinstance(target, functools.partial):
        partials.append(target)
        target = target.func
    return target, partials


def attach_pair_batch(evaluator: Any, scorer: Callable[..., Any], feedback_key: str) -> None:
    """Give a pure evaluator of ``outputs`` and ``reference_outputs`` a ``batch`` form (the batch
    runner's columnar path): ``evaluator.batch(outputs, reference_outputs)`` scores many rows in
    one call, one result per row, equal to a per-row call's, in order. One bad row raises for the
    whole call; lists of different lengths raise ``ValueError``."""
    name = getattr(evaluator, "__name__", feedback_key)

    def batch(outputs: Sequence[Any], reference_outputs: Sequence[Any]) -> list[dict[str, Any]]:
        if len(outputs) != len(reference_outputs):
            raise ValueError(
                f"{name}.batch needs as many outputs as reference_outputs; got {len(outputs)} "
                f"and {len(reference_outputs)}"
            )
        return [
            {
                "key": feedback_key,
                "score": scorer(outputs=o, reference_outputs=r),
                "comment": None,
                "metadata": None,
            }
            for o, r in zip(outputs, reference_outputs, strict=True)
        ]

    setattr(evaluator, "batch", batch)  # noqa: B010 (an attribute of a function object)


def info_of(evaluator: Any) -> EvaluatorInfo | None:
    """The :class:`EvaluatorInfo` of an evaluator of this package, or ``None`` for foreign ones.

    ``functools.partial`` wrappers are looked through, so ``partial(create_...(), ...)`` keeps
    its description.
    """
    info = getattr(unwrap(evaluator)[0], INFO_ATTRIBUTE, None)
    return info if isinstance(info, EvaluatorInfo) else None


def is_async_callable(evaluator: Any) -> bool:
    """Whether calling ``evaluator`` returns an awaitable: its info says so, or (for a foreign
    callable) it is a coroutine function or an object with an ``async __call__``. Partials are
    looked through. The one place the package decides async-ness of an evaluator."""
    target = unwrap(evaluator)[0]
    info = getattr(target, INFO_ATTRIBUTE, None)
    if isinstance(info, EvaluatorInfo):
        return info.is_async
    if inspect.iscoroutinefunction(target):
        return True
    call = getattr(target, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


_GENERIC_NAMES = frozenset(
    {"evaluator", "_evaluator", "<lambda>", "wrapper", "inner", "scorer", "_scorer", "fn"}
)


def display_name(evaluator: Any) -> str:
    """The name an evaluator goes by in results: its ``__name__`` (without leading underscores)
    unless that is generic (``evaluator``, ``<lambda>``, ...), else its info's run name."""
    target = unwrap(evaluator)[0]
    name = getattr(target, "__name__", None)
    if isinstance(name, str) and name not in _GENERIC_NAMES:
        return name.lstrip("_") or name
    info = info_of(target)
    if info is not None:
        return info.run_name
    if isinstance(name, str):
        return name
    return type(target).__name__


def async_twin_of(evaluator: Any) -> Callable[..., Awaitable[Any]] | None:
    """The async twin of a sync evaluator of this package (see :attr:`EvaluatorInfo.twin`), with
    the arguments of any ``functools.partial`` around it bound the same way; else ``None``."""
    target, partials = unwrap(evaluator)
    info = getattr(target, INFO_ATTRIBUTE, None)
    if not isinstance(info, EvaluatorInfo) or info.twin is None:
        return None
    twin: Callable[..., Awaitable[Any]] = info.twin
    for wrapper in reversed(partials):
        twin = functools.partial(twin, *wrapper.args, **wrapper.keywords)
    return twin


class How(TypedDict, total=False):
    """How :func:`make_evaluator` / :func:`make_async_evaluator` build an evaluator: the options
    after ``scorer`` and ``info`` (see :func:`make_evaluator`), all optional."""

    prepare: Prepare | None
    passes: Sequence[str] | None
    raw: bool
    name: str | None
    paired: bool
    returns: str | None
    doc: str | None
    module: str | None
    signature: Callable[..., Any] | None


def _named(fn: F, info: EvaluatorInfo, how: How) -> F:
    fn.__name__ = fn.__qualname__ = how.get("name") or "evaluator"
    if (signature := how.get("signature")) is not None:
        # Callers that inspect parameter names (LangSmith passes `runs` to comparative
        # evaluators only when the signature names it) see this signature; the shell's **kwargs
        # receives such arguments.
        fn.__signature__ = inspect.signature(signature)  # type: ignore[attr-defined]
    if (returns := how.get("returns")) is not None:
        fn.__annotations__ = {**fn.__annotations__, "return": returns}
    if (doc := how.get("doc")) is not None:
        fn.__doc__ = doc
    if (module := how.get("module")) is not None:
        fn.__module__ = module
    return attach_info(fn, info)


_PAIR = ("outputs", "reference_outputs")


def _shape(how: How) -> tuple[Prepare | None, Sequence[str] | None, bool, bool]:
    """``prepare``, ``passes``, ``raw`` and ``paired`` of ``how``, defaults filled in."""
    return how.get("prepare"), how.get("passes"), how.get("raw", False), how.get("paired", False)


def _runner(
    scorer: Callable[..., Any],
    info: EvaluatorInfo,
    prepare: Prepare | None,
    passes: Sequence[str] | None,
    raw: bool,
    traced: Callable[..., Any],
    untraced: Callable[..., Any],
) -> Callable[[dict[str, Any]], Any]:
    """``run(call)``: check the call, select the scorer's arguments, score through the wrapper.

    One body for both shells: ``traced`` and ``untraced`` are the wrapper's sync functions, or
    their async twins (``run`` then returns an awaitable, which the async shell awaits). Without
    LangSmith (no tracing, no LangSmith test case) the wrapper's work is calling the scorer and
    mapping its value (``untraced``); that path is inlined here, since it runs on every call of
    every deterministic evaluator. Otherwise ``traced`` traces and logs.
    """
    run_name, feedback_key = info.run_name, info.feedback_key

    def run(call: dict[str, Any]) -> Any:
        if prepare is not None:
            call = prepare(call)
        if passes is not None:
            call = {name: call.get(name) for name in passes}
        if _needs_langsmith():
            return traced(
                run_name=run_name,
                scorer=scorer,
                feedback_key=feedback_key,
                return_raw_outputs=raw,
                **call,
            )
        return untraced(scorer, feedback_key, raw, call)

    return run


def _sync_shell(scorer: Callable[..., Any], info: EvaluatorInfo, how: How) -> Callable[..., Any]:
    prepare, passes, raw, paired = _shape(how)
    if prepare is None and passes is not None and tuple(passes) == _PAIR and not raw:
        # The common deterministic case (a scorer of outputs and reference_outputs): no call
        # dict to build and filter.
        run_name, feedback_key = info.run_name, info.feedback_key

        def pair(outputs: Any, reference_outputs: Any) -> Any:
            if _needs_langsmith():
                return _run_evaluator_untyped(
                    run_name=run_name,
                    scorer=scorer,
                    feedback_key=feedback_key,
                    outputs=outputs,
                    reference_outputs=reference_outputs,
                )
            call = {"outputs": outputs, "reference_outputs": reference_outputs}
            return _score_untraced(scorer, feedback_key, False, call)

        if paired:

            def paired_pair(
                *, outputs: Any, reference_outputs: Any, **kwargs: Any
            ) -> EvaluatorResult:
                return pair(outputs, reference_outputs)  # type: ignore[no-any-return]

            return paired_pair

        def open_pair(
            *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
        ) -> Any:
            return pair(outputs, reference_outputs)

        return open_pair

    run = _runner(scorer, info, prepare, passes, raw, _run_evaluator_untyped, _score_untraced)
    if paired:

        def paired_evaluator(
            *, outputs: Any, reference_outputs: Any, **kwargs: Any
        ) -> EvaluatorResult:
            return run({"outputs": outputs, "reference_outputs": reference_outputs, **kwargs})  # type: ignore[no-any-return]

        return paired_evaluator

    def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        call.update(kwargs)
        return run(call)

    return evaluator


def _async_shell(
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]], info: EvaluatorInfo, how: How
) -> Callable[..., Any]:
    prepare, passes, raw, paired = _shape(how)
    run = _runner(scorer, info, prepare, passes, raw, _arun_evaluator_untyped, _ascore_untraced)
    if paired:

        async def paired_evaluator(
            *, outputs: Any, reference_outputs: Any, **kwargs: Any
        ) -> EvaluatorResult:
            return await run(  # type: ignore[no-any-return]
                {"outputs": outputs, "reference_outputs": reference_outputs, **kwargs}
            )

        return paired_evaluator

    async def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        call.update(kwargs)
        return await run(call)

    return evaluator


def make_evaluator(
    scorer: Callable[..., Any], info: EvaluatorInfo, **how: Unpack[How]
) -> SimpleEvaluator:
    """Turn a sync ``scorer`` into the public evaluator ``(*, inputs, outputs, reference_outputs, **kw)``.

    Args:
        scorer: computes the score from keyword arguments.
        info: the evaluator's description (``info.is_async`` must be false).
        prepare: checks and may rewrite the call's keyword arguments before scoring.
        passes: the keyword arguments the scorer receives (default: all of them, including extra
            template variables); e.g. ``("outputs", "reference_outputs")``.
        raw: return what the scorer returned unchanged (structured judge answers) instead of
            result dicts.
        name: the evaluator's ``__name__`` and ``__qualname__`` (default ``"evaluator"``).
        paired: the evaluator's signature is ``(*, outputs, reference_outputs, **kwargs)``, both
            required (the deterministic evaluators of the public release); any other keyword
            argument, ``inputs`` included, lands in the call's extra arguments.
        returns: the return annotation the evaluator shows to ``inspect.signature`` (e.g.
            ``"list[EvaluatorResult]"``); default ``"EvaluatorResult"`` when ``paired``, else
            ``"Any"``.
        doc: the evaluator's docstring (``__doc__``).
        module: the evaluator's ``__module__`` (default ``openevals._contract``; pass the
            family's ``__name__`` so the evaluator reads as the family's own).
        signature: a function whose signature the evaluator reports to ``inspect.signature``
            (e.g. one naming ``runs`` for LangSmith comparative evaluators).
    """
    if info.is_async:
        raise ValueError(f"make_evaluator builds sync evaluators; {show(info.run_name)} is async")
    return cast(SimpleEvaluator, _named(_sync_shell(scorer, info, how), info, how))


def make_async_evaluator(
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    info: EvaluatorInfo,
    **how: Unpack[How],
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`make_evaluator`; ``scorer`` may be sync or a coroutine function."""
    if not info.is_async:
        raise ValueError(
            f"make_async_evaluator builds async evaluators; mark {show(info.run_name)} "
            "is_async=True"
        )
    return cast(SimpleAsyncEvaluator, _named(_async_shell(scorer, info, how), info, how))


def pair_evaluators(
    scorer: Callable[..., Any],
    info: EvaluatorInfo,
    *,
    name: str,
    module: str,
    doc: str,
    async_doc: str | None = None,
) -> tuple[SimpleEvaluator, SimpleAsyncEvaluator]:
    """The deterministic evaluators of the public release: ``name(*, outputs,
    reference_outputs, **kwargs)`` scoring ``scorer(outputs=..., reference_outputs=...)``, and its
    async twin ``name + "_async"`` (docstring ``async_doc``, by default "Async twin of name")."""
    sync = make_evaluator(
        scorer, info, passes=_PAIR, paired=True, name=name, module=module, doc=doc
    )
    twin_doc = async_doc or f"Async twin of :func:`{name}`."
    twin = make_async_evaluator(
        scorer,
        info.as_async(),
        passes=_PAIR,
        paired=True,
        name=f"{name}_async",
        module=module,
        doc=twin_doc,
    )
    return sync, twin


def run_scorer(
    info: EvaluatorInfo, scorer: Callable[..., Any], *, raw: bool = False, **kwargs: Any
) -> Any:
    """Score one call of ``scorer(**kwargs)`` under ``info`` outside an evaluator shell.

    For an evaluator's extra entry points (``batch``) whose results must look exactly like the
    evaluator's own: same run name, same feedback key, same tracing and pytest feedback.
    """
    return _runner(scorer, info, None, None, raw, _run_evaluator_untyped, _score_untraced)(kwargs)


async def arun_scorer(
    info: EvaluatorInfo,
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    *,
    raw: bool = False,
    **kwargs: Any,
) -> Any:
    """Async twin of :func:`run_scorer`; ``scorer`` may be sync or a coroutine function."""
    run = _runner(scorer, info, None, None, raw, _arun_evaluator_untyped, _ascore_untraced)
    return await run(kwargs)
