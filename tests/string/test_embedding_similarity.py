"""Embedding similarity evaluators: fake OpenAI server, scripted vectors, the real local model."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

import pytest

import openevals.embeddings
from openevals.embeddings import InvalidEmbeddingError, cosine_similarity
from openevals.string import (
    create_async_embedding_similarity_evaluator,
    create_embedding_similarity_evaluator,
)
from openevals.testing import FakeOpenAIServer

FACTORIES = pytest.mark.parametrize(
    "factory",
    [create_embedding_similarity_evaluator, create_async_embedding_similarity_evaluator],
    ids=["sync", "async"],
)


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def evaluate(evaluator: Callable[..., Any], **kwargs: Any) -> Any:
    return await _resolve(evaluator(**kwargs))


async def batch(evaluator: Any, *args: Any, **kwargs: Any) -> Any:
    return await _resolve(evaluator.batch(*args, **kwargs))


pytestmark = pytest.mark.usefixtures("tracing_off")


@pytest.fixture
def server(openai_env: FakeOpenAIServer) -> FakeOpenAIServer:
    """The fake server behind every "openai:..." embedding model string."""
    return openai_env


MODEL = "openai:text-embedding-test"


def _openai_embeddings(server: FakeOpenAIServer) -> Any:
    """A LangChain OpenAIEmbeddings instance pointed at the fake server."""
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(
        model="text-embedding-test",
        base_url=server.base_url,
        api_key="test-key",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
    )


# --------------------------------------------------------------------------- fake server


@FACTORIES
async def test_scripted_vectors_give_exact_cosine_and_dot(
    factory: Any, server: FakeOpenAIServer
) -> None:
    server.set_embedding("three four", [3.0, 4.0])
    server.set_embedding("four three", [4.0, 3.0])
    cos = factory(model=MODEL)
    dot = factory(model=MODEL, algorithm="dot_product")
    assert await evaluate(cos, outputs="three four", reference_outputs="four three") == {
        "key": "embedding_similarity",
        "score": 0.96,
        "comment": None,
        "metadata": None,
    }
    result = await evaluate(dot, outputs="three four", reference_outputs="four three")
    assert result["score"] == 24.0  # dot product is unbounded


@FACTORIES
async def test_one_request_per_evaluation_with_both_texts(
    factory: Any, server: FakeOpenAIServer
) -> None:
    evaluator = factory(model=MODEL)
    result = await evaluate(
        evaluator, outputs="The weather is nice!", reference_outputs="The weather is very nice!"
    )
    expected = cosine_similarity(
        server.embedding_for("The weather is nice!"),
        server.embedding_for("The weather is very nice!"),
    )
    assert result["score"] == round(expected, 2)
    assert [body["input"] for body in server.embedding_requests] == [
        ["The weather is nice!", "The weather is very nice!"]
    ]
    assert server.embedding_requests[0]["model"] == "text-embedding-test"
    assert (await evaluate(evaluator, outputs="same", reference_outputs="same"))["score"] == 1.0
    assert len(server.embedding_requests) == 2


@FACTORIES
async def test_zero_vector_is_a_value_error_naming_the_side(
    factory: Any, server: FakeOpenAIServer
) -> None:
    server.set_embedding("nothing", [0.0] * 32)
    for algorithm in ("cosine", "dot_product"):
        evaluator = factory(model=MODEL, algorithm=algorithm)
        with pytest.raises(
            InvalidEmbeddingError,
            match=f"model {MODEL!r} returned the zero vector for `reference_outputs`",
        ):
            await evaluate(evaluator, outputs="something", reference_outputs="nothing")
        with pytest.raises(ValueError, match="returned the zero vector for `outputs`"):
            await evaluate(evaluator, outputs="nothing", reference_outputs="something")


@FACTORIES
async def test_client_is_built_once_per_evaluator_and_lazily(
    factory: Any, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = openevals.embeddings.resolve_embeddings
    calls: list[Any] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(openevals.embeddings, "resolve_embeddings", counting)
    evaluator = factory(model=MODEL)
    assert calls == []  # nothing is built (no API key needed) until the first evaluation
    for i in range(3):
        await evaluate(evaluator, outputs=f"a{i}", reference_outputs=f"b{i}")
    assert calls == [((), {"model": MODEL, "max_retries": 0})]  # one retry policy: ours
    assert len(server.embedding_requests) == 3


@FACTORIES
async def test_an_embeddings_instance_wins_over_model(
    factory: Any, fake_openai: FakeOpenAIServer
) -> None:
    emb = _openai_embeddings(fake_openai)
    evaluator = factory(model="not even a valid string", embeddings=emb)
    result = await evaluate(evaluator, outputs="x", reference_outputs="y")
    assert result["score"] == round(
        cosine_similarity(fake_openai.embedding_for("x"), fake_openai.embedding_for("y")), 2
    )
    assert len(fake_openai.embedding_requests) == 1


@FACTORIES
async def test_non_strings_are_serialised_with_sorted_keys_and_not_mutated(
    factory: Any, server: FakeOpenAIServer
) -> None:
    outputs = {"b": [1, 2], "a": "é"}
    reference = ["x", {"z": 1, "y": 2}]
    before = (copy.deepcopy(outputs), copy.deepcopy(reference))
    await evaluate(factory(model=MODEL), outputs=outputs, reference_outputs=reference)
    assert server.embedding_requests[0]["input"] == [
        '{"a": "é", "b": [1, 2]}',
        '["x", {"y": 2, "z": 1}]',
    ]
    assert (outputs, reference) == before


@FACTORIES
@pytest.mark.parametrize("side", ["outputs", "reference_outputs"])
async def test_none_is_a_value_error_naming_the_side(
    factory: Any, side: str, server: FakeOpenAIServer
) -> None:
    kwargs: dict[str, Any] = {"outputs": "x", "reference_outputs": "y", side: None}
    with pytest.raises(ValueError, match=f"needs `{side}`; got None"):
        await evaluate(factory(model=MODEL), **kwargs)
    assert server.embedding_requests == []


@FACTORIES
async def test_unserialisable_values_are_a_type_error(
    factory: Any, server: FakeOpenAIServer
) -> None:
    with pytest.raises(TypeError, match="`outputs` must be a string or a JSON-serialisable"):
        await evaluate(factory(model=MODEL), outputs=object(), reference_outputs="y")


@FACTORIES
def test_creation_time_validation(factory: Any) -> None:
    with pytest.raises(
        ValueError, match="`algorithm` must be one of 'cosine', 'dot_product'; got 'l2'"
    ):
        factory(algorithm="l2")
    with pytest.raises(ValueError, match="provider:model"):
        factory(model="text-embedding-3-small")
    with pytest.raises(TypeError, match="LangChain Embeddings"):
        factory(embeddings="openai:text-embedding-3-small")
    with pytest.raises(TypeError):
        factory("openai:text-embedding-3-small")


@FACTORIES
async def test_embedding_model_returning_the_wrong_count_is_an_error(factory: Any) -> None:
    from langchain_core.embeddings import Embeddings

    class Broken(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]]

        def embed_query(self, text: str) -> list[float]:
            return [1.0, 0.0]

    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        await evaluate(factory(embeddings=Broken()), outputs="a", reference_outputs="b")


@FACTORIES
async def test_server_errors_propagate(factory: Any, server: FakeOpenAIServer) -> None:
    import openai

    server.queue_embeddings(status=400)
    with pytest.raises(openai.BadRequestError):
        await evaluate(factory(model=MODEL), outputs="a", reference_outputs="b")


# --------------------------------------------------------------------------- batch


@FACTORIES
async def test_batch_equals_per_pair_in_one_request(factory: Any, server: FakeOpenAIServer) -> None:
    outputs = ["apple", "banana", {"k": 1}, "apple"]
    references = ["apple pie", "banana", "cherry", "apple pie"]
    evaluator = factory(model=MODEL)
    batched = await batch(evaluator, outputs=outputs, reference_outputs=references)
    assert len(server.embedding_requests) == 1
    # every distinct text once
    assert server.embedding_requests[0]["input"] == [
        "apple",
        "banana",
        '{"k": 1}',
        "apple pie",
        "cherry",
    ]
    single = [
        await evaluate(evaluator, outputs=o, reference_outputs=r)
        for o, r in zip(outputs, references, strict=True)
    ]
    assert batched == single
    assert batched[1]["score"] == 1.0
    pairs = await batch(evaluator, list(zip(outputs, references, strict=True)))
    assert pairs == single


@FACTORIES
async def test_batch_edge_cases(factory: Any, server: FakeOpenAIServer) -> None:
    evaluator = factory(model=MODEL)
    assert await batch(evaluator, outputs=[], reference_outputs=[]) == []
    assert await batch(evaluator, []) == []
    assert server.embedding_requests == []
    with pytest.raises(ValueError, match=r"\(2 items\) and `reference_outputs` \(1 items\)"):
        await batch(evaluator, outputs=["a", "b"], reference_outputs=["a"])
    with pytest.raises(ValueError, match="not both"):
        await batch(evaluator, [("a", "b")], outputs=["a"], reference_outputs=["b"])
    with pytest.raises(ValueError, match="needs `outputs` as a list"):
        await batch(evaluator, outputs="abc", reference_outputs=["a"])
    with pytest.raises(
        ValueError, match=r"pairs\[0\] must be an \(outputs, reference_outputs\) pair"
    ):
        await batch(evaluator, ["abc"])
    with pytest.raises(ValueError, match=r"`reference_outputs\[1\]`; got None"):
        await batch(evaluator, outputs=["a", "b"], reference_outputs=["a", None])
    server.set_embedding("zero", [0.0] * 32)
    with pytest.raises(ValueError, match=r"the zero vector for `reference_outputs\[1\]`"):
        await batch(evaluator, outputs=["a", "b"], reference_outputs=["a", "zero"])
    with pytest.raises(ValueError, match=r"the zero vector for `pairs\[0\]\[0\]`"):
        await batch(evaluator, [("zero", "a")])


# --------------------------------------------------------------------------- the local model


LOCAL = "local:all-MiniLM-L6-v2"


def _local() -> Any:
    # one CPU thread: immune to the slow-down of oversubscribed torch pools on busy machines
    return openevals.embeddings.LocalEmbeddings(num_threads=1)


@FACTORIES
async def test_local_model_readme_example(factory: Any) -> None:
    evaluator = factory(model=LOCAL)
    result = await evaluate(
        evaluator, outputs="The weather is nice!", reference_outputs="The weather is very nice!"
    )
    assert set(result) == {"key", "score", "comment", "metadata"}
    assert result["key"] == "embedding_similarity"
    assert 0.9 <= result["score"] <= 1.0
    assert result["score"] == round(result["score"], 2)


@FACTORIES
async def test_local_model_ranks_similar_above_unrelated(factory: Any) -> None:
    evaluator = factory(embeddings=_local())
    reference = "The cat is sleeping on the sofa."
    close = await evaluate(
        evaluator, outputs="A cat naps on the couch.", reference_outputs=reference
    )
    far = await evaluate(
        evaluator, outputs="Quarterly revenue rose by eight percent.", reference_outputs=reference
    )
    same = await evaluate(evaluator, outputs=reference, reference_outputs=reference)
    assert same["score"] == 1.0
    assert close["score"] > far["score"] + 0.3


@FACTORIES
async def test_local_model_batch_equals_per_pair(factory: Any) -> None:
    evaluator = factory(embeddings=_local())
    outputs = ["I love dogs.", "Paris is in France.", "2 + 2 = 4", "Hello!"]
    references = [
        "Dogs are great.",
        "The capital of France is Paris.",
        "Bananas are yellow.",
        "Hello!",
    ]
    batched = await batch(evaluator, outputs=outputs, reference_outputs=references)
    single = [
        await evaluate(evaluator, outputs=o, reference_outputs=r)
        for o, r in zip(outputs, references, strict=True)
    ]
    assert batched == single
    assert batched[3]["score"] == 1.0
    assert batched[1]["score"] > batched[2]["score"]


@FACTORIES
async def test_non_finite_vectors_from_an_embeddings_instance_name_its_model(
    factory: Any, fake_openai: FakeOpenAIServer
) -> None:
    emb = _openai_embeddings(fake_openai)
    fake_openai.queue_embeddings(
        body='{"object": "list", "model": "m", "data": ['
        '{"object": "embedding", "index": 0, "embedding": [1.0, 2.0]},'
        '{"object": "embedding", "index": 1, "embedding": [NaN, 2.0]}]}'
    )
    with pytest.raises(
        InvalidEmbeddingError,
        match=r"^embedding model OpenAIEmbeddings\(model='text-embedding-test'\) returned a "
        r"non-finite vector for `reference_outputs` \(nan at dimension 0 of 2\)",
    ):
        await evaluate(factory(embeddings=emb), outputs="x", reference_outputs="y")
