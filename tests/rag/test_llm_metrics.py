"""LLM-based RAG metrics against the fake OpenAI server, with scripted judge answers."""

from __future__ import annotations

import asyncio
import copy
import math
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from openevals.llm import JudgeOutputError
from openevals.rag import (
    create_answer_correctness_evaluator,
    create_answer_relevancy_evaluator,
    create_async_answer_correctness_evaluator,
    create_async_answer_relevancy_evaluator,
    create_async_context_relevance_evaluator,
    create_async_faithfulness_evaluator,
    create_context_relevance_evaluator,
    create_faithfulness_evaluator,
)
from openevals.testing import FakeOpenAIServer, chat_model

PYTHON_CONTEXT = (
    "Python, created by Guido van Rossum in the late 1980s, is a high-level general-purpose "
    "programming language."
)


def _by_key(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["key"]: r for r in results}


def _run(evaluator: Any, **kwargs: Any) -> Any:
    out = evaluator(**kwargs)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


# --------------------------------------------------------------------------- answer correctness

CLAIMS = {
    "reference_claims": [
        "Optimus Prime is an Autobot.",
        "Bumblebee is an Autobot.",
        "Jazz is an Autobot.",
    ],
    "answer_claims": [
        "Optimus Prime is an Autobot.",
        "Bumblebee is an Autobot.",
        "Megatron is an Autobot.",
    ],
    "reasoning": "Two of three reference claims appear; Megatron is wrong.",
    # The judge lists reference 0 against answers 0 and 1: an optimal 1-1 pairing still gives 2.
    "matches": [
        {"reference_index": 0, "answer_index": 0},
        {"reference_index": 0, "answer_index": 1},
        {"reference_index": 1, "answer_index": 1},
    ],
}


@pytest.mark.parametrize(
    "factory", [create_answer_correctness_evaluator, create_async_answer_correctness_evaluator]
)
def test_answer_correctness_counts_and_scores(fake_openai: FakeOpenAIServer, factory: Any) -> None:
    fake_openai.queue_chat(json=CLAIMS)
    evaluator = factory(judge=chat_model(fake_openai))
    results = _by_key(
        _run(
            evaluator,
            inputs="Which of these are Autobots?",
            outputs="Optimus Prime, Bumblebee and Megatron.",
            reference_outputs="Optimus Prime, Bumblebee and Jazz.",
        )
    )
    assert set(results) == {"answer_recall", "answer_precision", "answer_f1"}
    assert results["answer_recall"]["score"] == pytest.approx(2 / 3)
    assert results["answer_precision"]["score"] == pytest.approx(2 / 3)
    assert results["answer_f1"]["score"] == pytest.approx(2 / 3)
    meta = results["answer_f1"]["metadata"]
    assert meta["answer_reference_claims_count"] == 3
    assert meta["answer_actual_claims_count"] == 3
    assert meta["answer_matching_claims_count"] == 2
    assert meta["answer_correctness_reason"] == CLAIMS["reasoning"]
    assert results["answer_recall"]["comment"] == CLAIMS["reasoning"]
    assert len(fake_openai.chat_requests) == 1  # one structured call per sample
    body = fake_openai.last_chat_body
    assert "Jazz" in str(body["messages"]) and "Megatron" in str(body["messages"])


def test_answer_correctness_uneven_and_empty(fake_openai: FakeOpenAIServer) -> None:
    evaluator = create_answer_correctness_evaluator(judge=chat_model(fake_openai))
    fake_openai.queue_chat(
        json={
            "reference_claims": ["a", "b"],
            "answer_claims": ["a", "b", "c", "d"],
            "reasoning": "r",
            "matches": [
                {"reference_index": 0, "answer_index": 0},
                {"reference_index": 1, "answer_index": 1},
            ],
        }
    )
    r = _by_key(evaluator(outputs="x", reference_outputs="y"))
    assert (r["answer_recall"]["score"], r["answer_precision"]["score"]) == (1.0, 0.5)
    assert r["answer_f1"]["score"] == pytest.approx(2 * 0.5 / 1.5)
    fake_openai.queue_chat(
        json={"reference_claims": ["a"], "answer_claims": [], "reasoning": "r", "matches": []}
    )
    r = _by_key(evaluator(outputs="I don't know", reference_outputs="y"))
    assert (
        r["answer_recall"]["score"],
        r["answer_precision"]["score"],
        r["answer_f1"]["score"],
    ) == (0.0, 0.0, 0.0)
    fake_openai.queue_chat(
        json={"reference_claims": [], "answer_claims": [], "reasoning": "r", "matches": []}
    )
    r = _by_key(evaluator(outputs="-", reference_outputs="-"))
    assert r["answer_f1"]["score"] == 1.0


def test_answer_correctness_rejects_impossible_matches(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(
        json={
            "reference_claims": ["a"],
            "answer_claims": ["a"],
            "reasoning": "r",
            "matches": [{"reference_index": 3, "answer_index": 0}],
        }
    )
    evaluator = create_answer_correctness_evaluator(judge=chat_model(fake_openai))
    with pytest.raises(JudgeOutputError, match="do not exist"):
        evaluator(outputs="a", reference_outputs="a")
    with pytest.raises(ValueError, match="reference_outputs"):
        evaluator(outputs="a")


# --------------------------------------------------------------------------- faithfulness

HAYSTACK_STATEMENTS = {
    "statements": [
        {
            "statement": "Python is a high-level general-purpose programming language.",
            "reason": "stated",
            "supported": True,
        },
        {
            "statement": "Python was created by George Lucas.",
            "reason": "context names Guido",
            "supported": False,
        },
    ]
}


@pytest.mark.parametrize(
    "factory", [create_faithfulness_evaluator, create_async_faithfulness_evaluator]
)
def test_faithfulness_haystack_example(fake_openai: FakeOpenAIServer, factory: Any) -> None:
    fake_openai.queue_chat(json=HAYSTACK_STATEMENTS)
    evaluator = factory(judge=chat_model(fake_openai))
    context = [PYTHON_CONTEXT]
    snapshot = copy.deepcopy(context)
    result = _run(
        evaluator,
        inputs="Who created the Python language?",
        outputs="Python is a high-level general-purpose programming language that was created by George Lucas.",
        context=context,
    )
    assert result["key"] == "faithfulness"
    assert result["score"] == 0.5
    assert result["metadata"]["statement_scores"] == [1, 0]
    assert result["metadata"]["statements"][1] == "Python was created by George Lucas."
    assert "George Lucas" in result["comment"]
    assert "[0] Python, created by Guido" in str(fake_openai.last_chat_body["messages"])
    assert context == snapshot


def test_faithfulness_contexts_kinds_and_errors(fake_openai: FakeOpenAIServer) -> None:
    evaluator = create_faithfulness_evaluator(judge=chat_model(fake_openai))
    fake_openai.queue_chat(json={"statements": []})
    result = evaluator(
        outputs="I don't know.",
        context=[Document(page_content="doc one"), {"content": "doc two"}, "doc three"],
    )
    assert result["score"] == 0.0 and "no statement" in result["comment"]
    text = str(fake_openai.last_chat_body["messages"])
    assert "[0] doc one" in text and "[1] doc two" in text and "[2] doc three" in text
    with pytest.raises(ValueError, match="context"):
        evaluator(outputs="x")
    with pytest.raises(TypeError, match=r"context\[0\]"):
        evaluator(outputs="x", context=[42])


# --------------------------------------------------------------------------- context relevance


@pytest.mark.parametrize(
    "factory", [create_context_relevance_evaluator, create_async_context_relevance_evaluator]
)
def test_context_relevance_per_context_and_mean(
    fake_openai: FakeOpenAIServer, factory: Any
) -> None:
    fake_openai.queue_chat(
        json={
            "contexts": [
                {"index": 0, "relevant_statements": ["Python was created by Guido van Rossum."]},
                {"index": 1, "relevant_statements": []},
                {"index": 2, "relevant_statements": ["Guido started Python in 1989."]},
            ]
        }
    )
    evaluator = factory(judge=chat_model(fake_openai))
    result = _run(
        evaluator,
        inputs="Who created the Python language?",
        context=[
            PYTHON_CONTEXT,
            "C++ was created by Bjarne Stroustrup.",
            "Guido started Python in 1989.",
        ],
    )
    assert result["key"] == "context_relevance"
    assert result["score"] == pytest.approx(2 / 3)
    assert result["metadata"]["individual_scores"] == [1.0, 0.0, 1.0]
    assert result["metadata"]["results"][1] == {"relevant_statements": [], "score": 0.0}


def test_context_relevance_bad_index_raises(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"contexts": [{"index": 5, "relevant_statements": ["x"]}]})
    evaluator = create_context_relevance_evaluator(judge=chat_model(fake_openai))
    with pytest.raises(JudgeOutputError):
        evaluator(inputs="q", context=["a"])
    with pytest.raises(ValueError, match="inputs"):
        evaluator(context=["a"])


# --------------------------------------------------------------------------- answer relevancy


class TableEmbeddings(Embeddings):
    """Embeddings from a fixed table; counts calls."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self.table[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.table[text]


QUESTION = "When was the first super bowl?"
GENERATED = ["When was the first Super Bowl played?", "What date was Super Bowl I?", "Who won?"]
TABLE = {
    QUESTION: [1.0, 0.0],
    GENERATED[0]: [1.0, 0.0],  # cosine 1
    GENERATED[1]: [0.6, 0.8],  # cosine 0.6
    GENERATED[2]: [0.0, 1.0],  # cosine 0
}


@pytest.mark.parametrize(
    "factory", [create_answer_relevancy_evaluator, create_async_answer_relevancy_evaluator]
)
def test_answer_relevancy_mean_cosine(fake_openai: FakeOpenAIServer, factory: Any) -> None:
    fake_openai.queue_chat(json={"questions": GENERATED, "noncommittal": False})
    embeddings = TableEmbeddings(TABLE)
    evaluator = factory(judge=chat_model(fake_openai), embeddings=embeddings, strictness=3)
    result = _run(
        evaluator, inputs=QUESTION, outputs="The first superbowl was held on Jan 15, 1967"
    )
    assert result["key"] == "answer_relevancy"
    assert result["score"] == pytest.approx((1.0 + 0.6 + 0.0) / 3)
    assert result["metadata"]["generated_questions"] == GENERATED
    assert embeddings.calls == [[QUESTION, *GENERATED]]  # one batched embedding call
    assert "exactly 3 different questions" in str(fake_openai.last_chat_body["messages"])


def test_answer_relevancy_noncommittal_scores_zero(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"questions": ["When was it?"], "noncommittal": True})
    embeddings = TableEmbeddings(TABLE)
    evaluator = create_answer_relevancy_evaluator(
        judge=chat_model(fake_openai), embeddings=embeddings
    )
    result = evaluator(inputs=QUESTION, outputs="I'm not sure.")
    assert result["score"] == 0.0 and result["metadata"]["noncommittal"] is True
    assert embeddings.calls == []


def test_answer_relevancy_with_openai_embeddings(fake_openai: FakeOpenAIServer) -> None:
    from langchain_openai import OpenAIEmbeddings

    fake_openai.set_embedding(QUESTION, [1.0, 0.0])
    fake_openai.set_embedding(GENERATED[0], [0.0, 1.0])
    fake_openai.set_embedding(GENERATED[1], [1.0, 1.0])
    fake_openai.queue_chat(json={"questions": GENERATED[:2], "noncommittal": False})
    embeddings = OpenAIEmbeddings(
        base_url=fake_openai.base_url,
        api_key="k",
        model="text-embedding-test",
        check_embedding_ctx_length=False,
    )
    evaluator = create_answer_relevancy_evaluator(
        judge=chat_model(fake_openai), embeddings=embeddings, strictness=2
    )
    result = evaluator(inputs=QUESTION, outputs="It was in 1967.")
    assert result["score"] == pytest.approx((0.0 + 1 / math.sqrt(2)) / 2)


def test_answer_relevancy_validation() -> None:
    with pytest.raises(ValueError, match="strictness"):
        create_answer_relevancy_evaluator(model="openai:gpt-test", strictness=0)


def test_answer_relevancy_with_the_offline_local_model(fake_openai: FakeOpenAIServer) -> None:
    """The default embeddings: the packaged MiniLM model, no network."""
    fake_openai.queue_chat(
        json={
            "questions": ["When was the first Super Bowl?", "What date was Super Bowl I played?"],
            "noncommittal": False,
        }
    )
    fake_openai.queue_chat(
        json={"questions": ["What is the best recipe for bread?"], "noncommittal": False}
    )
    evaluator = create_answer_relevancy_evaluator(judge=chat_model(fake_openai), strictness=2)
    relevant = evaluator(inputs=QUESTION, outputs="The first Super Bowl was held on Jan 15, 1967.")
    off_topic = evaluator(inputs=QUESTION, outputs="Knead the dough for ten minutes.")
    assert 0.0 <= off_topic["score"] < relevant["score"] <= 1.0
    assert relevant["score"] > 0.7
