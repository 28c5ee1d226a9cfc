"""Embeddings get the judges' treatment (issue 27, item 2).

* deep (2,000 levels) and cyclic ``outputs`` / ``reference_outputs``: scored, or a ValueError
  naming the parameter; never ``RecursionError`` (single calls and ``.batch``, sync and async);
* faulty servers: 5xx, 429 with ``Retry-After``, dropped connections, bodies that are not JSON
  and HTML pages are retried, then raise ``EmbeddingServerError`` naming the model; a server that
  never answers raises ``EmbeddingTimeoutError`` after ``timeout=`` per attempt; a 400 is raised
  at once, unretried;
* ``timeout=`` is checked when the evaluator is created.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from openevals import _embed_calls
from openevals._structure import encode_json
from openevals.embeddings import (
    EmbeddingError,
    EmbeddingServerError,
    EmbeddingTimeoutError,
    InvalidEmbeddingError,
)
from openevals.string import (
    create_async_embedding_similarity_evaluator,
    create_embedding_similarity_evaluator,
)
from openevals.testing import FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("tracing_off")

MODEL = "openai:text-embedding-test"
FACTORIES = pytest.mark.parametrize(
    "factory",
    [create_embedding_similarity_evaluator, create_async_embedding_similarity_evaluator],
    ids=["sync", "async"],
)
DEPTH = 2_000


def call(value: Any) -> Any:
    return asyncio.run(value) if asyncio.iscoroutine(value) else value


def deep(depth: int = DEPTH) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def cyclic() -> Any:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_embed_calls.BACKOFF, "initial", 0.0)


@pytest.fixture
def env(openai_env: FakeOpenAIServer, no_backoff: None) -> Iterator[FakeOpenAIServer]:
    yield openai_env


# --------------------------------------------------------------------------- deep and cyclic


@FACTORIES
@pytest.mark.usefixtures("env")
def test_deep_values_are_embedded_on_both_sides(factory: Any) -> None:
    value = deep()
    result = call(factory(model=MODEL)(outputs=value, reference_outputs=deep()))
    assert result["score"] == 1.0
    assert encode_json(value, "v") == encode_json(deep(), "v")  # not mutated


@FACTORIES
@pytest.mark.usefixtures("env")
def test_deep_values_in_batch(factory: Any) -> None:
    results = call(
        factory(model=MODEL).batch(outputs=["a", deep()], reference_outputs=["a", deep()])
    )
    assert [r["score"] for r in results] == [1.0, 1.0]


@FACTORIES
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_a_cycle_is_a_value_error_naming_its_side(
    factory: Any, side: str, env: FakeOpenAIServer
) -> None:
    kwargs = {"outputs": "a", "reference_outputs": "b", side: cyclic()}
    with pytest.raises(ValueError, match=rf"^`{side}` contains itself: {side}\['self'\]"):
        call(factory(model=MODEL)(**kwargs))
    assert env.embedding_requests == []


@FACTORIES
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
def test_a_cycle_in_batch_names_the_list_entry(factory: Any, side: str) -> None:
    lists: dict[str, list[Any]] = {"outputs": ["a", "b"], "reference_outputs": ["a", "b"]}
    lists[side][1] = cyclic()
    with pytest.raises(ValueError, match=rf"^`{side}\[1\]` contains itself"):
        call(factory(model=MODEL).batch(**lists))
    pairs = [("a", "a"), (cyclic(), "b")]
    with pytest.raises(ValueError, match=r"^`pairs\[1\]\[0\] \(outputs\)` contains itself"):
        call(factory(model=MODEL).batch(pairs))


@FACTORIES
def test_a_cycle_through_a_langchain_message_is_named(factory: Any) -> None:
    from langchain_core.messages import AIMessage

    value: list[Any] = [AIMessage(content="hi")]
    value.append(value)
    with pytest.raises(ValueError, match=r"^`outputs` contains itself: outputs\[1\]"):
        call(factory(model=MODEL)(outputs=value, reference_outputs="b"))


# --------------------------------------------------------------------------- faulty servers

TRANSIENT = {
    "500": {"status": 500},
    "503-html": {
        "status": 503,
        "body": b"<html><body>503 Service Unavailable</body></html>",
        "headers": {"Content-Type": "text/html"},
    },
    "502-html": {
        "status": 502,
        "body": b"<html><body>502 Bad Gateway</body></html>",
        "headers": {"Content-Type": "text/html"},
    },
    "429": {"status": 429, "headers": {"Retry-After": "0"}},
    "malformed-json": {"body": b'{"object": "list", "data": [{"embedding": [1.0,'},
    "html-200": {
        "body": b"<html><body>502 Bad Gateway</body></html>",
        "headers": {"Content-Type": "text/html"},
    },
    "reset": {"reset": True},
    "no-data": {"body": {"object": "list"}},
}


@FACTORIES
@pytest.mark.parametrize("fault", list(TRANSIENT))
@pytest.mark.parametrize("form", ["single", "batch"])
def test_a_transient_fault_is_retried_then_scored(
    factory: Any, fault: str, form: str, env: FakeOpenAIServer
) -> None:
    env.queue_embeddings(**TRANSIENT[fault])
    evaluator = factory(model=MODEL)
    if form == "single":
        result = call(evaluator(outputs="same", reference_outputs="same"))
    else:
        [result] = call(evaluator.batch([("same", "same")]))
    assert result["score"] == 1.0
    assert len(env.embedding_requests) == 2


@FACTORIES
@pytest.mark.parametrize("fault", list(TRANSIENT))
def test_a_fault_that_persists_is_an_embedding_server_error_naming_the_model(
    factory: Any, fault: str, env: FakeOpenAIServer
) -> None:
    for _ in range(_embed_calls.MAX_RETRIES + 1):
        env.queue_embeddings(**TRANSIENT[fault])
    with pytest.raises(
        EmbeddingServerError, match=r"^embedding model 'openai:text-embedding-test'"
    ):
        call(factory(model=MODEL)(outputs="a", reference_outputs="b"))
    assert len(env.embedding_requests) == _embed_calls.MAX_RETRIES + 1


@FACTORIES
def test_a_persisting_fault_from_a_callers_client_is_also_named(
    factory: Any, env: FakeOpenAIServer
) -> None:
    from langchain_openai import OpenAIEmbeddings

    client = OpenAIEmbeddings(
        model="text-embedding-test",
        base_url=env.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    for _ in range(_embed_calls.MAX_RETRIES + 1):
        env.queue_embeddings(body=b"not json")
    with pytest.raises(
        EmbeddingServerError, match=r"OpenAIEmbeddings\(model='text-embedding-test'\)"
    ):
        call(factory(embeddings=client)(outputs="a", reference_outputs="b"))


@FACTORIES
def test_a_bad_request_is_raised_at_once(factory: Any, env: FakeOpenAIServer) -> None:
    import openai

    env.queue_embeddings(status=400)
    with pytest.raises(openai.BadRequestError):
        call(factory(model=MODEL)(outputs="a", reference_outputs="b"))
    assert len(env.embedding_requests) == 1


@FACTORIES
def test_retry_after_is_honoured(factory: Any, env: FakeOpenAIServer) -> None:
    env.queue_embeddings(status=429, headers={"Retry-After": "0.4"})
    start = time.monotonic()
    assert call(factory(model=MODEL)(outputs="x", reference_outputs="x"))["score"] == 1.0
    assert time.monotonic() - start >= 0.35


@FACTORIES
def test_a_server_that_never_answers_times_out(factory: Any, env: FakeOpenAIServer) -> None:
    for _ in range(_embed_calls.MAX_RETRIES + 1):
        env.queue_embeddings(hang=True)
    start = time.monotonic()
    with pytest.raises(EmbeddingTimeoutError, match=r"within 0\.2 s in 4 attempts") as caught:
        call(factory(model=MODEL, timeout=0.2)(outputs="a", reference_outputs="b"))
    assert time.monotonic() - start < 10
    assert caught.value.timeout == 0.2
    assert caught.value.model == repr(MODEL)
    assert isinstance(caught.value, EmbeddingError)
    assert isinstance(caught.value, TimeoutError)


@FACTORIES
def test_one_hang_then_an_answer_is_scored(factory: Any, env: FakeOpenAIServer) -> None:
    env.queue_embeddings(hang=True)
    result = call(factory(model=MODEL, timeout=0.2)(outputs="a", reference_outputs="a"))
    assert result["score"] == 1.0


def test_the_error_classes_form_one_hierarchy() -> None:
    assert issubclass(EmbeddingServerError, EmbeddingError)
    assert issubclass(EmbeddingServerError, RuntimeError)
    assert issubclass(EmbeddingTimeoutError, EmbeddingError)
    assert issubclass(InvalidEmbeddingError, EmbeddingError)
    assert issubclass(InvalidEmbeddingError, ValueError)


# --------------------------------------------------------------------------- timeout=


@FACTORIES
@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5", [1]])
def test_a_bad_timeout_is_refused_at_creation(factory: Any, bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^`timeout` must be a number of seconds > 0"):
        factory(model=MODEL, timeout=bad)


@FACTORIES
def test_timeout_with_a_callers_embeddings_or_a_local_model_is_refused(factory: Any) -> None:
    from langchain_core.embeddings import FakeEmbeddings

    with pytest.raises(ValueError, match=r"`timeout` applies to a model built from `model`"):
        factory(embeddings=FakeEmbeddings(size=3), timeout=5)
    with pytest.raises(ValueError, match=r"`timeout` is supported for 'openai:...' models"):
        factory(model="local:all-MiniLM-L6-v2", timeout=5)


# --------------------------------------------------------------------------- answer relevancy


def relevancy(factory_name: str, server: FakeOpenAIServer) -> Any:
    from langchain_openai import OpenAIEmbeddings

    from openevals.rag import llm_metrics
    from openevals.testing import chat_model

    embeddings = OpenAIEmbeddings(
        base_url=server.base_url,
        api_key="k",  # type: ignore[arg-type]
        model="text-embedding-test",
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    factory = getattr(llm_metrics, factory_name)
    return factory(judge=chat_model(server), embeddings=embeddings, strictness=2)


RELEVANCY = pytest.mark.parametrize(
    "factory_name",
    ["create_answer_relevancy_evaluator", "create_async_answer_relevancy_evaluator"],
    ids=["sync", "async"],
)


@RELEVANCY
@pytest.mark.parametrize("fault", ["500", "malformed-json", "html-200", "reset"])
def test_answer_relevancy_retries_its_embedding_call(
    factory_name: str, fault: str, fake_openai: FakeOpenAIServer, no_backoff: None
) -> None:
    fake_openai.queue_chat(json={"questions": ["q1?", "q2?"], "noncommittal": False})
    fake_openai.queue_embeddings(**TRANSIENT[fault])
    result = call(relevancy(factory_name, fake_openai)(inputs="q?", outputs="an answer"))
    assert result["key"] == "answer_relevancy"
    assert isinstance(result["score"], float)
    assert len(fake_openai.embedding_requests) == 2


@RELEVANCY
def test_answer_relevancy_raises_an_embedding_server_error_naming_the_model(
    factory_name: str, fake_openai: FakeOpenAIServer, no_backoff: None
) -> None:
    fake_openai.queue_chat(json={"questions": ["q1?", "q2?"], "noncommittal": False})
    for _ in range(_embed_calls.MAX_RETRIES + 1):
        fake_openai.queue_embeddings(
            body=b"<html>502</html>", headers={"Content-Type": "text/html"}
        )
    with pytest.raises(
        EmbeddingServerError, match=r"OpenAIEmbeddings\(model='text-embedding-test'"
    ):
        call(relevancy(factory_name, fake_openai)(inputs="q?", outputs="an answer"))


@FACTORIES
def test_a_bug_in_a_callers_own_embeddings_class_is_raised_at_once(factory: Any) -> None:
    from langchain_core.embeddings import Embeddings

    class Buggy(Embeddings):
        calls = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            Buggy.calls += 1
            raise AttributeError("'NoneType' object has no attribute 'encode'")

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    with pytest.raises(AttributeError, match="has no attribute 'encode'"):
        call(factory(embeddings=Buggy())(outputs="a", reference_outputs="b"))
    assert Buggy.calls == 1


@FACTORIES
def test_a_connection_error_from_any_client_is_retried(factory: Any, no_backoff: None) -> None:
    from langchain_core.embeddings import Embeddings

    class Flaky(Embeddings):
        calls = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise ConnectionResetError("connection reset by peer")
            return [[1.0, 2.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    assert call(factory(embeddings=Flaky())(outputs="a", reference_outputs="b"))["score"] == 1.0
    assert Flaky.calls == 2
