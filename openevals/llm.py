"""LLM-as-judge evaluators: ``create_llm_as_judge`` and ``create_async_llm_as_judge``.

The pairwise factories (``create_pairwise_llm_as_judge`` and its async twin) are defined in
:mod:`openevals.pairwise.judge` and re-exported here, beside the single-output judge.

Both factories build one :class:`~openevals._judge.core.JudgeCore` (which validates every option at
creation) and return a thin shell around it: the only difference between them is whether the model
is called with ``invoke`` or ``await ainvoke``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openevals._judge.core import JudgeCore
from openevals._judge.errors import (
    JudgeError,
    JudgeOutputError,
    JudgeServerError,
    JudgeTimeoutError,
)
from openevals.pairwise.judge import (
    create_async_pairwise_llm_as_judge,
    create_pairwise_llm_as_judge,
)
from openevals.types import FewShotExample, SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator_untyped, _run_evaluator_untyped

__all__ = [
    "JudgeError",
    "JudgeOutputError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "create_async_llm_as_judge",
    "create_async_pairwise_llm_as_judge",
    "create_llm_as_judge",
    "create_pairwise_llm_as_judge",
]


def _sync_scorer(core: JudgeCore) -> Callable[..., Any]:
    def scorer(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Any:
        return core.run_sync(inputs, outputs, reference_outputs, kw)

    return scorer


def _async_scorer(core: JudgeCore) -> Callable[..., Any]:
    async def scorer(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kw: Any
    ) -> Any:
        return await core.run_async(inputs, outputs, reference_outputs, kw)

    return scorer


Prepare = Callable[[dict[str, Any]], dict[str, Any]]


def _judge_evaluator(
    core: JudgeCore,
    prepare: Prepare | None = None,
    *,
    async_factory: str = "create_async_llm_as_judge",
    factory: str = "create_llm_as_judge",
) -> SimpleEvaluator:
    """The sync evaluator shell around ``core``; ``prepare`` may rewrite the call's kwargs."""
    if getattr(core._backend, "is_async", False):
        raise TypeError(
            f"`judge` is an async OpenAI client (AsyncOpenAI); use {async_factory}, or pass "
            f"openai.OpenAI() to {factory}"
        )
    scorer = _sync_scorer(core)

    def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        call.update(kwargs)
        return _run_evaluator_untyped(
            run_name=core.run_name,
            scorer=scorer,
            feedback_key=core.feedback_key,
            return_raw_outputs=core.raw_output,
            **(prepare(call) if prepare else call),
        )

    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator


def _async_judge_evaluator(core: JudgeCore, prepare: Prepare | None = None) -> SimpleAsyncEvaluator:
    """The async twin of :func:`_judge_evaluator`."""
    scorer = _async_scorer(core)

    async def evaluator(
        *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Any:
        call = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        call.update(kwargs)
        return await _arun_evaluator_untyped(
            run_name=core.run_name,
            scorer=scorer,
            feedback_key=core.feedback_key,
            return_raw_outputs=core.raw_output,
            **(prepare(call) if prepare else call),
        )

    evaluator.core = core  # type: ignore[attr-defined]
    return evaluator


def _create_llm_as_judge_scorer(**options: Any) -> Callable[..., Any]:
    """A plain sync scorer ``(*, inputs, outputs, reference_outputs, **kw) -> score value``."""
    return _sync_scorer(JudgeCore(**options))


def _create_async_llm_as_judge_scorer(**options: Any) -> Callable[..., Any]:
    """The async twin of :func:`_create_llm_as_judge_scorer`."""
    return _async_scorer(JudgeCore(**options))


def create_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "score",
    judge: Any = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    output_schema: Any = None,
    structured_output_kwargs: Mapping[str, Any] | None = None,
    max_retries: int = 3,
) -> SimpleEvaluator:
    """Create an evaluator that asks an LLM to grade ``outputs`` (and more) with ``prompt``.

    Args:
        prompt: an f-string template (``"{inputs} ... {outputs}"``), a LangChain prompt template
            (``ChatPromptTemplate``, f-string or mustache; a ``StructuredPrompt`` brings its own output
            schema), or a callable taking the call's keyword arguments and returning chat messages.
        feedback_key: the key of the returned result (default ``"score"``).
        judge: a LangChain chat model, or an ``openai.OpenAI`` client (then ``model`` names the model).
            The client object itself is called (``wrap_openai`` tracing and patches apply); its own
            ``max_retries`` then governs retries of HTTP errors and timeouts.
        model: a ``"provider:model"`` string, e.g. ``"openai:gpt-4.1-mini"``.
        system: a system message prepended to the prompt.
        continuous: score is a float in [0, 1] instead of a boolean.
        choices: the score must be one of these numbers.
        use_reasoning: the judge reasons before scoring; the reasoning is returned as ``comment``.
        few_shot_examples: examples (inputs/outputs/reasoning/score) appended to the last user message.
        output_schema: a TypedDict, Pydantic model, JSON schema or OpenAI structured-output format; the
            evaluator then returns the structured answer instead of an ``EvaluatorResult``: an
            instance of the model for a Pydantic model, a dict otherwise.
        structured_output_kwargs: forwarded to a LangChain model's ``with_structured_output``.
        max_retries: retries of transient failures (429, 5xx, timeouts, malformed replies) with
            exponential backoff.

    Raises (from the evaluator): :class:`JudgeOutputError` (unusable answer),
    :class:`JudgeServerError` (malformed server reply), :class:`JudgeTimeoutError` (every attempt
    timed out); all subclass :class:`JudgeError`.

    Call the evaluator with keyword arguments: ``inputs``, ``outputs``, ``reference_outputs``, any
    other template variable, and ``attachments`` (images, audio, PDF) for multimodal prompts.
    """
    core = JudgeCore(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        output_schema=output_schema,
        structured_output_kwargs=structured_output_kwargs,
        max_retries=max_retries,
    )
    if core.is_async_prompt:
        raise TypeError(
            "`prompt` is an async function; use create_async_llm_as_judge for async prompts"
        )
    return _judge_evaluator(core)


def create_async_llm_as_judge(
    *,
    prompt: Any,
    feedback_key: str = "score",
    judge: Any = None,
    model: str | None = None,
    system: str | None = None,
    continuous: bool = False,
    choices: Sequence[float] | None = None,
    use_reasoning: bool = True,
    few_shot_examples: Sequence[FewShotExample] | None = None,
    output_schema: Any = None,
    structured_output_kwargs: Mapping[str, Any] | None = None,
    max_retries: int = 3,
) -> SimpleAsyncEvaluator:
    """The async twin of :func:`create_llm_as_judge` (same options; pass ``AsyncOpenAI`` clients)."""
    core = JudgeCore(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        output_schema=output_schema,
        structured_output_kwargs=structured_output_kwargs,
        max_retries=max_retries,
    )

    return _async_judge_evaluator(core)
