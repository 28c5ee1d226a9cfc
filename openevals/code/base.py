"""The two classes every code evaluator is: extract the code, then score it.

A *scorer* is any callable ``scorer(*, inputs, outputs, reference_outputs, **kwargs)`` that receives
the extracted code as ``outputs`` and returns what ``_run_evaluator`` accepts (a bool, a number,
``(score, comment)``, ``(score, comment, metadata)``, a dict of results...). When extraction finds no
code the scorer is not called and the result is ``score=False, comment=None,
metadata={"code_extraction_failed": True}``.

:class:`CodeEvaluator` is the sync evaluator, :class:`AsyncCodeEvaluator` its async twin (the scorer
and extractor may then be async). Both run through the evaluator contract
(:mod:`openevals._contract`). Checking many outputs at once is an optional capability: built with a
``batch_scorer`` (one call for many codes, e.g. one type-checker process), the sync evaluator has
``batch`` and the async one ``abatch``, which return exactly what per-output calls would; without
one, the evaluator has no such attribute (``hasattr`` tells). The names of the earlier shells
(``CodeCheckEvaluator``, ``BatchCodeCheckEvaluator`` and their async twins) are aliases.

Evaluators that hand the code to another program (a type checker, an E2B sandbox) name it as their
``code_sink``: code holding a lone surrogate, which UTF-8 cannot encode, is then refused with a
``ValueError`` naming ``outputs`` (``outputs[i]`` in a batch) and the position, before the program
starts. Without a sink (your own scorer) the code is passed on unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any, Generic, Literal, ParamSpec, TypeVar, cast, overload

from openevals._contract import (
    EvaluatorInfo,
    arun_scorer,
    attach_info,
    run_scorer,
)
from openevals._declare import derive, evaluator_for
from openevals._drivers import adrive, drive
from openevals._incidental import incidental
from openevals._repr import show
from openevals._text import check_text
from openevals.code.extraction import (
    CodeExtraction,
    CodeExtractionStrategy,
    ExtractCode,
    Extraction,
    NoCode,
    extract_code_from_markdown,
    perform,
)
from openevals.types import EvaluatorResult

__all__ = [
    "AsyncBatchCodeCheckEvaluator",
    "AsyncCodeCheckEvaluator",
    "AsyncCodeEvaluator",
    "BatchCodeCheckEvaluator",
    "CheckTimeoutError",
    "CodeCheckEvaluator",
    "CodeEvaluator",
    "CodeExtractionStrategy",
    "ExtractCode",
    "Extraction",
    "NoCode",
    "check_model_options",
]

CheckScore = tuple[bool, "str | None"]
"""What a code check returns for one sample: ``(passed, comment)``."""

BatchScorer = Callable[[Sequence[str]], list[CheckScore]]
AsyncBatchScorer = Callable[[Sequence[str]], Awaitable[list[CheckScore]]]


_incidental_names = incidental(__name__)


class CheckTimeoutError(TimeoutError):
    """A code check did not finish within the evaluator's ``timeout`` (a type checker that hung,
    a sandbox step that never ended): the check failed, so there is no score. ``timeout`` holds
    the seconds and ``what`` the step."""

    def __init__(self, what: str, timeout: float | None) -> None:
        self.what = what
        self.timeout = timeout
        limit = f"timeout={timeout:g} s" if timeout is not None else "its time limit"
        super().__init__(
            f"{what} did not finish within {limit} and was stopped; raise `timeout` (or pass "
            "timeout=None for no limit of ours) if the check is just slow"
        )


def __getattr__(name: str) -> Any:
    # The public release exposes the extraction prompts here; load them only when asked for.
    if name in ("LLM_EXTRACTION_SYSTEM_PROMPT", "LLM_EXTRACTION_USER_PROMPT"):
        from openevals.prompts import code as code_prompts

        return getattr(code_prompts, name)
    return _incidental_names(name)  # the names 0.2.2 bound here by importing them


_extract_code_from_markdown_code_blocks = extract_code_from_markdown  # the public release's name


def check_model_options(*, code_extraction_strategy: str, model: str | None, client: Any) -> None:
    """``model``/``client`` only configure the LLM extraction strategy; reject them otherwise."""
    if code_extraction_strategy != "llm" and (model is not None or client is not None):
        given = [f"`{n}`" for n, v in (("model", model), ("client", client)) if v is not None]
        verb = "are" if len(given) == 2 else "is"
        raise ValueError(
            f"{' and '.join(given)} {verb} only used by code_extraction_strategy='llm' (to extract "
            "the code with a model), but "
            f"code_extraction_strategy={show(code_extraction_strategy)}; "
            "drop it or use the 'llm' strategy"
        )


def code_extraction(
    *, code_extraction_strategy: Any, code_extractor: Any, model: Any, client: Any
) -> CodeExtraction:
    """The checked extraction a code factory's options ask for."""
    check_model_options(
        code_extraction_strategy=code_extraction_strategy, model=model, client=client
    )
    return CodeExtraction(
        strategy=code_extraction_strategy,
        code_extractor=code_extractor,
        model=model,
        client=client,
    )


def _batch_items(outputs: Any) -> list[Any]:
    if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Sequence):
        raise TypeError(
            f"`batch` takes a list of outputs (one per sample), got {type(outputs).__name__}"
        )
    return list(outputs)


def checked_code(code: str, parameter: str, sink: str | None) -> str:
    """``code`` unchanged; with a ``sink`` (the program the code is handed to), a ``ValueError``
    naming ``parameter`` if the code holds a lone surrogate, which no UTF-8 file can carry."""
    if sink is not None:
        check_text(code, parameter, of="its code", sink=sink)
    return code


_BatchScorerT = TypeVar("_BatchScorerT", BatchScorer, AsyncBatchScorer)


class _CodeEvaluatorBase(Generic[_BatchScorerT]):
    """What both code evaluator classes share: the constructor and the scoring flows, run by the
    sync class with :func:`openevals._drivers.drive` and by the async one with ``adrive``. Each
    class adds only its call form; its batch scorer's type is the class's type argument.

    Args:
        scorer: scores the extracted code (see the module documentation).
        extraction: how the code is taken out of ``outputs``.
        run_name: the LangSmith run name.
        feedback_key: the key of its results.
        code_sink: the program the code is handed to, for errors about code it cannot carry.
        batch_scorer: ``codes -> [(passed, comment), ...]`` (awaitable for the async class);
            gives the evaluator ``batch`` (``abatch`` for the async class).
        info: the evaluator's description for the batch runner (``evaluator.openevals_info``);
            without it the evaluator does not describe itself.
    """

    batch_scorer: Any
    _evaluate: Callable[..., Any]
    _is_async: bool
    # Defined by each class, in its own colour (sync or async):
    __call__: Callable[..., Any]
    _score: Callable[..., Any]
    _batch: Callable[..., Any]

    def __init__(
        self,
        *,
        scorer: Callable[..., Any],
        extraction: CodeExtraction,
        run_name: str,
        feedback_key: str,
        code_sink: str | None = None,
        batch_scorer: _BatchScorerT | None = None,
        info: EvaluatorInfo | None = None,
    ) -> None:
        if not callable(scorer):
            raise TypeError(f"`scorer` must be callable, got {type(scorer).__name__}")
        if batch_scorer is not None and not callable(batch_scorer):
            raise TypeError(
                f"`batch_scorer` must be callable or None, got {type(batch_scorer).__name__}"
            )
        self.scorer, self.extraction, self.batch_scorer = scorer, extraction, batch_scorer
        self.run_name, self.feedback_key, self.code_sink = run_name, feedback_key, code_sink
        contract = info or EvaluatorInfo(run_name=run_name, feedback_keys=(feedback_key,))
        self._evaluate = evaluator_for(self._is_async, self._score, contract)
        self._info = contract.as_async() if self._is_async else contract
        if info is not None:
            attach_info(self, self._info)
        if batch_scorer is not None:
            setattr(self, "abatch" if self._is_async else "batch", self._batch)

    def _score_flow(self, outputs: Any, kwargs: dict[str, Any]) -> Generator[Any, Any, Any]:
        extracted = yield from self.extraction.flow(outputs, "outputs", is_async=self._is_async)
        if extracted.code is None:
            return extracted.failure_score()
        code = checked_code(extracted.code, "outputs", self.code_sink)
        return (yield functools.partial(self.scorer, outputs=code, **kwargs))

    def _batch_flow(self, items: list[Any]) -> Generator[Any, Any, list[EvaluatorResult]]:
        """One result per item: its check score, or the extraction-failure result."""
        extractions: list[Extraction] = []
        for i, item in enumerate(items):
            flow = self.extraction.flow(item, f"outputs[{i}]", is_async=self._is_async)
            extractions.append((yield from flow))
        # Every code is validated for the sink before any checker starts.
        codes = [
            checked_code(e.code, f"outputs[{i}]", self.code_sink)
            for i, e in enumerate(extractions)
            if e.code is not None
        ]
        answered = (yield functools.partial(self.batch_scorer, codes)) if codes else []
        checked: Iterator[CheckScore] = iter(answered)
        scored = [
            e.failure_score() if e.code is None else (*next(checked), None) for e in extractions
        ]
        return [
            {"key": self.feedback_key, "score": score, "comment": comment, "metadata": metadata}
            for score, comment, metadata in scored
        ]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.feedback_key!r}>"


# --------------------------------------------------------------------------- the two classes


class CodeEvaluator(_CodeEvaluatorBase[BatchScorer]):
    """A code evaluator: ``evaluator(outputs=..., inputs=..., reference_outputs=...)``. Its
    constructor is :class:`_CodeEvaluatorBase`'s (a ``batch_scorer`` gives it :meth:`batch`)."""

    batch: Callable[[Sequence[Any]], list[EvaluatorResult]]
    """Check many outputs at once; present only on evaluators built with a ``batch_scorer``."""
    _is_async = False

    def _score(self, *, outputs: Any = None, **kw: Any) -> Any:
        return drive(self._score_flow(outputs, kw), perform)

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult:
        return cast(
            EvaluatorResult,
            self._evaluate(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
            ),
        )

    def _batch(self, outputs: Sequence[Any]) -> list[EvaluatorResult]:
        """Check every element of ``outputs``; returns one result per element, in order.

        The results equal those of calling the evaluator on each element, but the checking runs
        in one go (for type checkers: one process over one temporary directory).
        """
        items = _batch_items(outputs)
        if not items:
            return []

        def score_all(**_: Any) -> list[EvaluatorResult]:
            return drive(self._batch_flow(items), perform)

        return cast("list[EvaluatorResult]", run_scorer(self._info, score_all, outputs=items))


class AsyncCodeEvaluator(_CodeEvaluatorBase[AsyncBatchScorer]):
    """The async twin of :class:`CodeEvaluator`; the scorer, batch scorer and extractor may be
    async. Built with a ``batch_scorer`` it has :meth:`abatch`."""

    abatch: Callable[[Sequence[Any]], Awaitable[list[EvaluatorResult]]]
    """Check many outputs at once; present only on evaluators built with a ``batch_scorer``."""
    _is_async = True

    async def _score(self, *, outputs: Any = None, **kw: Any) -> Any:
        return await adrive(self._score_flow(outputs, kw), perform)

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult:
        result = await self._evaluate(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
        )
        return cast(EvaluatorResult, result)

    async def _batch(self, outputs: Sequence[Any]) -> list[EvaluatorResult]:
        """Async twin of :meth:`CodeEvaluator.batch`."""
        items = _batch_items(outputs)
        if not items:
            return []

        async def score_all(**_: Any) -> list[EvaluatorResult]:
            return await adrive(self._batch_flow(items), perform)

        results = await arun_scorer(self._info, score_all, outputs=items)
        return cast("list[EvaluatorResult]", results)


# The names of the earlier shells, kept importable.
CodeCheckEvaluator = CodeEvaluator
BatchCodeCheckEvaluator = CodeEvaluator
AsyncCodeCheckEvaluator = AsyncCodeEvaluator
AsyncBatchCodeCheckEvaluator = AsyncCodeEvaluator


# --------------------------------------------------------------------------- factories

_P = ParamSpec("_P")
_SyncKind = Literal["CodeCheckEvaluator", "BatchCodeCheckEvaluator", "CodeEvaluator"]
_AsyncKind = Literal[
    "AsyncCodeCheckEvaluator", "AsyncBatchCodeCheckEvaluator", "AsyncCodeEvaluator"
]


@overload
def code_factory(
    build: Callable[..., Any], returns: _SyncKind
) -> Callable[[Callable[_P, object]], Callable[_P, CodeEvaluator]]: ...


@overload
def code_factory(
    build: Callable[..., Any], returns: _AsyncKind
) -> Callable[[Callable[_P, object]], Callable[_P, AsyncCodeEvaluator]]: ...


def code_factory(
    build: Callable[..., Any], returns: str
) -> Callable[[Callable[_P, object]], Callable[..., Any]]:
    """A code factory from its declaration, the decorated function: its parameters, their
    annotations and defaults, and its docstring are the factory's (its own body is never run);
    ``returns`` names the class it returns (the ``Async...`` ones make the async form).

    A call binds its arguments to the declared signature (a wrong or missing option is the
    ``TypeError`` of a call) and returns ``build(options, is_async=...)``, ``options`` being
    every option by name with its default filled in (:func:`openevals._declare.derive`). A
    family's sync and async factories declare their own signatures (their extractor and
    sandbox types differ) and share the one builder, so no option is passed on by hand.
    """
    is_async = returns.startswith("Async")

    def make(declared: Callable[_P, object]) -> Callable[..., Any]:
        doc = declared.__doc__ or ""
        build_form = functools.partial(build, is_async=is_async)
        return derive(declared, build_form, name=declared.__name__, returns=returns, doc=doc)

    return make


def _create_base_code_evaluator(
    *,
    scorer: Callable[..., Any],
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    model: str | None = None,
    client: Any = None,
    run_name: str,
    feedback_key: str,
) -> CodeEvaluator:
    """A sync code evaluator running ``scorer`` on the code extracted from ``outputs``.

    ``scorer`` is called as ``scorer(inputs=..., outputs=<code>, reference_outputs=..., **kwargs)``.
    ``model``/``client`` configure the ``"llm"`` extraction strategy (``client`` may be a LangChain
    chat model or an OpenAI-style client with ``model`` naming the model); they are accepted with
    other strategies too, so a judge can pass its own model along.
    """
    extraction = CodeExtraction(
        strategy=code_extraction_strategy, code_extractor=code_extractor, model=model, client=client
    )
    return CodeEvaluator(
        scorer=scorer, extraction=extraction, run_name=run_name, feedback_key=feedback_key
    )


def _create_async_base_code_evaluator(
    *,
    scorer: Callable[..., Any],
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    model: str | None = None,
    client: Any = None,
    run_name: str,
    feedback_key: str,
) -> AsyncCodeEvaluator:
    """Async twin of :func:`_create_base_code_evaluator`; scorer and extractor may be async."""
    extraction = CodeExtraction(
        strategy=code_extraction_strategy, code_extractor=code_extractor, model=model, client=client
    )
    return AsyncCodeEvaluator(
        scorer=scorer, extraction=extraction, run_name=run_name, feedback_key=feedback_key
    )
