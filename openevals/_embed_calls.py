"""Calling an embedding model: what can go wrong, what is retried, and the errors raised.

Every error about the embedding *model* (rather than the caller's arguments, which get
``TypeError``/``ValueError`` naming the parameter) derives from :class:`EmbeddingError`, the
embeddings' counterpart of the judges' ``JudgeError``:

* :class:`EmbeddingServerError` - the server's reply could not be read (a body that is not JSON,
  an HTML error page, a reply without vectors) or the server kept failing (5xx, 429, dropped
  connections) until the retries were used up;
* :class:`EmbeddingTimeoutError` - every attempt ran past the timeout; carries that timeout;
* ``InvalidEmbeddingError`` (in :mod:`openevals.embeddings`) - vectors arrived, but no
  similarity can be computed from them.

One call is a sans-IO flow (:func:`embed_flow`) run by the package's drivers: it yields
:class:`Embed` (call the model) and :class:`Pause` (back off), so the sync and async evaluators
share its retry rules.
"""

from __future__ import annotations

import json
import random
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Final

from openevals._judge.errors import is_timeout, is_transient, retry_after_seconds, snippet

MAX_RETRIES: Final = 3
"""Retries of a transient failure before the error is raised (4 attempts in all)."""

BACKOFF: dict[str, float] = {"initial": 0.5, "max": 30.0}
"""Exponential backoff with jitter: ``initial * 2**attempt`` seconds, at most ``max``; a
``Retry-After`` header wins (also capped at ``max``)."""


class EmbeddingError(Exception):
    """Base class of the errors an embedding evaluator raises when the model or its server
    fails it. Never turned into a score; in ``evaluate()`` it is recorded on the row."""


class EmbeddingServerError(EmbeddingError, RuntimeError):
    """The embedding server's reply could not be used, or the server kept failing.

    ``model`` names the model, ``reason`` says what went wrong, ``attempts`` counts the requests
    made. The last underlying error is the ``__cause__``.
    """

    def __init__(self, reason: str, *, model: str, attempts: int) -> None:
        self.reason = reason
        self.model = model
        self.attempts = attempts
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        super().__init__(
            f"embedding model {model} failed{tries}: {reason}. This is a fault of the model's "
            "server (or a proxy in front of it), not of the evaluated text; no score is given."
        )


class EmbeddingTimeoutError(EmbeddingError, TimeoutError):
    """Every attempt to reach the embedding model ran past the timeout.

    ``timeout`` is the timeout in seconds (``None`` when unknown), ``attempts`` the number of
    requests made, ``model`` the model's name. The last timeout error is the ``__cause__``.
    """

    def __init__(self, *, timeout: float | None, attempts: int, model: str) -> None:
        self.timeout = timeout
        self.attempts = attempts
        self.model = model
        limit = f"{timeout:g} s" if timeout is not None else "the client's timeout"
        super().__init__(
            f"embedding model {model} did not answer within {limit} in {attempts} "
            f"attempt{'s' if attempts != 1 else ''}; pass a larger timeout= to the evaluator "
            "(or to your embeddings object), or check the server"
        )


@dataclass(frozen=True)
class Embed:
    """Embed these texts with the model; the flow receives the vectors."""

    texts: list[str]


@dataclass(frozen=True)
class Pause:
    """Wait this many seconds before the next attempt."""

    seconds: float


# Exceptions the OpenAI SDK and LangChain raise while reading a reply that is not the JSON
# they expect: a truncated or non-JSON body (JSONDecodeError), an HTML page returned as a
# string ('str' object has no attribute 'data'), a JSON value of the wrong shape.
_UNREADABLE: Final = (json.JSONDecodeError, UnicodeDecodeError)
_UNREADABLE_BY_SDK: Final = (AttributeError, KeyError)


def is_sdk_client(client: Any) -> bool:
    """Whether ``client`` is the OpenAI SDK's or LangChain-OpenAI's: their AttributeError /
    KeyError / TypeError while reading a reply mean the reply was not embeddings JSON (from
    another client they may be bugs of its own, raised unretried)."""
    module = type(client).__module__
    return module.startswith(("langchain_openai", "openai"))


def _classify(exc: Exception, sdk: bool) -> str | None:
    """``"timeout"``, ``"transient"``, ``"unreadable"``, or None (not ours to retry)."""
    if isinstance(exc, EmbeddingError):
        return None
    if is_timeout(exc):
        return "timeout"
    if is_transient(exc):
        return "transient"
    if isinstance(exc, _UNREADABLE):
        return "unreadable"
    if sdk and isinstance(exc, _UNREADABLE_BY_SDK):
        return "unreadable"
    if sdk and isinstance(exc, TypeError) and "NoneType" in str(exc):  # a reply without 'data'
        return "unreadable"
    if isinstance(exc, ValueError) and "No embedding data" in str(exc):  # the OpenAI SDK's
        return "unreadable"
    return None


def _delay(attempt: int, exc: BaseException) -> float:
    hinted = retry_after_seconds(exc)
    if hinted is not None:
        return min(hinted, BACKOFF["max"])
    ceiling = min(BACKOFF["max"], BACKOFF["initial"] * (2**attempt))
    return random.uniform(ceiling / 2, ceiling)


def _reason(kind: str, exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    text = snippet(str(exc), 200)
    if kind == "unreadable":
        return f"its reply could not be read as embeddings ({type(exc).__name__}: {text})"
    where = f"HTTP {status}" if isinstance(status, int) else type(exc).__name__
    return f"the request kept failing ({where}: {text})"


def embed_flow(
    texts: list[str],
    *,
    model: str,
    timeout: float | None,
    sdk: bool = True,
    max_retries: int = MAX_RETRIES,
) -> Generator[Embed | Pause, Any, Any]:
    """One embedding request, retried on timeouts, 5xx/429 (honouring ``Retry-After``),
    dropped connections and unreadable replies; returns the model's raw answer.

    Raises :class:`EmbeddingTimeoutError` or :class:`EmbeddingServerError` (naming ``model``)
    when the retries are used up; any other error (a 401, a bad request) is raised at once.
    ``sdk``: the client is the OpenAI SDK's (see :func:`is_sdk_client`).
    """
    attempt = 0
    while True:
        try:
            vectors = yield Embed(texts)
        except Exception as exc:
            kind = _classify(exc, sdk)
            if kind is None:
                raise
            attempt += 1
            if attempt > max_retries:
                if kind == "timeout":
                    raise EmbeddingTimeoutError(
                        timeout=timeout, attempts=attempt, model=model
                    ) from exc
                raise EmbeddingServerError(
                    _reason(kind, exc), model=model, attempts=attempt
                ) from exc
            yield Pause(_delay(attempt - 1, exc))
            continue
        return vectors


def embed(client: Any, texts: list[str], *, model: str, timeout: float | None = None) -> Any:
    """``client.embed_documents(texts)`` with :func:`embed_flow`'s retries (blocking)."""
    import time

    from openevals._drivers import drive

    def perform(step: Embed | Pause) -> Any:
        if isinstance(step, Embed):
            return client.embed_documents(step.texts)
        time.sleep(step.seconds)
        return None

    flow = embed_flow(texts, model=model, timeout=timeout, sdk=is_sdk_client(client))
    return drive(flow, perform)


async def aembed(client: Any, texts: list[str], *, model: str, timeout: float | None = None) -> Any:
    """``await client.aembed_documents(texts)`` with :func:`embed_flow`'s retries."""
    import asyncio

    from openevals._drivers import adrive

    async def perform(step: Embed | Pause) -> Any:
        if isinstance(step, Embed):
            return await client.aembed_documents(step.texts)
        await asyncio.sleep(step.seconds)
        return None

    flow = embed_flow(texts, model=model, timeout=timeout, sdk=is_sdk_client(client))
    return await adrive(flow, perform)
