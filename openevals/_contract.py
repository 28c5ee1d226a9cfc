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
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator_untyped, _run_evaluator_untyped

__all__ = [
    "INFO_ATTRIBUTE",
    "EvaluatorInfo",
    "attach_info",
    "info_of",
    "make_async_evaluator",
    "make_evaluator",
]

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
        judge: scoring calls an LLM judge (so judge caches, retries and token usage apply).
        is_async: the evaluator is a coroutine function.
        score_type: for a judge that answers with a score, what kind: ``"boolean"``,
            ``"continuous"`` or ``"choices"`` (``None`` for structured answers and evaluators that
            do not say). Calibration checks human labels against it before any model call.
        choices: the allowed scores when ``score_type`` is ``"choices"``.
    """

    run_name: str
    feedback_keys: tuple[str, ...] = ()
    model: str | None = None
    pure: bool = False
    judge: bool = False
    is_async: bool = False
    score_type: Literal["boolean", "continuous", "choices"] | None = None
    choices: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.run_name, str) or not self.run_name:
            raise ValueError(
                f"EvaluatorInfo.run_name must be a non-empty str; got {self.run_name!r}"
            )
        if isinstance(self.feedback_keys, str) or not all(
            isinstance(k, str) and k for k in self.feedback_keys
        ):
            raise ValueError(
                "EvaluatorInfo.feedback_keys must be a tuple of non-empty strings; "
                f"got {self.feedback_keys!r}"
            )
        if self.score_type not in (None, "boolean", "continuous", "choices"):
            raise ValueError(
                "EvaluatorInfo.score_type must be 'boolean', 'continuous', 'choices' or None; "
                f"got {self.score_type!r}"
            )
        if bool(self.choices) != (self.score_type == "choices"):
            raise ValueError("EvaluatorInfo.choices is given exactly when score_type is 'choices'")
        if self.pure and self.judge:
            raise ValueError("EvaluatorInfo: an evaluator that calls a judge cannot be pure")

    @property
    def feedback_key(self) -> str:
        """The key a scalar score is reported under (the first feedback key, else the run name)."""
        return self.feedback_keys[0] if self.feedback_keys else self.run_name


def attach_info(fn: F, info: EvaluatorInfo) -> F:
    """Record ``info`` on ``fn`` (an evaluator callable) and return ``fn``."""
    setattr(fn, INFO_ATTRIBUTE, info)
    return fn


def info_of(evaluator: Any) -> EvaluatorInfo | None:
    """The :class:`EvaluatorInfo` of an evaluator of this package, or ``None`` for foreign ones.

    ``functools.partial`` wrappers are looked through, so ``partial(create_...(), ...)`` keeps
    its description.
    """
    target = evaluator
    while isinstance(target, functools.partial):
        target = target.func
    info = getattr(target, INFO_ATTRIBUTE, None)
    return info if isinstance(info, EvaluatorInfo) else None


def _call_kwargs(
    inputs: Any, outputs: Any, reference_outputs: Any, kwargs: dict[str, Any]
) -> dict[str, Any]:
    call = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
    call.update(kwargs)
    return call


def _select(call: dict[str, Any], passes: Sequence[str] | None) -> dict[str, Any]:
    if passes is None:
        return call
    return {name: call.get(name) for name in passes}


def _named(
    fn: F, info: EvaluatorInfo, name: str | None, signature: Callable[..., Any] | None = None
) -> F:
    if name is not None:
        fn.__name__ = name
        fn.__qualname__ = name
    if signature is not None:
        # Callers that inspect parameter names (LangSmith passes `runs` to comparative
        # evaluators only when the signature names it) see this signature; the shell's **kwargs
        # receives such arguments.
        fn.__signature__ = inspect.signature(signature)  # type: ignore[attr-defined]
    return attach_info(fn, info)


def make_evaluator(
    scorer: Callable[..., Any],
    info: EvaluatorInfo,
    *,
    prepare: Prepare | None = None,
    passes: Sequence[str] | None = None,
    raw: bool = False,
    name: str | None = None,
    signature: Callable[..., Any] | None = None,
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
        name: the evaluator's ``__name__`` (default: keep the shell's own name).
        signature: a function whose signature the evaluator reports to ``inspect.signature``
            (e.g. one naming ``runs`` for LangSmith comparative evaluators).
    """
    if info.is_async:
        raise ValueError(f"make_evaluator builds sync evaluators; {info.run_name!r} is async")
    feedback_key = info.feedback_key

    def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = _call_kwargs(inputs, outputs, reference_outputs, kwargs)
        if prepare is not None:
            call = prepare(call)
        return _run_evaluator_untyped(
            run_name=info.run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            return_raw_outputs=raw,
            **_select(call, passes),
        )

    return cast(SimpleEvaluator, _named(evaluator, info, name, signature))


def make_async_evaluator(
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    info: EvaluatorInfo,
    *,
    prepare: Prepare | None = None,
    passes: Sequence[str] | None = None,
    raw: bool = False,
    name: str | None = None,
    signature: Callable[..., Any] | None = None,
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`make_evaluator`; ``scorer`` may be sync or a coroutine function."""
    if not info.is_async:
        raise ValueError(
            f"make_async_evaluator builds async evaluators; mark {info.run_name!r} is_async=True"
        )
    feedback_key = info.feedback_key

    async def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = _call_kwargs(inputs, outputs, reference_outputs, kwargs)
        if prepare is not None:
            call = prepare(call)
        return await _arun_evaluator_untyped(
            run_name=info.run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            return_raw_outputs=raw,
            **_select(call, passes),
        )

    return cast(SimpleAsyncEvaluator, _named(evaluator, info, name, signature))
