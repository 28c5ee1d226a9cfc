"""The LLM-as-judge core, written once for the sync and async shells.

One judge call is a sans-IO flow (:meth:`JudgeCore.flow`): a generator that builds the messages,
walks the structured-output rungs, retries with backoff and repairs once, *yielding* each piece of
I/O it needs (:class:`Send` a prepared request, :class:`Sleep`, :class:`Resolve` an async prompt's
messages, :class:`Fanout` independent samples) and receiving its outcome. The two drivers of
:mod:`openevals._drivers` run it: :meth:`JudgeCore.ask_sync` with blocking calls,
:meth:`JudgeCore.ask_async` with ``await``. All decisions live in the flow, so the shells cannot
drift apart.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from openevals._contract import is_async_callable
from openevals._drivers import adrive, drive
from openevals._judge.answers import AnswerError, check_answer_size, validate_answer
from openevals._judge.backends import Answer, Backend, OpenAIClientBackend
from openevals._judge.cache import (
    JudgeCache,
    active_cache,
    cache_key,
    lookup_answers,
    store_answers,
)
from openevals._judge.clients import asend, note_pause, owned_async_client, send
from openevals._judge.errors import (
    JudgeConnectionError,
    JudgeOutputError,
    JudgeServerError,
    JudgeTimeoutError,
    connection_reason,
    is_connection_failure,
    is_timeout,
    is_transient,
    is_unsupported,
)
from openevals._judge.langchain_backend import LangChainBackend
from openevals._judge.options import JudgeOptions
from openevals._judge.prompting import (
    PromptSpec,
    check_encodable,
    finalize_messages,
    make_prompt_spec,
    start_messages,
)
from openevals._judge.resolve import backend_for_judge, patched_init_chat_model
from openevals._judge.samples import read_scores
from openevals._judge.schema import SchemaSpec, default_score_schema, normalize_output_schema
from openevals._judge.steps import (
    Conversation,
    Fanout,
    JudgeCall,
    Outcome,
    Resolve,
    RetryPolicy,
    Send,
    Sleep,
    Step,
    add_usage,
    merge_outcomes,
)
from openevals._repr import show

TOP_LOGPROBS = 20
"""Alternatives per token asked for with ``score_weighting="logprobs"`` (OpenAI's maximum)."""


class JudgeCore:
    """Everything about one judge that does not depend on sync vs async."""

    def __init__(self, options: JudgeOptions, *, run_name: str | None = None) -> None:
        self.options = options
        self.prompt: PromptSpec = make_prompt_spec(options.prompt)
        output_schema = options.output_schema
        if self.prompt.structured_schema is not None:
            if output_schema is not None:
                raise ValueError(
                    "the prompt is a StructuredPrompt that carries its own output schema; do not "
                    "also pass `output_schema`"
                )
            output_schema = self.prompt.structured_schema
        self.spec: SchemaSpec = (
            normalize_output_schema(output_schema)
            if output_schema is not None
            else default_score_schema(
                continuous=options.continuous,
                choices=options.choices,
                use_reasoning=options.use_reasoning,
            )
        )
        self.raw_output = self.spec.kind != "score"
        self.feedback_key = options.feedback_key
        self.run_name = run_name or (
            "llm_as_judge"
            if options.feedback_key == "score"
            else f"llm_as_{options.feedback_key}_judge"
        )
        self.system = options.system
        self.few_shot_examples = [dict(e) for e in options.few_shot_examples or ()]
        self.samples = options.samples
        self.weighted = options.score_weighting == "logprobs"
        so_kwargs = dict(options.structured_output_kwargs or {})
        so_kwargs.update(self.prompt.structured_kwargs)
        self.retry = RetryPolicy(max_retries=options.max_retries)
        self._lock = threading.Lock()
        self._backend: Backend | None = None
        self._lazy_backend = options.judge is None
        self._rung_start = 0
        self._model = options.model
        self._so_kwargs = so_kwargs
        self.has_async_client = False
        if options.judge is not None:
            backend = backend_for_judge(options.judge, options.model, so_kwargs, options.timeout)
            self.has_async_client = bool(getattr(backend, "is_async", False))
            self._backend = self._checked(backend)
        else:
            from openevals.models import parse_model_string

            provider, _ = parse_model_string(options.model)  # type: ignore[arg-type]
            if self.weighted and (provider != "openai" or so_kwargs):
                # Such a model string resolves to a LangChain model: refuse it now, not later.
                self._refuse_weighting("LangChainBackend")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (e.g. for Ray workers): no lock, and no client resolved from ``model`` (each
        process resolves its own; a ``judge=`` client is kept and must itself pickle)."""
        state = dict(self.__dict__)
        del state["_lock"]
        if self._lazy_backend:
            state["_backend"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ model
    def _checked(self, backend: Backend) -> Backend:
        if self.weighted and not backend.supports_logprobs:
            self._refuse_weighting(type(backend).__name__)
        return backend

    def _refuse_weighting(self, backend: str) -> None:
        judge = self.options.judge
        what = (
            f"judge={type(judge).__name__}" if judge is not None else f"model={show(self._model)}"
        )
        raise ValueError(
            "score_weighting='logprobs' reads token log-probabilities from OpenAI chat "
            f"completions, but this judge ({what}) runs through {backend}, which does not "
            "return them; pass an OpenAI client (judge=openai.OpenAI(), model=...) or an "
            "'openai:...' model string without structured_output_kwargs, or drop "
            "score_weighting"
        )

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    assert self._model is not None
                    self._backend = self._checked(
                        _resolve_backend(self._model, self._so_kwargs, self.options.timeout)
                    )
        return self._backend

    @property
    def model_label(self) -> str | None:
        """The judge model's name for reports, without resolving a model string."""
        name = getattr(self._backend, "model_name", None)
        if not isinstance(name, str) or not name:
            raw = self._model
            name = raw.split(":", 1)[1] if isinstance(raw, str) and ":" in raw else raw
        return name if isinstance(name, str) and name else None

    @property
    def owns_its_client(self) -> bool:
        """The judge resolves its model from a string and formats a template prompt: its async
        flow blocks no thread, whichever of its sync and async shells was asked for."""
        return self.options.judge is None and self._model is not None and self.prompt.fn is None

    @property
    def is_async_prompt(self) -> bool:
        return self.prompt.fn is not None and is_async_callable(self.prompt.fn)

    @property
    def rungs(self) -> tuple[str, ...]:
        """The backend's rungs; forced tool calls carry no logprobs, so weighting skips them."""
        rungs = self.backend.rungs
        return tuple(r for r in rungs if r != "tool") if self.weighted else rungs

    def _rungs_for(self, spec: SchemaSpec) -> tuple[str, ...]:
        """A free-text answer is asked plainly; structured ones walk the backend's rungs."""
        return ("plain",) if spec.kind == "text" else self.rungs

    # ------------------------------------------------------------------ the flow
    def flow(
        self,
        inputs: Any,
        outputs: Any,
        reference_outputs: Any,
        extra: Mapping[str, Any],
        spec: SchemaSpec | None = None,
    ) -> Conversation:
        """One judge call, from the call's arguments to the validated outcome (sans-IO)."""
        rest = dict(extra)
        attachments = rest.pop("attachments", None)
        raw = start_messages(
            self.prompt,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
            extra=rest,
            attachments=attachments,
        )
        if inspect.isawaitable(raw):  # an async prompt function's messages
            raw = yield Resolve(raw)
        messages = finalize_messages(
            raw,
            system=self.system,
            few_shot_examples=self.few_shot_examples,
            attachments=attachments,
            from_callable=self.prompt.kind == "callable",
        )
        # A lone surrogate cannot be sent: the ValueError names the parameter that holds it.
        sources = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        sources.update(extra)
        sources.update(system=self.system, few_shot_examples=self.few_shot_examples)
        check_encodable(messages, sources)
        if self.samples == 1 or self.backend.supports_n:
            return (yield from self.conversation(messages, spec, self.samples))
        flows = tuple(self.conversation(messages, spec) for _ in range(self.samples))
        return merge_outcomes((yield Fanout(flows)))

    def conversation(
        self, messages: list[dict[str, Any]], spec: SchemaSpec | None = None, n: int = 1
    ) -> Conversation:
        """Ask for ``n`` valid answers: rungs, retries with backoff, one repair request."""
        spec = spec or self.spec
        backend = self.backend
        rungs = self._rungs_for(spec)
        index = self._rung_start if spec.kind != "text" else 0
        repaired = False
        skip_cache = False
        usage: dict[str, int] | None = None
        kept: list[tuple[Any, Answer]] = []
        while True:
            want = n - len(kept)
            index, payload = self._prepare_from(index, messages, spec, want)
            rung = rungs[index]
            attempt = 0
            while True:
                cache, key = self._cache_slot(rung, messages, spec, want)
                answers = None if skip_cache else lookup_answers(cache, key, want)
                stale, from_cache, skip_cache = skip_cache, answers is not None, False
                if answers is not None:
                    break
                if getattr(cache, "replay_only", False):
                    # A replaying cassette: a miss is an error, never a live model call.
                    raise cache.miss(key, stale or cache.get(key) is not None)  # type: ignore[union-attr]
                try:
                    answers = backend.read_all(rung, (yield Send(payload)))
                    break
                except Exception as exc:
                    if is_unsupported(exc) and index + 1 < len(rungs):
                        index, payload = self._prepare_from(index + 1, messages, spec, want)
                        rung = rungs[index]
                        attempt = 0
                        continue
                    if attempt < self._retries_for(exc):
                        yield Sleep(self.retry.delay(attempt, exc))
                        attempt += 1
                        continue
                    final = self._give_up(exc, attempt + 1)
                    if final is exc:
                        raise
                    raise final from (exc.__cause__ if isinstance(exc, JudgeServerError) else exc)
            fresh: list[tuple[Any, Answer]] = []
            bad: tuple[Answer, AnswerError] | None = None
            for answer in answers[:want]:
                usage = add_usage(usage, answer.usage)
                check_answer_size(answer.text)
                try:
                    if answer.data is None:
                        raise AnswerError("the reply contains no JSON object")
                    fresh.append((validate_answer(spec, answer.data), answer))
                except AnswerError as err:
                    bad = bad or (answer, err)
            if bad is not None and from_cache:
                # A stored answer that no longer validates (an older release cached it, or
                # the schema's rules changed): ask the model again instead of replaying it.
                skip_cache = True
                continue
            kept.extend(fresh)
            if bad is not None:
                unusable, problem = bad
                if repaired:
                    raise JudgeOutputError(
                        f"the judge's answer did not match the expected format, even after one "
                        f"repair attempt: {problem}. Raw answer: {show(unusable.text, 2000)}",
                        raw=unusable.text,
                    ) from None
                repaired = True
                messages = [*messages, *self._repair_messages(unusable.text, problem, spec)]
                continue
            if not from_cache:
                # Only answers that passed validation are stored: a retry of a failed row must
                # reach the model, never replay the unusable answer.
                store_answers(cache, key, answers[:want])
            if len(kept) >= n:
                if spec.kind != "text":
                    self._rung_start = index
                values = [v for v, _ in kept]
                return Outcome(values[0], usage, rung, values, [a for _, a in kept])

    def _retries_for(self, exc: BaseException) -> int:
        """How many retries a failure deserves under the judge's policy."""
        if isinstance(exc, JudgeServerError):
            return self.retry.max_retries  # the SDK does not retry malformed replies
        if not is_transient(exc) or self.backend.sdk_retries:
            # A caller's client that retries by itself has already retried this error.
            return 0
        return self.retry.max_retries

    def _give_up(self, exc: BaseException, attempts: int) -> BaseException:
        """The error to raise once ``exc`` is final after ``attempts`` requests."""
        if isinstance(exc, JudgeServerError):
            return exc.with_attempts(attempts) if attempts > 1 else exc
        backend = self.backend
        requests = attempts * (backend.sdk_retries + 1)
        if is_timeout(exc):
            return JudgeTimeoutError(
                timeout=backend.timeout, attempts=requests, model=backend.model_name
            )
        if is_connection_failure(exc):
            return JudgeConnectionError(
                reason=connection_reason(exc), attempts=requests, model=backend.model_name
            )
        return exc

    def _prepare_from(
        self, index: int, messages: list[dict[str, Any]], spec: SchemaSpec, n: int = 1
    ) -> tuple[int, Any]:
        """Prepare the first rung from ``index`` on that this model supports at all."""
        rungs = self._rungs_for(spec)
        backend = self.backend
        while True:
            try:
                payload = backend.prepare(rungs[index], messages, spec)
            except NotImplementedError:
                # e.g. a LangChain model without with_structured_output / bind_tools
                if index + 1 >= len(rungs):
                    raise
                index += 1
                continue
            if n > 1 or self.weighted:
                payload = backend.with_sampling(
                    payload, n=n, top_logprobs=TOP_LOGPROBS if self.weighted else None
                )
            return index, payload

    def _cache_slot(
        self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec, n: int = 1
    ) -> tuple[JudgeCache | None, str]:
        """The active judge cache (set by a batch run; usually none) and this call's key."""
        cache = active_cache.get()
        if cache is None:
            return None, ""
        backend = self.backend
        material: dict[str, Any] = {
            "backend": type(backend).__name__,
            "model": backend.model_name,
            "params": backend.cache_params(),
            "rung": rung,
            "messages": messages,
            "schema": spec.schema,
        }
        if n > 1:
            material["n"] = n
        if self.weighted:
            material["top_logprobs"] = TOP_LOGPROBS
        key = cache_key(material)
        describe = getattr(cache, "describe_request", None)
        if describe is not None:  # a cassette keeps what the request was, for its file
            describe(key, material)
        return cache, key

    def _repair_messages(
        self, raw: str, err: AnswerError, spec: SchemaSpec
    ) -> list[dict[str, Any]]:
        again = f"That reply cannot be used: {err}. Answer again with "
        if spec.kind == "text":
            again += "the message only."
        else:
            again += (
                "one JSON object and nothing else, following this JSON schema exactly:\n"
                + json.dumps(spec.schema, indent=2)
            )
        return [
            {"role": "assistant", "content": raw or "(empty reply)"},
            {"role": "user", "content": again},
        ]

    # ------------------------------------------------------------------ result
    def to_scorer_value(self, outcome: Outcome) -> Any:
        """What the scorer hands to ``_run_evaluator``."""
        if self.raw_output:
            return outcome.value
        if len(outcome.values) <= 1 and not self.weighted:
            score, reasoning = outcome.value
            metadata = {"usage": outcome.usage} if outcome.usage else None
            return (score, reasoning, metadata)
        scores = [score for score, _ in outcome.values]
        reasonings = [reasoning for _, reasoning in outcome.values]
        return read_scores(self.spec, outcome, scores, reasonings, weighted=self.weighted)

    # ------------------------------------------------------------------ drivers
    def _call_flow(self, call: JudgeCall) -> Conversation:
        return self.flow(call.inputs, call.outputs, call.reference_outputs, call.extra, call.spec)

    def ask_sync(self, call: JudgeCall) -> Outcome:
        """Run :meth:`flow` for ``call`` with blocking I/O and return the validated outcome."""
        return drive(self._call_flow(call), self._perform_sync)

    async def ask_async(self, call: JudgeCall) -> Outcome:
        """Async twin of :meth:`ask_sync`."""
        return await adrive(self._call_flow(call), self._perform_async)

    def _perform_sync(self, step: Step) -> Any:
        if isinstance(step, Send):
            return send(self.backend, step.payload)
        if isinstance(step, Sleep):
            note_pause(step.seconds)
            time.sleep(step.seconds)
            return None
        if isinstance(step, Fanout):
            return [drive(flow, self._perform_sync) for flow in step.flows]
        if inspect.iscoroutine(step.awaitable):
            step.awaitable.close()
        raise TypeError(
            "the prompt function returned an awaitable, which a sync judge cannot await; use the "
            "async factory (e.g. create_async_llm_as_judge) for async prompts"
        )

    def _perform_async(self, step: Step) -> Any:
        if isinstance(step, Send):
            return asend(self.backend, step.payload)
        if isinstance(step, Sleep):
            note_pause(step.seconds)
            return asyncio.sleep(step.seconds)
        if isinstance(step, Fanout):
            return gather_all([adrive(flow, self._perform_async) for flow in step.flows])
        return step.awaitable


async def gather_all(calls: Sequence[Awaitable[Any]]) -> list[Any]:
    """Run ``calls`` concurrently; on the first failure cancel the rest and raise it."""
    if len(calls) == 1:
        return [await calls[0]]
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _resolve_backend(
    model: str, so_kwargs: Mapping[str, Any], timeout: float | None = None
) -> Backend:
    """The backend for a ``"provider:model"`` string, resolved on the judge's first call.

    A plain ``ChatOpenAI`` built from ``"openai:..."`` is driven through its own OpenAI SDK clients
    (its public ``root_client`` / ``root_async_client``): the same server, key, base URL and
    timeout, without LangChain's per-call runnable machinery (several times the CPU per call).
    Custom ``structured_output_kwargs`` keep the LangChain path, and so does a replaced
    ``openevals.llm.init_chat_model`` (e.g. patched in a test).
    """
    patched = patched_init_chat_model()
    if patched is not None:
        return LangChainBackend(patched(model=model), so_kwargs)
    from openevals.models import resolve_chat_model

    options: dict[str, Any] = {"max_retries": 0}
    if timeout is not None:
        options["timeout"] = timeout
    chat_model = resolve_chat_model(model, **options)
    root = getattr(chat_model, "root_client", None)
    root_async = getattr(chat_model, "root_async_client", None)
    name = getattr(chat_model, "model_name", None)
    if not so_kwargs and root is not None and root_async is not None and isinstance(name, str):
        return OpenAIClientBackend(
            root,
            name,
            async_client_factory=lambda size: owned_async_client(root_async, size),
            owned=True,
        )
    return LangChainBackend(chat_model, so_kwargs)
