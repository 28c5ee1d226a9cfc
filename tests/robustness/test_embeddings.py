"""Robustness of embedding similarity: broken vectors from every backend, and unencodable text.

Issue 16, items 11 and 5. A backend that answers with NaN, ±inf or the zero vector must make the
evaluator raise ``InvalidEmbeddingError`` naming the model and the text, never give a score (sync,
async, single and batched; cosine and dot product). Text holding a lone surrogate must be refused
with a ``ValueError`` naming the parameter and the position before any backend is called.

Bad inputs tried: see ``EXAMPLES`` (hypothesis examples per property) and the explicit cases.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings

from openevals._text import LoneSurrogateError
from openevals.embeddings import InvalidEmbeddingError, LocalEmbeddings, cosine_similarity
from openevals.string import (
    create_async_embedding_similarity_evaluator,
    create_embedding_similarity_evaluator,
)
from openevals.testing import FakeOpenAIServer
from tests.robustness.surrogates import text_with_surrogate

EXAMPLES = 60
SYNC_FACTORY: Any = create_embedding_similarity_evaluator
ASYNC_FACTORY: Any = create_async_embedding_similarity_evaluator

FACTORIES = pytest.mark.parametrize(
    "factory",
    [create_embedding_similarity_evaluator, create_async_embedding_similarity_evaluator],
    ids=["sync", "async"],
)


pytestmark = pytest.mark.usefixtures("tracing_off")


def run(value: Any) -> Any:
    """The result of a sync call, or of an async one (awaited in a fresh loop)."""
    if asyncio.iscoroutine(value):
        return asyncio.run(value)
    return value


class Scripted(Embeddings):
    """A LangChain embeddings backend answering from a table; counts its calls."""

    def __init__(self, table: dict[str, list[float]], model: str = "scripted-v1") -> None:
        self.table = table
        self.model = model
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [list(self.table.get(t, [1.0, 2.0, 3.0])) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# --------------------------------------------------------------------------- broken vectors

BAD_VALUES = st.sampled_from([math.nan, math.inf, -math.inf, -math.nan])


@st.composite
def broken_vectors(draw: st.DrawFn) -> tuple[list[float], str]:
    """A vector with NaN/±inf at a random dimension, or all zeros; and what the error says."""
    dim = draw(st.integers(min_value=1, max_value=48))
    if draw(st.booleans()):
        return [0.0] * dim, "the zero vector"
    vector = draw(
        st.lists(
            st.floats(allow_nan=False, allow_infinity=False, width=32),
            min_size=dim,
            max_size=dim,
        )
    )
    vector[draw(st.integers(min_value=0, max_value=dim - 1))] = draw(BAD_VALUES)
    return vector, "a non-finite vector"


@settings(max_examples=EXAMPLES)
@given(
    bad=broken_vectors(),
    n_pairs=st.integers(min_value=1, max_value=6),
    data=st.data(),
    is_async=st.booleans(),
    algorithm=st.sampled_from(["cosine", "dot_product"]),
)
def test_a_broken_vector_anywhere_in_a_batch_is_an_error_naming_model_and_text(
    bad: tuple[list[float], str],
    n_pairs: int,
    data: st.DataObject,
    is_async: bool,
    algorithm: str,
) -> None:
    vector, problem = bad
    outputs = [f"out {i}" for i in range(n_pairs)]
    references = [f"ref {i}" for i in range(n_pairs)]
    side = data.draw(st.sampled_from(["outputs", "reference_outputs"]))
    index = data.draw(st.integers(min_value=0, max_value=n_pairs - 1))
    target = (outputs if side == "outputs" else references)[index]
    # a healthy vector of the same length everywhere else
    table = {t: [1.0] * len(vector) for t in outputs + references}
    table[target] = vector
    factory = ASYNC_FACTORY if is_async else SYNC_FACTORY
    evaluator = factory(embeddings=Scripted(table), algorithm=algorithm)
    with pytest.raises(InvalidEmbeddingError) as caught:
        run(evaluator.batch(outputs=outputs, reference_outputs=references))
    message = str(caught.value)
    assert "Scripted(model='scripted-v1')" in message
    assert problem in message
    assert f"`{side}[{index}]`" in message
    # the per-pair form says the same about the same pair
    with pytest.raises(InvalidEmbeddingError, match=f"{problem}.* for `{side}`"):
        run(evaluator(outputs=outputs[index], reference_outputs=references[index]))


def _reply(*vectors: Any) -> str:
    """A raw /v1/embeddings body; NaN and Infinity are written as the bare tokens some servers
    send (json.dumps does that by default)."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": 2, "total_tokens": 2}
    return json.dumps({"object": "list", "data": data, "model": "m", "usage": usage})


def _base64(*values: float) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


SERVER_REPLIES = {
    "nan float": _reply([math.nan, 1.0], [1.0, 1.0]),
    "inf float": _reply([1.0, 1.0], [1.0, math.inf]),
    "-inf float": _reply([-math.inf, 1.0], [1.0, 1.0]),
    "overflowing literal": '{"object": "list", "model": "m", "data": ['
    '{"object": "embedding", "index": 0, "embedding": [1e400, 1.0]},'
    '{"object": "embedding", "index": 1, "embedding": [1.0, 1.0]}]}',
    "zero float": _reply([0.0, 0.0], [1.0, 1.0]),
    "nan base64": _reply(_base64(1.0, math.nan), _base64(1.0, 1.0)),
    "inf base64": _reply(_base64(1.0, 1.0), _base64(math.inf, 1.0)),
    "zero base64": _reply(_base64(1.0, 1.0), _base64(0.0, -0.0)),
}


@FACTORIES
@pytest.mark.parametrize("algorithm", ["cosine", "dot_product"])
@pytest.mark.parametrize("reply", list(SERVER_REPLIES))
@pytest.mark.usefixtures("openai_env")
async def test_openai_compatible_server_sending_broken_vectors(
    factory: Any,
    algorithm: str,
    reply: str,
    fake_openai: FakeOpenAIServer,
) -> None:
    evaluator = factory(model="openai:text-embedding-test", algorithm=algorithm)
    expected = "the zero vector" if reply.startswith("zero") else "a non-finite vector"
    for form in ("single", "batch"):
        fake_openai.queue_embeddings(body=SERVER_REPLIES[reply])
        with pytest.raises(
            InvalidEmbeddingError, match=f"model 'openai:text-embedding-test' returned {expected}"
        ):
            if form == "single":
                await run_async(evaluator(outputs="a", reference_outputs="b"))
            else:
                await run_async(evaluator.batch([("a", "b")]))


async def run_async(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


def test_local_minilm_backend_producing_non_finite_or_zero_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real MiniLM model, with its output damaged after encoding (a broken model file)."""
    local = LocalEmbeddings(num_threads=1)
    model = local.model
    real_encode = model.encode
    damage: dict[str, Any] = {}

    def encode(texts: list[str], **kwargs: Any) -> Any:
        vectors = real_encode(texts, **kwargs)
        for row, value in damage.items():
            index = texts.index(row)
            if value == 0.0:
                vectors[index, :] = 0.0
            else:
                vectors[index, 7] = value
        return vectors

    monkeypatch.setattr(model, "encode", encode)
    sync = create_embedding_similarity_evaluator(embeddings=local)
    asynchronous = create_async_embedding_similarity_evaluator(embeddings=local)
    healthy = sync(outputs="A cat naps.", reference_outputs="A cat sleeps.")
    assert 0.5 < healthy["score"] <= 1.0
    cases = 0
    for value, expected in ((math.nan, "non-finite"), (math.inf, "non-finite"), (0.0, "zero")):
        damage.clear()
        damage["A cat sleeps."] = value
        label = r"LocalEmbeddings\(model_path="
        with pytest.raises(
            InvalidEmbeddingError, match=f"{label}.*{expected}.*`reference_outputs`"
        ):
            sync(outputs="A cat naps.", reference_outputs="A cat sleeps.")
        with pytest.raises(InvalidEmbeddingError, match=f"{expected}.*`outputs\\[1\\]`"):
            asyncio.run(
                asynchronous.batch(
                    outputs=["A dog.", "A cat sleeps."], reference_outputs=["A dog.", "x"]
                )
            )
        cases += 2
    assert cases == 6


def test_huge_and_tiny_finite_vectors_give_the_true_cosine_or_a_clear_overflow_error() -> None:
    """Finite vectors whose squares over- or underflow: cosine rescales; dot product refuses."""
    for scale in (1e-300, 1e-160, 1e160, 1e300):
        emb = Scripted({"a": [3.0 * scale, 4.0 * scale], "b": [4.0 * scale, 3.0 * scale]})
        result = create_embedding_similarity_evaluator(embeddings=emb)(
            outputs="a", reference_outputs="b"
        )
        assert result["score"] == 0.96
    emb = Scripted({"a": [1e200, 1e200], "b": [1e200, 1e200]})
    dot = create_embedding_similarity_evaluator(embeddings=emb, algorithm="dot_product")
    with pytest.raises(InvalidEmbeddingError, match="overflows the float range"):
        dot(outputs="a", reference_outputs="b")


@settings(max_examples=EXAMPLES)
@given(
    vector=st.lists(
        st.floats(min_value=-1e3, max_value=1e3, allow_nan=False), min_size=1, max_size=16
    ).filter(lambda v: any(v)),
    exponent=st.integers(min_value=-300, max_value=300),
)
def test_cosine_is_scale_free_across_the_float_range(vector: list[float], exponent: int) -> None:
    other = [x + 1.0 for x in vector]
    if not any(other):
        return
    expected = cosine_similarity(vector, other)
    scaled = [x * 10.0**exponent for x in vector]
    if not any(scaled) or any(0.0 < abs(x) < sys.float_info.min for x in scaled):
        return  # the scaling itself lost precision (subnormal entries): nothing to compare
    assert cosine_similarity(scaled, other) == pytest.approx(expected, abs=1e-9)


def test_cosine_of_entries_whose_squares_sum_past_the_float_range() -> None:
    """Each square fits in a float but their sum does not (fsum raised OverflowError)."""
    vector = [894.0, 1000.0]
    other = [895.0, 1001.0]
    scaled = [x * 1e151 for x in vector]
    assert cosine_similarity(scaled, other) == pytest.approx(
        cosine_similarity(vector, other), abs=1e-12
    )


# --------------------------------------------------------------------------- backends, misc


@FACTORIES
async def test_backend_returning_malformed_answers(factory: Any) -> None:
    answers: list[Any] = [
        None,
        "not vectors",
        [[1.0, 2.0]],  # one vector for two texts
        [[1.0, 2.0], "xy"],
        [[1.0, 2.0], [1.0, None]],
        [[1.0, 2.0], []],
        [[1.0, 2.0], [1.0, 2.0, 3.0]],
        [[1.0, 2.0], [1.0, 10**400]],
    ]

    class Fixed(Embeddings):
        answer: Any = None

        def embed_documents(self, texts: list[str]) -> Any:
            return self.answer

        def embed_query(self, text: str) -> list[float]:
            raise AssertionError("not used")

    backend = Fixed()
    evaluator = factory(embeddings=backend)
    for answer in answers:
        backend.answer = answer
        with pytest.raises(InvalidEmbeddingError, match=r"^embedding model Fixed returned"):
            await run_async(evaluator(outputs="a", reference_outputs="b"))


def test_a_plain_callable_is_not_an_embeddings_backend() -> None:
    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    for factory in (
        create_embedding_similarity_evaluator,
        create_async_embedding_similarity_evaluator,
    ):
        with pytest.raises(TypeError, match="`embeddings` must be a LangChain Embeddings"):
            factory(embeddings=embed)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- lone surrogates


@settings(max_examples=EXAMPLES)
@given(
    bad=text_with_surrogate(),
    n_pairs=st.integers(min_value=1, max_value=5),
    data=st.data(),
    is_async=st.booleans(),
    as_pairs=st.booleans(),
)
def test_lone_surrogates_in_batch_inputs_are_refused_before_any_backend_call(
    bad: tuple[str, int], n_pairs: int, data: st.DataObject, is_async: bool, as_pairs: bool
) -> None:
    text, index = bad
    outputs: list[Any] = [f"o{i}" for i in range(n_pairs)]
    references: list[Any] = [f"r{i}" for i in range(n_pairs)]
    side = data.draw(st.integers(min_value=0, max_value=1))
    row = data.draw(st.integers(min_value=0, max_value=n_pairs - 1))
    (outputs, references)[side][row] = text
    backend = Scripted({})
    factory = ASYNC_FACTORY if is_async else SYNC_FACTORY
    evaluator = factory(embeddings=backend)
    if as_pairs:
        name = f"pairs[{row}][{side}]"
        args: tuple[Any, ...] = (list(zip(outputs, references, strict=True)),)
        kwargs: dict[str, Any] = {}
    else:
        name = f"{('outputs', 'reference_outputs')[side]}[{row}]"
        args, kwargs = (), {"outputs": outputs, "reference_outputs": references}
    with pytest.raises(LoneSurrogateError) as caught:
        run(evaluator.batch(*args, **kwargs))
    assert caught.value.parameter.startswith(name)
    assert caught.value.index == index
    assert f"at index {index} " in str(caught.value)
    assert backend.calls == 0


@FACTORIES
@settings(max_examples=EXAMPLES // 2)
@given(bad=text_with_surrogate(), as_json=st.booleans())
def test_lone_surrogates_in_single_inputs(
    factory: Any, bad: tuple[str, int], as_json: bool
) -> None:
    text, index = bad
    value: Any = {"answer": text} if as_json else text
    backend = Scripted({})
    with pytest.raises(ValueError, match=r"`reference_outputs` contains a lone surrogate") as e:
        run(factory(embeddings=backend)(outputs="fine", reference_outputs=value))
    assert isinstance(e.value, LoneSurrogateError)
    assert ("of its JSON text" in str(e.value)) is as_json
    if not as_json:
        assert e.value.index == index
    assert backend.calls == 0


@pytest.mark.usefixtures("openai_env")
def test_lone_surrogates_reach_neither_the_server_nor_the_tokenizer(
    fake_openai: FakeOpenAIServer,
) -> None:
    evaluator = create_embedding_similarity_evaluator(model="openai:text-embedding-test")
    with pytest.raises(LoneSurrogateError, match=r"`outputs` .* U\+DC80 at index 2 "):
        evaluator(outputs="ab\udc80", reference_outputs="b")
    assert fake_openai.embedding_requests == []
    # LocalEmbeddings checks its own inputs before the model is loaded or the tokenizer runs
    with pytest.raises(LoneSurrogateError, match=r"`texts\[1\]` .* U\+D800 at index 0 "):
        LocalEmbeddings(num_threads=1).embed_documents(["ok", "\ud800"])
