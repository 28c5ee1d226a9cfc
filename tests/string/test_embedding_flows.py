"""Embedding similarity: one flow per entry point, run by _drivers for sync and async alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openevals.string import embedding_similarity as module


class Recording:
    """A LangChain-style embeddings object: two axes, text "a" -> (1, 0), anything else (0, 1)."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("embedding service down")
        return [[1.0, 0.0] if t == "a" else [0.0, 1.0] for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    async def aembed_query(self, text: str) -> list[float]:
        return self._vectors([text])[0]


def test_the_pair_flow_yields_texts_and_returns_the_score() -> None:
    core = module._Core(model="openai:x", embeddings=Recording(), algorithm="cosine", timeout=None)
    flow = module._pair_flow(core, "a", {"b": 1})
    assert next(flow) == ["a", '{"b": 1}']
    with pytest.raises(StopIteration) as stop:
        flow.send([[1.0, 0.0], [1.0, 0.0]])
    assert stop.value.value == 1.0


def test_sync_and_async_give_the_same_results_and_calls() -> None:
    sync_client, async_client = Recording(), Recording()
    sync = module.create_embedding_similarity_evaluator(embeddings=sync_client)  # type: ignore[arg-type]
    asyn = module.create_async_embedding_similarity_evaluator(embeddings=async_client)  # type: ignore[arg-type]
    assert sync(outputs="a", reference_outputs="b") == asyncio.run(
        asyn(outputs="a", reference_outputs="b")
    )
    pairs: list[tuple[Any, Any]] = [("a", "a"), ("a", "b"), ("b", "b")]
    assert sync.batch(pairs) == asyncio.run(asyn.batch(pairs))
    assert sync_client.calls == async_client.calls == [["a", "b"], ["a", "b"]]
    assert sync.batch([]) == asyncio.run(asyn.batch([])) == []


def test_an_embedding_failure_raises_in_both() -> None:
    sync = module.create_embedding_similarity_evaluator(embeddings=Recording(fail=True))  # type: ignore[arg-type]
    asyn = module.create_async_embedding_similarity_evaluator(embeddings=Recording(fail=True))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="embedding service down"):
        sync(outputs="a", reference_outputs="b")
    with pytest.raises(RuntimeError, match="embedding service down"):
        asyncio.run(asyn(outputs="a", reference_outputs="b"))
    with pytest.raises(RuntimeError, match="embedding service down"):
        asyncio.run(asyn.batch([("a", "b")]))
