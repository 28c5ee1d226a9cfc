"""openevals.embeddings: vector maths, model-string resolution, the offline local model."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings

from openevals.embeddings import (
    DEFAULT_LOCAL_MODEL,
    InvalidEmbeddingError,
    LocalEmbeddings,
    check_embeddings,
    cosine_similarity,
    dot_product,
    embeddings_label,
    first_non_finite,
    local_model_path,
    parse_embedding_model,
    resolve_embeddings,
)
from openevals.testing import FakeOpenAIServer

# --------------------------------------------------------------------------- vector maths


def test_known_values() -> None:
    assert dot_product([1, 2, 3], [4, 5, 6]) == 32
    assert cosine_similarity([3, 4], [4, 3]) == pytest.approx(24 / 25)
    assert cosine_similarity([1, 0], [0, 1]) == 0
    assert cosine_similarity([1, 1], [-1, -1]) == pytest.approx(-1)


@pytest.mark.parametrize(
    ("a", "b", "which"), [([0, 0], [1, 2], "first"), ([1, 2], [0.0, 0.0], "second")]
)
def test_cosine_of_a_zero_vector_is_a_value_error(
    a: list[float], b: list[float], which: str
) -> None:
    with pytest.raises(ValueError, match=f"zero vector.*{which} vector is all zeros"):
        cosine_similarity(a, b)
    assert dot_product(a, b) == 0.0


@pytest.mark.parametrize("fn", [cosine_similarity, dot_product])
def test_mismatched_or_empty_vectors(fn: Any) -> None:
    with pytest.raises(ValueError, match="different lengths \\(2 and 3\\)"):
        fn([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        fn([], [])


_floats = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
_vectors = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(_floats, min_size=n, max_size=n), st.lists(_floats, min_size=n, max_size=n)
    )
)


def _norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


@given(_vectors, st.floats(min_value=1e-3, max_value=1e3))
def test_cosine_properties(pair: tuple[list[float], list[float]], scale: float) -> None:
    a, b = pair
    assume(_norm(a) > 1e-6 and _norm(b) > 1e-6)
    value = cosine_similarity(a, b)
    assert -1.0 <= value <= 1.0
    assert value == pytest.approx(cosine_similarity(b, a))
    assert value == pytest.approx(cosine_similarity([x * scale for x in a], b), abs=1e-9)
    assert cosine_similarity(a, a) == pytest.approx(1.0)
    assert dot_product(a, b) == pytest.approx(dot_product(b, a))


@pytest.mark.parametrize("fn", [cosine_similarity, dot_product])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_entries_are_a_value_error(fn: Any, bad: float) -> None:
    with pytest.raises(ValueError, match=f"second embedding vector holds {bad!r} at dimension 1"):
        fn([1.0, 2.0], [3.0, bad])
    with pytest.raises(ValueError, match="first embedding vector holds"):
        fn([bad, 2.0], [3.0, 4.0])
    assert first_non_finite([0.0, 1e308, bad]) == 2
    assert first_non_finite([0.0, -1e308]) is None


def test_extreme_magnitudes() -> None:
    # squares over- or underflow; cosine rescales and stays exact, dot product refuses to overflow
    assert cosine_similarity([1e200, 0.0], [1e200, 1e200]) == pytest.approx(math.sqrt(0.5))
    assert cosine_similarity([1e200, 0.0], [0.0, 1e200]) == 0.0
    assert cosine_similarity([3e-200, 4e-200], [4e200, 3e200]) == pytest.approx(0.96)
    assert cosine_similarity([5e-324, 0.0], [1.0, 0.0]) == 1.0
    with pytest.raises(ValueError, match="overflows the float range"):
        dot_product([1e200, 1.0], [1e200, 1.0])
    with pytest.raises(ValueError, match="overflows the float range"):
        dot_product([1e308, -1e308], [10.0, 10.0])
    assert dot_product([1e100], [1e100]) == 1e200


def test_check_embeddings_accepts_numbers_of_any_kind() -> None:
    import numpy as np

    vectors = check_embeddings(np.array([[1, 2], [3, 4]], dtype=np.float32), ["a", "b"], model="m")
    assert [list(v) for v in vectors] == [[1.0, 2.0], [3.0, 4.0]]
    assert [list(v) for v in check_embeddings(iter([(1, 0)]), ["a"], model="m")] == [[1.0, 0.0]]


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (None, "returned NoneType instead of one vector per text"),
        ("vectors", "returned str instead of one vector per text"),
        ([[1.0]], "returned 1 vectors for 2 texts"),
        ([[1.0], 5], "returned int for `b` instead of a list of numbers"),
        ([[1.0], ["1"]], r"returned a vector for `b` that is not a list of numbers \(must be real"),
        ([[1.0], []], "returned an empty vector for `b`"),
        ([[1.0], [math.nan]], r"returned a non-finite vector for `b` \(nan at dimension 0 of 1\)"),
        ([[0.0, -0.0], [1.0, 1.0]], "returned the zero vector for `a`"),
        ([[1.0], [1.0, 2.0]], "returned vectors of different lengths: 1 for `a`, 2 for `b`"),
    ],
)
def test_check_embeddings_errors_name_the_model_and_the_text(vectors: Any, message: str) -> None:
    with pytest.raises(InvalidEmbeddingError, match=f"^embedding model 'my:model' {message}"):
        check_embeddings(vectors, ["a", "b"], model="'my:model'")


def test_embeddings_label() -> None:
    class Bare:
        pass

    class Named:
        model_name = "mini"

    assert embeddings_label(Bare()) == "Bare"
    assert embeddings_label(Named()) == "Named(model_name='mini')"
    assert embeddings_label(LocalEmbeddings("/x")) == "LocalEmbeddings(model_path='/x')"


# --------------------------------------------------------------------------- parsing and resolution


@pytest.mark.parametrize(
    "model", ["text-embedding-3-small", "openai:", ":x", "", "open ai:x", "local"]
)
def test_bad_model_strings(model: str) -> None:
    with pytest.raises(ValueError, match="provider:model"):
        parse_embedding_model(model)
    with pytest.raises(ValueError):
        resolve_embeddings(model)


def test_model_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="got int"):
        resolve_embeddings(42)  # type: ignore[arg-type]


def test_parse() -> None:
    assert parse_embedding_model("OpenAI:text-embedding-3-small") == (
        "openai",
        "text-embedding-3-small",
    )
    assert parse_embedding_model("local:sentence-transformers/all-MiniLM-L6-v2") == (
        "local",
        "sentence-transformers/all-MiniLM-L6-v2",
    )


@pytest.mark.usefixtures("openai_env")
def test_openai_model_honours_openai_base_url(fake_openai: FakeOpenAIServer) -> None:
    from langchain_openai import OpenAIEmbeddings

    emb = resolve_embeddings("openai:text-embedding-test")
    assert isinstance(emb, OpenAIEmbeddings)
    assert emb.model == "text-embedding-test"
    assert emb.check_embedding_ctx_length is False
    vectors = emb.embed_documents(["alpha", "beta"])
    assert vectors == [
        pytest.approx(fake_openai.embedding_for("alpha")),
        pytest.approx(fake_openai.embedding_for("beta")),
    ]
    assert fake_openai.embedding_requests[0]["input"] == ["alpha", "beta"]


def test_openai_model_with_explicit_base_url(fake_openai: FakeOpenAIServer) -> None:
    emb = resolve_embeddings(
        "openai:text-embedding-test", base_url=fake_openai.base_url, api_key="test-key"
    )
    assert emb.embed_query("gamma") == pytest.approx(fake_openai.embedding_for("gamma"))


def test_openai_model_without_custom_url_keeps_token_checking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    emb = resolve_embeddings("openai:text-embedding-3-small")
    assert emb.check_embedding_ctx_length is True  # type: ignore[attr-defined]


def test_openai_resolution_imports_neither_langchain_nor_torch() -> None:
    code = textwrap.dedent(
        """
        import sys
        import openevals.string
        assert "openevals.embeddings" not in sys.modules
        from openevals.embeddings import resolve_embeddings
        from openevals.string.embedding_similarity import create_embedding_similarity_evaluator
        create_embedding_similarity_evaluator(model="local:all-MiniLM-L6-v2")
        resolve_embeddings("openai:text-embedding-3-small", api_key="x")
        resolve_embeddings("local:all-MiniLM-L6-v2")
        heavy = sorted(m for m in ("langchain", "torch", "sentence_transformers") if m in sys.modules)
        print(heavy)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_embeddings_instance_is_returned_unchanged() -> None:
    class Mine(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0]

    mine = Mine()
    assert resolve_embeddings(embeddings=mine) is mine
    assert resolve_embeddings("not a model string", embeddings=mine) is mine
    with pytest.raises(TypeError, match=r"LangChain Embeddings.*got str"):
        resolve_embeddings(embeddings="openai:x")


def test_other_providers_go_through_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain.embeddings

    calls: list[tuple[str, dict[str, Any]]] = []
    sentinel = object()

    def fake_init(model: str, **kwargs: Any) -> Any:
        calls.append((model, kwargs))
        return sentinel

    monkeypatch.setattr(langchain.embeddings, "init_embeddings", fake_init)
    assert resolve_embeddings("cohere:embed-english-v3.0", api_key="k") is sentinel
    assert calls == [("cohere:embed-english-v3.0", {"api_key": "k"})]


def test_other_providers_without_langchain_name_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain.embeddings", None)
    with pytest.raises(ImportError, match=r"needs the `langchain` package.*langchain-cohere"):
        resolve_embeddings("cohere:embed-english-v3.0")


# --------------------------------------------------------------------------- the local model


def test_local_model_path_points_at_the_packaged_files() -> None:
    path = local_model_path()
    assert (path / "config.json").is_file()
    assert (path / "model.safetensors").is_file()


@pytest.mark.parametrize(
    "model",
    [DEFAULT_LOCAL_MODEL, "local:sentence-transformers/all-MiniLM-L6-v2", "LOCAL:All-MiniLM-L6-v2"],
)
def test_local_model_names(model: str) -> None:
    emb = resolve_embeddings(model)
    assert isinstance(emb, LocalEmbeddings)
    assert emb.model_path == str(local_model_path())


def test_default_is_the_local_model() -> None:
    emb = resolve_embeddings()
    assert isinstance(emb, LocalEmbeddings)


def test_local_model_from_a_directory_and_unknown_names(tmp_path: Path) -> None:
    emb = resolve_embeddings(f"local:{tmp_path}", batch_size=8)
    assert isinstance(emb, LocalEmbeddings)
    assert emb.model_path == str(tmp_path.resolve()) and emb.batch_size == 8
    with pytest.raises(ValueError, match="unknown local embedding model 'bert-base'"):
        resolve_embeddings("local:bert-base")
    with pytest.raises(ValueError, match="batch_size"):
        LocalEmbeddings(tmp_path, batch_size=0)


def test_local_embeddings_for_real() -> None:
    emb = LocalEmbeddings()
    texts = ["The weather is nice!", "The weather is very nice!", "I like pizza."]
    vectors = emb.embed_documents(texts)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(isinstance(x, float) for x in vectors[0])
    assert emb.embed_query(texts[0]) == pytest.approx(vectors[0], abs=1e-5)
    assert cosine_similarity(vectors[0], vectors[1]) > cosine_similarity(vectors[0], vectors[2])
    assert emb.embed_documents([]) == []
    # the loaded model is shared by every instance in the process
    assert LocalEmbeddings().model is emb.model
    with pytest.raises(TypeError, match="single str"):
        emb.embed_documents("not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        emb.embed_documents(["ok", 3])  # type: ignore[list-item]


def test_local_batching_matches_single_encoding() -> None:
    texts = [
        f"sentence number {i} about {'cats' if i % 2 else 'the stock market'}" for i in range(10)
    ]
    batched = LocalEmbeddings(batch_size=4).embed_documents(texts)
    singles = [LocalEmbeddings().embed_query(t) for t in texts]
    for a, b in zip(batched, singles, strict=True):
        assert a == pytest.approx(b, abs=1e-4)


async def test_local_async_matches_sync() -> None:
    emb = LocalEmbeddings()
    texts = ["hello there", "general kenobi"]
    for got, want in zip(
        await emb.aembed_documents(texts), emb.embed_documents(texts), strict=True
    ):
        assert got == pytest.approx(want, abs=1e-6)
    assert await emb.aembed_query("hi") == pytest.approx(emb.embed_query("hi"), abs=1e-6)


@pytest.mark.slow
def test_local_model_works_fully_offline(tmp_path: Path) -> None:
    """A fresh process with HF_HUB_OFFLINE=1 and an empty Hugging Face cache."""
    code = textwrap.dedent(
        """
        from openevals.string.embedding_similarity import create_embedding_similarity_evaluator
        ev = create_embedding_similarity_evaluator(model="local:all-MiniLM-L6-v2")
        print(ev(outputs="a red apple", reference_outputs="a red apple")["score"])
        """
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"
    assert not (tmp_path / "hf" / "hub").exists() or not any((tmp_path / "hf" / "hub").iterdir())


def test_num_threads_is_scoped_to_the_encoding() -> None:
    import torch

    before = torch.get_num_threads()
    emb = resolve_embeddings(DEFAULT_LOCAL_MODEL, num_threads=1)
    assert isinstance(emb, LocalEmbeddings) and emb.num_threads == 1
    [vector] = emb.embed_documents(["one thread"])
    assert vector == pytest.approx(LocalEmbeddings().embed_query("one thread"), abs=1e-4)
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="`num_threads` must be a positive integer"):
        LocalEmbeddings(num_threads=0)
