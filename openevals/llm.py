"""LLM-as-judge evaluators: ``create_llm_as_judge`` and ``create_async_llm_as_judge``.

The pairwise factories (``create_pairwise_llm_as_judge`` and its async twin) are defined in
:mod:`openevals.pairwise.judge` and re-exported here, beside the single-output judge.

Both factories are derived (:mod:`openevals._judge.declare`) from the one declaration of the
judge options, :class:`~openevals._judge.options.JudgeOptions` (checked at creation, sync/async
rules included), and return the evaluator contract's shell around one
:class:`~openevals._judge.core.JudgeCore`; the only difference between them is which driver runs
the judge's flow.

``init_chat_model`` is the name model strings resolve through once it is replaced (e.g.
``unittest.mock.patch("openevals.llm.init_chat_model")``, as tests written for openevals 0.2.2
do); importing this module loads no LangChain code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.errors import (
    JudgeConnectionError,
    JudgeError,
    JudgeLogprobsError,
    JudgeOutputError,
    JudgeServerError,
    JudgeTimeoutError,
)
from openevals._judge.options import FACTORIES, JUDGE_ORDER, FactorySpec, JudgeOptions
from openevals._judge.resolve import init_chat_model as init_chat_model
from openevals._judge.shell import build_core, judge_evaluator, scorer_for
from openevals.pairwise.judge import (
    create_async_pairwise_llm_as_judge,
    create_pairwise_llm_as_judge,
)
from openevals.types import FewShotExample as FewShotExample  # bound here by 0.2.2
from openevals.types import SimpleAsyncEvaluator as SimpleAsyncEvaluator
from openevals.types import SimpleEvaluator as SimpleEvaluator

__all__ = [
    "JudgeConnectionError",
    "JudgeError",
    "JudgeLogprobsError",
    "JudgeOutputError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "create_async_llm_as_judge",
    "create_async_pairwise_llm_as_judge",
    "create_llm_as_judge",
    "create_pairwise_llm_as_judge",
]


def _llm_judge(spec: FactorySpec, options: JudgeOptions) -> object:
    """The evaluator both public factories return."""
    return judge_evaluator(build_core(spec, options), is_async=spec.is_async)


create_llm_as_judge, create_async_llm_as_judge = judge_factories(
    "create_llm_as_judge",
    JudgeOptions,
    _llm_judge,
    EVALUATORS,
    order=JUDGE_ORDER,
    doc="""Create an evaluator that asks an LLM to grade ``outputs`` (and more) with ``prompt``.

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
    samples: ask the judge this many times and aggregate: booleans and choices by majority
        vote (a tied boolean vote gives ``False``; tied choices the lowest), continuous scores
        by the mean. ``metadata`` then holds ``samples`` and ``agreement`` (votes) or ``std``
        (means). OpenAI backends ask once with the ``n`` parameter; others make n calls.
    score_weighting: ``"logprobs"`` weights boolean and ``choices`` scores by the
        probabilities of the score token (G-Eval): the score becomes ``P(true)``, or the
        probability-weighted mean of the choices. Needs a provider that returns
        ``top_logprobs`` (OpenAI); anything else raises instead of falling back.
    timeout: seconds each request to the model may take (each retry gets its own), for a
        model string or an OpenAI client; a request past it counts as a timeout, and when
        every attempt times out the evaluator raises :class:`JudgeTimeoutError`. Default:
        the client's own (600 s for the OpenAI SDK). A LangChain chat model keeps its own.

Raises (from the evaluator): :class:`JudgeOutputError` (unusable answer),
:class:`JudgeServerError` (malformed server reply), :class:`JudgeTimeoutError` (every attempt
timed out); all subclass :class:`JudgeError`.

Call the evaluator with keyword arguments: ``inputs``, ``outputs``, ``reference_outputs``, any
other template variable, and ``attachments`` (images, audio, PDF) for multimodal prompts.
""",
)
LLM_JUDGE, ASYNC_LLM_JUDGE = (
    FACTORIES["create_llm_as_judge"],
    FACTORIES["create_async_llm_as_judge"],
)


def _create_llm_as_judge_scorer(**options: Any) -> Callable[..., Any]:
    """A plain sync scorer ``(*, inputs, outputs, reference_outputs, **kw) -> score value``."""
    return scorer_for(build_core(LLM_JUDGE, LLM_JUDGE.arguments(options)), is_async=False)


def _create_async_llm_as_judge_scorer(**options: Any) -> Callable[..., Any]:
    """The async twin of :func:`_create_llm_as_judge_scorer`."""
    return scorer_for(
        build_core(ASYNC_LLM_JUDGE, ASYNC_LLM_JUDGE.arguments(options)), is_async=True
    )


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
