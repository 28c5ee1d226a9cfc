"""The evaluator shell every code evaluator is built on: extract the code, then score it.

A *scorer* is any callable ``scorer(*, inputs, outputs, reference_outputs, **kwargs)`` that receives
the extracted code as ``outputs`` and returns what ``_run_evaluator`` accepts (a bool, a number,
``(score, comment)``, ``(score, comment, metadata)``, a dict of results...). When extraction finds no
code the scorer is not called and the result is ``score=False, comment=None,
metadata={"code_extraction_failed": True}``.

:class:`CodeEvaluator` / :class:`AsyncCodeEvaluator` are the general shells;
:class:`CodeCheckEvaluator` narrows the return type to one result; the ``Batch`` variants add
``batch`` / ``abatch``, which score many outputs with one call of a batch scorer (e.g. one type-checker
process) and return exactly what per-output calls would.

Evaluators that hand the code to another program (a type checker, an E2B sandbox) name it as their
``code_sink``: code holding a lone surrogate, which UTF-8 cannot encode, is then refused with a
``ValueError`` naming ``outputs`` (``outputs[i]`` in a batch) and the position, before the program
starts. Without a sink (your own scorer) the code is passed on unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from openevals._text import check_text
from openevals.code.extraction import (
    CodeExtraction,
    CodeExtractionStrategy,
    ExtractCode,
    Extraction,
    NoCode,
    extract_code_from_markdown,
)
from openevals.types import EvaluatorResult
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = [
    "AsyncBatchCodeCheckEvaluator",
    "AsyncCodeCheckEvaluator",
    "AsyncCodeEvaluator",
    "BatchCodeCheckEvaluator",
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


def __getattr__(name: str) -> Any:
    # The public release exposes the extraction prompts here; load them only when asked for.
    if name in ("LLM_EXTRACTION_SYSTEM_PROMPT", "LLM_EXTRACTION_USER_PROMPT"):
        from openevals.prompts import code as code_prompts

        return getattr(code_prompts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _extract_code_from_markdown_code_blocks(text: str) -> str | None:
    """Public-release name of :func:`openevals.code.extraction.extract_code_from_markdown`."""
    return extract_code_from_markdown(text)


def check_model_options(*, code_extraction_strategy: str, model: str | None, client: Any) -> None:
    """``model``/``client`` only configure the LLM extraction strategy; reject them otherwise."""
    if code_extraction_strategy != "llm" and (model is not None or client is not None):
        given = [f"`{n}`" for n, v in (("model", model), ("client", client)) if v is not None]
        verb = "are" if len(given) == 2 else "is"
        raise ValueError(
            f"{' and '.join(given)} {verb} only used by code_extraction_strategy='llm' (to extract "
            f"the code with a model), but code_extraction_strategy={code_extraction_strategy!r}; "
            "drop it or use the 'llm' strategy"
        )


def _batch_items(outputs: Any) -> list[Any]:
    if isinstance(outputs, (str, bytes)) or not isinstance(outputs, Sequence):
        raise TypeError(
            f"`batch` takes a list of outputs (one per sample), got {type(outputs).__name__}"
        )
    return list(outputs)


def _merge_batch(
    feedback_key: str, extractions: Sequence[Extraction], scores: Sequence[CheckScore]
) -> list[EvaluatorResult]:
    """One result per extraction: its check score, or the extraction-failure result."""
    results: list[EvaluatorResult] = []
    checked = iter(scores)
    for extraction in extractions:
        if extraction.code is None:
            score, comment, metadata = extraction.failure_score()
            results.append(
                {"key": feedback_key, "score": score, "comment": comment, "metadata": metadata}
            )
        else:
            passed, note = next(checked)
            results.append(
                {"key": feedback_key, "score": passed, "comment": note, "metadata": None}
            )
    return results


def checked_code(code: str, parameter: str, sink: str | None) -> str:
    """``code`` unchanged; with a ``sink`` (the program the code is handed to), a ``ValueError``
    naming ``parameter`` if the code holds a lone surrogate, which no UTF-8 file can carry."""
    if sink is not None:
        check_text(code, parameter, of="its code", sink=sink)
    return code


def _codes(extractions: Sequence[Extraction], sink: str | None) -> list[str]:
    """The extracted codes of a batch, each validated for ``sink`` before any checker starts."""
    return [
        checked_code(e.code, f"outputs[{i}]", sink)
        for i, e in enumerate(extractions)
        if e.code is not None
    ]


# --------------------------------------------------------------------------- sync shells


class CodeEvaluator:
    """A code evaluator: ``evaluator(outputs=..., inputs=..., reference_outputs=...)``."""

    def __init__(
        self,
        *,
        scorer: Callable[..., Any],
        extraction: CodeExtraction,
        run_name: str,
        feedback_key: str,
        code_sink: str | None = None,
    ) -> None:
        if not callable(scorer):
            raise TypeError(f"`scorer` must be callable, got {type(scorer).__name__}")
        self.scorer = scorer
        self.extraction = extraction
        self.run_name = run_name
        self.feedback_key = feedback_key
        self.code_sink = code_sink

    def _score(
        self, *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Any:
        extracted = self.extraction.extract(outputs)
        if extracted.code is None:
            return extracted.failure_score()
        code = checked_code(extracted.code, "outputs", self.code_sink)
        return self.scorer(inputs=inputs, outputs=code, reference_outputs=reference_outputs, **kw)

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]:
        return _run_evaluator(
            run_name=self.run_name,
            scorer=self._score,
            feedback_key=self.feedback_key,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.feedback_key!r}>"


class CodeCheckEvaluator(CodeEvaluator):
    """A code evaluator whose scorer returns one score, so each call returns one result."""

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
            super().__call__(
                inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
            ),
        )


class BatchCodeCheckEvaluator(CodeCheckEvaluator):
    """A :class:`CodeCheckEvaluator` that can also check many outputs at once with :meth:`batch`."""

    def __init__(
        self,
        *,
        scorer: Callable[..., Any],
        batch_scorer: BatchScorer,
        extraction: CodeExtraction,
        run_name: str,
        feedback_key: str,
        code_sink: str | None = None,
    ) -> None:
        super().__init__(
            scorer=scorer,
            extraction=extraction,
            run_name=run_name,
            feedback_key=feedback_key,
            code_sink=code_sink,
        )
        self.batch_scorer = batch_scorer

    def batch(self, outputs: Sequence[Any]) -> list[EvaluatorResult]:
        """Check every element of ``outputs``; returns one result per element, in order.

        The results equal those of calling the evaluator on each element, but the checking runs
        in one go (for type checkers: one process over one temporary directory).
        """
        items = _batch_items(outputs)
        if not items:
            return []

        def score_all(**_: Any) -> list[EvaluatorResult]:
            extractions = [
                self.extraction.extract(item, parameter=f"outputs[{i}]")
                for i, item in enumerate(items)
            ]
            codes = _codes(extractions, self.code_sink)
            scores = self.batch_scorer(codes) if codes else []
            return _merge_batch(self.feedback_key, extractions, scores)

        return cast(
            "list[EvaluatorResult]",
            _run_evaluator(
                run_name=self.run_name,
                scorer=score_all,
                feedback_key=self.feedback_key,
                outputs=items,
            ),
        )


# --------------------------------------------------------------------------- async shells


class AsyncCodeEvaluator:
    """The async twin of :class:`CodeEvaluator`; the scorer may be sync or async."""

    def __init__(
        self,
        *,
        scorer: Callable[..., Any],
        extraction: CodeExtraction,
        run_name: str,
        feedback_key: str,
        code_sink: str | None = None,
    ) -> None:
        if not callable(scorer):
            raise TypeError(f"`scorer` must be callable, got {type(scorer).__name__}")
        self.scorer = scorer
        self.extraction = extraction
        self.run_name = run_name
        self.feedback_key = feedback_key
        self.code_sink = code_sink

    async def _score(
        self, *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Any:
        extracted = await self.extraction.aextract(outputs)
        if extracted.code is None:
            return extracted.failure_score()
        code = checked_code(extracted.code, "outputs", self.code_sink)
        result = self.scorer(inputs=inputs, outputs=code, reference_outputs=reference_outputs, **kw)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]:
        return await _arun_evaluator(
            run_name=self.run_name,
            scorer=self._score,
            feedback_key=self.feedback_key,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.feedback_key!r}>"


class AsyncCodeCheckEvaluator(AsyncCodeEvaluator):
    """The async twin of :class:`CodeCheckEvaluator`."""

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult:
        result = await super().__call__(
            inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **kwargs
        )
        return cast(EvaluatorResult, result)


class AsyncBatchCodeCheckEvaluator(AsyncCodeCheckEvaluator):
    """The async twin of :class:`BatchCodeCheckEvaluator`, with :meth:`abatch`."""

    def __init__(
        self,
        *,
        scorer: Callable[..., Any],
        batch_scorer: AsyncBatchScorer,
        extraction: CodeExtraction,
        run_name: str,
        feedback_key: str,
        code_sink: str | None = None,
    ) -> None:
        super().__init__(
            scorer=scorer,
            extraction=extraction,
            run_name=run_name,
            feedback_key=feedback_key,
            code_sink=code_sink,
        )
        self.batch_scorer = batch_scorer

    async def abatch(self, outputs: Sequence[Any]) -> list[EvaluatorResult]:
        """Async twin of :meth:`BatchCodeCheckEvaluator.batch`."""
        items = _batch_items(outputs)
        if not items:
            return []

        async def score_all(**_: Any) -> list[EvaluatorResult]:
            extractions = [
                await self.extraction.aextract(item, parameter=f"outputs[{i}]")
                for i, item in enumerate(items)
            ]
            codes = _codes(extractions, self.code_sink)
            scores = await self.batch_scorer(codes) if codes else []
            return _merge_batch(self.feedback_key, extractions, scores)

        return cast(
            "list[EvaluatorResult]",
            await _arun_evaluator(
                run_name=self.run_name,
                scorer=score_all,
                feedback_key=self.feedback_key,
                outputs=items,
            ),
        )


# --------------------------------------------------------------------------- factories


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
