"""The LLM-as-judge core, written once for the sync and async shells.

The conversation with the model (structured-output rungs, retries with backoff, one repair attempt)
is a generator that *yields* instructions (``Send`` a prepared call, ``Sleep``) and receives their
outcome. The sync driver performs them with blocking calls, the async driver with ``await``; all
decisions live in the generator, so the two shells cannot drift apart.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._judge.answers import AnswerError, check_answer_size, validate_answer
from openevals._judge.backends import Answer, Backend, OpenAIClientBackend
from openevals._judge.cache import JudgeCache, active_cache, cache_key
from openevals._judge.errors import (
    JudgeError,
    JudgeOutputError,
    JudgeServerError,
    JudgeTimeoutError,
    is_timeout,
    is_transient,
    is_unsupported,
    retry_after_seconds,
)
from openevals._judge.langchain_backend import LangChainBackend
from openevals._judge.prompting import (
    PromptSpec,
    check_encodable,
    finalize_messages,
    make_prompt_spec,
    start_messages,
)
from openevals._judge.schema import SchemaSpec, default_score_schema, normalize_output_schema

__all__ = [
    "JudgeCore",
    "JudgeError",
    "JudgeOutputError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "RetryPolicy",
    "Send",
    "Sleep",
]


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; ``Retry-After`` from the server wins when present."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, exc: BaseException) -> float:
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            return min(hinted, self.max_delay)
        ceiling = min(self.max_delay, self.initial_delay * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)


DEFAULT_RETRY_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Send:
    payload: Any


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass
class Outcome:
    value: Any
    usage: dict[str, int] | None
    rung: str


Conversation = Generator[Send | Sleep, Any, Outcome]


def _add_usage(total: dict[str, int] | None, more: dict[str, int] | None) -> dict[str, int] | None:
    if more is None:
        return total
    if total is None:
        return dict(more)
    return {k: total.get(k, 0) + more.get(k, 0) for k in set(total) | set(more)}


def _looks_like_chat_model(obj: Any) -> bool:
    return callable(getattr(obj, "invoke", None)) and callable(getattr(obj, "ainvoke", None))


def _validate_choices(choices: Any) -> list[float] | None:
    if choices is None:
        return None
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence):
        raise TypeError(f"`choices` must be a list of numbers, got {type(choices).__name__}")
    if not choices:
        raise ValueError(
            "`choices` is empty; give the allowed scores, e.g. choices=[0.0, 0.5, 1.0]"
        )
    out = []
    for c in choices:
        if isinstance(c, bool) or not isinstance(c, (int, float)):
            raise TypeError(f"`choices` must hold numbers, got {c!r}")
        out.append(float(c))
    return out


class JudgeCore:
    """Everything about one judge that does not depend on sync vs async."""

    def __init__(
        self,
        *,
        prompt: Any,
        feedback_key: str = "score",
        judge: Any = None,
        model: str | None = None,
        system: str | None = None,
        continuous: bool = False,
        choices: Sequence[float] | None = None,
        use_reasoning: bool = True,
        few_shot_examples: Sequence[Mapping[str, Any]] | None = None,
        output_schema: Any = None,
        structured_output_kwargs: Mapping[str, Any] | None = None,
        max_retries: int = 3,
        run_name: str | None = None,
    ) -> None:
        if not isinstance(feedback_key, str) or not feedback_key:
            raise ValueError(f"`feedback_key` must be a non-empty string, got {feedback_key!r}")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"`system` must be a string, got {type(system).__name__}")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"`max_retries` must be an integer >= 0, got {max_retries!r}")
        choice_list = _validate_choices(choices)
        if continuous and choice_list is not None:
            raise ValueError(
                "`continuous=True` and `choices` are mutually exclusive: continuous scores are any "
                "float in [0, 1], choices restrict the score to a list; pass one of them"
            )
        if few_shot_examples is not None and (
            isinstance(few_shot_examples, (str, bytes, Mapping))
            or not isinstance(few_shot_examples, Sequence)
        ):
            raise TypeError("`few_shot_examples` must be a list of example dicts")
        if structured_output_kwargs is not None and not isinstance(
            structured_output_kwargs, Mapping
        ):
            raise TypeError("`structured_output_kwargs` must be a dict")
        self.prompt: PromptSpec = make_prompt_spec(prompt)
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
                continuous=continuous, choices=choice_list, use_reasoning=use_reasoning
            )
        )
        self.raw_output = self.spec.kind != "score"
        self.feedback_key = feedback_key
        self.run_name = run_name or (
            "llm_as_judge" if feedback_key == "score" else f"llm_as_{feedback_key}_judge"
        )
        self.system = system
        self.few_shot_examples = [dict(e) for e in few_shot_examples or []]
        for i, example in enumerate(self.few_shot_examples):
            if "score" not in example:
                raise ValueError(f"few_shot_examples[{i}] has no 'score'")
        so_kwargs = dict(structured_output_kwargs or {})
        so_kwargs.update(self.prompt.structured_kwargs)
        self.retry = RetryPolicy(max_retries=max_retries)
        self._lock = threading.Lock()
        self._backend: Backend | None = None
        self._lazy_backend = judge is None
        self._rung_start = 0
        self._model = model
        self._so_kwargs = so_kwargs
        if judge is None and model is None:
            raise ValueError(
                "pass `model` (a 'provider:model' string such as 'openai:gpt-4.1-mini') or `judge` "
                "(a LangChain chat model or an OpenAI client)"
            )
        if model is not None and not isinstance(model, str):
            raise TypeError(
                f"`model` must be a 'provider:model' string, got {type(model).__name__}"
            )
        if judge is not None:
            if hasattr(judge, "chat") and not _looks_like_chat_model(judge):
                if model is None:
                    raise ValueError(
                        "an OpenAI client was passed as `judge`; also pass `model` with the model "
                        "name, e.g. model='gpt-4.1-mini'"
                    )
                self._backend = OpenAIClientBackend(judge, model)
            elif _looks_like_chat_model(judge):
                self._backend = LangChainBackend(judge, so_kwargs)
            else:
                raise TypeError(
                    "`judge` must be a LangChain chat model or an OpenAI client (openai.OpenAI / "
                    f"AsyncOpenAI); got {type(judge).__name__}"
                )
        else:
            from openevals.models import parse_model_string

            parse_model_string(model)  # type: ignore[arg-type]

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
    @property
    def backend(self) -> Backend:
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    from openevals.models import resolve_chat_model

                    assert self._model is not None
                    chat_model = resolve_chat_model(self._model, max_retries=0)
                    self._backend = _backend_for_resolved(chat_model, self._so_kwargs)
        return self._backend

    @property
    def is_async_prompt(self) -> bool:
        return self.prompt.is_async_callable

    # ------------------------------------------------------------------ request
    def start(
        self, inputs: Any, outputs: Any, reference_outputs: Any, extra: dict[str, Any]
    ) -> Any:
        """First half of message building; may return an awaitable for async callable prompts."""
        extra = dict(extra)
        attachments = extra.pop("attachments", None)
        return start_messages(
            self.prompt,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
            extra=extra,
            attachments=attachments,
        )

    def finish(self, raw_messages: Any, extra: Mapping[str, Any]) -> list[dict[str, Any]]:
        return finalize_messages(
            raw_messages,
            system=self.system,
            few_shot_examples=self.few_shot_examples,
            attachments=extra.get("attachments"),
            from_callable=self.prompt.kind == "callable",
        )

    def check_encodable(
        self,
        messages: list[dict[str, Any]],
        inputs: Any,
        outputs: Any,
        reference_outputs: Any,
        extra: Mapping[str, Any],
    ) -> None:
        """A ``ValueError`` naming the parameter when the request cannot be encoded as UTF-8."""
        sources = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
        sources.update(extra)
        sources.update(system=self.system, few_shot_examples=self.few_shot_examples)
        check_encodable(messages, sources)

    # ------------------------------------------------------------------ conversation
    def conversation(
        self, messages: list[dict[str, Any]], spec: SchemaSpec | None = None
    ) -> Conversation:
        spec = spec or self.spec
        backend = self.backend
        rungs = backend.rungs
        index = self._rung_start
        repaired = False
        skip_cache = False
        usage: dict[str, int] | None = None
        while True:
            index, payload = self._prepare_from(index, messages, spec)
            rung = rungs[index]
            attempt = 0
            while True:
                cache, key = self._cache_slot(rung, messages, spec)
                answer = None if skip_cache else _lookup(cache, key)
                from_cache, skip_cache = answer is not None, False
                if answer is not None:
                    break
                try:
                    answer = backend.read(rung, (yield Send(payload)))
                    break
                except Exception as exc:
                    if is_unsupported(exc) and index + 1 < len(rungs):
                        index, payload = self._prepare_from(index + 1, messages, spec)
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
            usage = _add_usage(usage, answer.usage)
            check_answer_size(answer.text)
            try:
                if answer.data is None:
                    raise AnswerError("the reply contains no JSON object")
                value = validate_answer(spec, answer.data)
            except AnswerError as err:
                if from_cache:
                    # A stored answer that no longer validates (an older release cached it, or
                    # the schema's rules changed): ask the model again instead of replaying it.
                    skip_cache = True
                    continue
                if repaired:
                    raise JudgeOutputError(
                        f"the judge's answer did not match the expected format, even after one "
                        f"repair attempt: {err}. Raw answer: {answer.text[:2000]!r}",
                        raw=answer.text,
                    ) from None
                repaired = True
                messages = [*messages, *self._repair_messages(answer.text, err, spec)]
                continue
            if not from_cache:
                # Only answers that passed validation are stored: a retry of a failed row must
                # reach the model, never replay the unusable answer.
                _store(cache, key, answer)
            self._rung_start = index
            return Outcome(value=value, usage=usage, rung=rung)

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
        if is_timeout(exc):
            backend = self.backend
            return JudgeTimeoutError(
                timeout=backend.timeout,
                attempts=attempts * (backend.sdk_retries + 1),
                model=backend.model_name,
            )
        return exc

    def _prepare_from(
        self, index: int, messages: list[dict[str, Any]], spec: SchemaSpec
    ) -> tuple[int, Any]:
        """Prepare the first rung from ``index`` on that this model supports at all."""
        rungs = self.backend.rungs
        while True:
            try:
                return index, self.backend.prepare(rungs[index], messages, spec)
            except NotImplementedError:
                # e.g. a LangChain model without with_structured_output / bind_tools
                if index + 1 >= len(rungs):
                    raise
                index += 1

    def _cache_slot(
        self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec
    ) -> tuple[JudgeCache | None, str]:
        """The active judge cache (set by a batch run; usually none) and this call's key."""
        cache = active_cache.get()
        if cache is None:
            return None, ""
        return cache, cache_key(self._key_material(rung, messages, spec))

    def _key_material(
        self, rung: str, messages: list[dict[str, Any]], spec: SchemaSpec
    ) -> dict[str, Any]:
        backend = self.backend
        return {
            "backend": type(backend).__name__,
            "model": backend.model_name,
            "params": backend.cache_params(),
            "rung": rung,
            "messages": messages,
            "schema": spec.schema,
        }

    def _repair_messages(
        self, raw: str, err: AnswerError, spec: SchemaSpec
    ) -> list[dict[str, Any]]:
        return [
            {"role": "assistant", "content": raw or "(empty reply)"},
            {
                "role": "user",
                "content": (
                    f"That reply cannot be used: {err}. Answer again with one JSON object and "
                    "nothing else, following this JSON schema exactly:\n"
                    + json.dumps(spec.schema, indent=2)
                ),
            },
        ]

    # ------------------------------------------------------------------ result
    def to_scorer_value(self, outcome: Outcome) -> Any:
        """What the scorer hands to ``_run_evaluator``."""
        if self.raw_output:
            return outcome.value
        score, reasoning = outcome.value
        metadata = {"usage": outcome.usage} if outcome.usage else None
        return (score, reasoning, metadata)

    # ------------------------------------------------------------------ drivers
    def run_sync(
        self, inputs: Any, outputs: Any, reference_outputs: Any, extra: dict[str, Any]
    ) -> Any:
        """Judge one call and return what the scorer hands to ``_run_evaluator``."""
        return self.to_scorer_value(self.ask_sync(inputs, outputs, reference_outputs, extra))

    async def run_async(
        self, inputs: Any, outputs: Any, reference_outputs: Any, extra: dict[str, Any]
    ) -> Any:
        """Async twin of :meth:`run_sync`."""
        return self.to_scorer_value(await self.ask_async(inputs, outputs, reference_outputs, extra))

    def ask_sync(
        self,
        inputs: Any,
        outputs: Any,
        reference_outputs: Any,
        extra: dict[str, Any],
        spec: SchemaSpec | None = None,
    ) -> Outcome:
        """Build the messages, talk to the model (blocking) and return the validated outcome."""
        raw = self.start(inputs, outputs, reference_outputs, extra)
        messages = self.finish(raw, extra)
        self.check_encodable(messages, inputs, outputs, reference_outputs, extra)
        backend = self.backend
        gen = self.conversation(messages, spec)
        step, done = _advance(gen, None, None)
        while done is None:
            reply, error = None, None
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
            else:
                try:
                    reply = backend.send(step.payload)  # type: ignore[union-attr]
                except Exception as exc:
                    error = exc
            step, done = _advance(gen, reply, error)
        return done

    async def ask_async(
        self,
        inputs: Any,
        outputs: Any,
        reference_outputs: Any,
        extra: dict[str, Any],
        spec: SchemaSpec | None = None,
    ) -> Outcome:
        """Async twin of :meth:`ask_sync`."""
        raw = self.start(inputs, outputs, reference_outputs, extra)
        if inspect.isawaitable(raw):
            raw = await raw
        messages = self.finish(raw, extra)
        self.check_encodable(messages, inputs, outputs, reference_outputs, extra)
        backend = self.backend
        gen = self.conversation(messages, spec)
        step, done = _advance(gen, None, None)
        while done is None:
            reply, error = None, None
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            else:
                try:
                    reply = await backend.asend(step.payload)  # type: ignore[union-attr]
                except Exception as exc:
                    error = exc
            step, done = _advance(gen, reply, error)
        return done


def _backend_for_resolved(chat_model: Any, so_kwargs: Mapping[str, Any]) -> Backend:
    """The backend for a model *we* resolved from a ``"provider:model"`` string.

    A plain ``ChatOpenAI`` built from ``"openai:..."`` is driven through its own OpenAI SDK clients:
    the same server, key and base URL, without LangChain's per-call runnable machinery (several
    times the CPU per call). Custom ``structured_output_kwargs`` keep the LangChain path.
    """
    root, root_async = (
        getattr(chat_model, "root_client", None),
        getattr(chat_model, "root_async_client", None),
    )
    if not so_kwargs and root is not None and root_async is not None:
        name = getattr(chat_model, "model_name", None)
        if isinstance(name, str):

            def new_async_client() -> Any:
                # Same key, base URL, headers and timeouts; a connection pool of its own.
                from openai import DefaultAsyncHttpxClient

                return root_async.with_options(http_client=DefaultAsyncHttpxClient())

            return OpenAIClientBackend(
                root, name, async_client_factory=new_async_client, owned=True
            )
    return LangChainBackend(chat_model, so_kwargs)


def _lookup(cache: JudgeCache | None, key: str) -> Answer | None:
    hit = cache.get(key) if cache is not None else None
    if not isinstance(hit, Mapping):
        return None
    return Answer(data=hit.get("data"), text=str(hit.get("text", "")), usage=None)


def _store(cache: JudgeCache | None, key: str, answer: Answer) -> None:
    """Remember an answer that passed validation."""
    if cache is not None and answer.data is not None:
        data = answer.data.model_dump() if hasattr(answer.data, "model_dump") else answer.data
        cache.set(key, {"data": data, "text": answer.text, "usage": answer.usage})


def _advance(
    gen: Conversation, value: Any, error: BaseException | None
) -> tuple[Send | Sleep | None, Outcome | None]:
    """Resume the conversation with a response or an error; ``(next_step, None)`` or ``(None, outcome)``."""
    try:
        step = gen.throw(error) if error is not None else gen.send(value)
    except StopIteration as stop:
        return None, stop.value
    return step, None
