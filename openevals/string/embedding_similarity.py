"""Embedding similarity: cosine (or dot product) of the embeddings of outputs and reference.

The embeddings client is resolved once per evaluator, on first use; each evaluation embeds both
texts in one ``embed_documents`` call, and ``evaluator.batch(...)`` embeds a whole list of pairs in
one call (each distinct text once).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from openevals._contract import (
    EvaluatorInfo,
    arun_scorer,
    make_async_evaluator,
    make_evaluator,
    run_scorer,
)
from openevals._declare import async_twin
from openevals._drivers import adrive, drive
from openevals._messages import to_json_text
from openevals._repr import show
from openevals._text import check_text
from openevals.types import EvaluatorResult

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = [
    "AsyncEmbeddingSimilarityEvaluator",
    "EmbeddingSimilarityEvaluator",
    "create_async_embedding_similarity_evaluator",
    "create_embedding_similarity_evaluator",
]

Algorithm = Literal["cosine", "dot_product"]
_ALGORITHMS = ("cosine", "dot_product")
_KEY = "embedding_similarity"


class EmbeddingSimilarityEvaluator(Protocol):
    """What :func:`create_embedding_similarity_evaluator` returns."""

    def __call__(
        self, *, outputs: Any, reference_outputs: Any, **kwargs: Any
    ) -> EvaluatorResult: ...

    def batch(
        self,
        pairs: Iterable[tuple[Any, Any]] | None = None,
        *,
        outputs: Sequence[Any] | None = None,
        reference_outputs: Sequence[Any] | None = None,
    ) -> list[EvaluatorResult]: ...


class AsyncEmbeddingSimilarityEvaluator(Protocol):
    """What :func:`create_async_embedding_similarity_evaluator` returns."""

    async def __call__(
        self, *, outputs: Any, reference_outputs: Any, **kwargs: Any
    ) -> EvaluatorResult: ...

    async def batch(
        self,
        pairs: Iterable[tuple[Any, Any]] | None = None,
        *,
        outputs: Sequence[Any] | None = None,
        reference_outputs: Sequence[Any] | None = None,
    ) -> list[EvaluatorResult]: ...


# --------------------------------------------------------------------------- pure core


def _as_text(value: Any, name: str) -> str:
    if value is None:
        raise ValueError(f"embedding similarity needs `{name}`; got None")
    if isinstance(value, str):
        return check_text(value, name, sink="the embedding model")
    try:
        text = to_json_text(value, sort_keys=True, name=name)
    except TypeError as exc:  # a cycle is a ValueError that already names the parameter
        raise TypeError(
            f"`{name}` must be a string or a JSON-serialisable value; got "
            f"{type(value).__name__} ({exc})"
        ) from None
    return check_text(text, name, of="its JSON text", sink="the embedding model")


def _batch_inputs(
    pairs: Iterable[tuple[Any, Any]] | None,
    outputs: Sequence[Any] | None,
    reference_outputs: Sequence[Any] | None,
) -> tuple[list[str], list[str]]:
    """Texts of a batch given as ``pairs`` or as two equally long lists."""
    if pairs is not None:
        if outputs is not None or reference_outputs is not None:
            raise ValueError(
                "pass either `pairs` or `outputs` + `reference_outputs` to batch(), not both"
            )
        outs: list[str] = []
        refs: list[str] = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    f"pairs[{i}] must be an (outputs, reference_outputs) pair; got {show(pair)}"
                )
            outs.append(_as_text(pair[0], f"pairs[{i}][0] (outputs)"))
            refs.append(_as_text(pair[1], f"pairs[{i}][1] (reference_outputs)"))
        return outs, refs
    for name, values in (("outputs", outputs), ("reference_outputs", reference_outputs)):
        if values is None or isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise ValueError(
                f"batch() needs `{name}` as a list (one entry per pair) or `pairs`; got "
                f"{type(values).__name__}"
            )
    assert outputs is not None and reference_outputs is not None
    if len(outputs) != len(reference_outputs):
        raise ValueError(
            f"`outputs` ({len(outputs)} items) and `reference_outputs` "
            f"({len(reference_outputs)} items) must be equally long"
        )
    return (
        [_as_text(v, f"outputs[{i}]") for i, v in enumerate(outputs)],
        [_as_text(v, f"reference_outputs[{i}]") for i, v in enumerate(reference_outputs)],
    )


def _unique(texts: list[str]) -> tuple[list[str], list[int]]:
    """Distinct texts in first-seen order, and for each input text the index of its distinct text."""
    index: dict[str, int] = {}
    positions = [index.setdefault(t, len(index)) for t in texts]
    return list(index), positions


class _Core:
    """Options validated once; the client resolved once; scoring as plain functions."""

    def __init__(
        self, *, model: str, embeddings: Any, algorithm: str, timeout: float | None
    ) -> None:
        from openevals.embeddings import parse_embedding_model, resolve_embeddings

        if algorithm not in _ALGORITHMS:
            raise ValueError(
                f"`algorithm` must be one of {', '.join(map(repr, _ALGORITHMS))}; got {show(algorithm)}"
            )
        self.algorithm = algorithm
        self.model = model
        self.timeout = _checked_timeout(timeout, model, embeddings)
        self._client: Embeddings | None = None
        self._given: Embeddings | None = None
        self._lock = threading.Lock()
        if embeddings is not None:
            self._client = self._given = resolve_embeddings(embeddings=embeddings)
        else:
            parse_embedding_model(model)  # format errors surface at creation

    @property
    def client(self) -> Embeddings:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    from openevals.embeddings import resolve_embeddings

                    options: dict[str, Any] = {}
                    if self.model.strip().lower().startswith("openai:"):
                        # One retry policy (embed_flow's), not the SDK's on top of it.
                        options["max_retries"] = 0
                        if self.timeout is not None:
                            options["timeout"] = self.timeout
                    self._client = resolve_embeddings(model=self.model, **options)
        return self._client

    def _request(self) -> dict[str, Any]:
        """The model's label and the timeout that embedding errors report."""
        from openevals._judge.errors import timeout_seconds

        timeout = self.timeout
        if timeout is None and self._given is not None:
            timeout = timeout_seconds(getattr(self._given, "request_timeout", None))
        return {"model": self.label, "timeout": timeout}

    def embed(self, texts: list[str]) -> Any:
        """Vectors for ``texts``, transient failures retried (blocking)."""
        from openevals._embed_calls import embed

        return embed(self.client, texts, **self._request())

    async def aembed(self, texts: list[str]) -> Any:
        """Vectors for ``texts``, transient failures retried (asyncio)."""
        from openevals._embed_calls import aembed

        return await aembed(self.client, texts, **self._request())

    @property
    def label(self) -> str:
        """The model as error messages name it."""
        from openevals.embeddings import embeddings_label

        return show(self.model) if self._given is None else embeddings_label(self._given)

    def similarity(self, out_vec: Any, ref_vec: Any, out_name: str, ref_name: str) -> float:
        from openevals.embeddings import InvalidEmbeddingError, cosine_similarity, dot_product

        measure = dot_product if self.algorithm == "dot_product" else cosine_similarity
        try:
            value = measure(out_vec, ref_vec)
        except ValueError as exc:  # vectors already checked: only an overflow is left
            raise InvalidEmbeddingError(
                f"embedding model {self.label}, `{out_name}` and `{ref_name}`: {exc}"
            ) from None
        return round(value, 2)

    def checked(self, vectors: Any, names: list[str]) -> list[Any]:
        from openevals.embeddings import check_embeddings

        return check_embeddings(vectors, names, model=self.label)

    def pair_score(self, vectors: Any) -> float:
        out_vec, ref_vec = self.checked(vectors, ["outputs", "reference_outputs"])
        return self.similarity(out_vec, ref_vec, "outputs", "reference_outputs")

    def batch_scores(
        self, vectors: Any, positions: list[int], n_pairs: int, from_pairs: bool
    ) -> list[float]:
        out_names = [f"pairs[{i}][0]" if from_pairs else f"outputs[{i}]" for i in range(n_pairs)]
        ref_names = [
            f"pairs[{i}][1]" if from_pairs else f"reference_outputs[{i}]" for i in range(n_pairs)
        ]
        # Each distinct text is named after the first input that holds it.
        names: dict[int, str] = {}
        for position, name in zip(positions, out_names + ref_names, strict=True):
            names.setdefault(position, name)
        vectors = self.checked(vectors, [names[p] for p in range(len(names))])
        return [
            self.similarity(
                vectors[positions[i]], vectors[positions[n_pairs + i]], out_names[i], ref_names[i]
            )
            for i in range(n_pairs)
        ]


def _checked_timeout(timeout: Any, model: str, embeddings: Any) -> float | None:
    """``timeout=``: None, or seconds > 0 for a remote model built from ``model``."""
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(
            f"`timeout` must be a number of seconds > 0 (or None for the client's default); "
            f"got {show(timeout)}"
        )
    if embeddings is not None:
        raise ValueError(
            "`timeout` applies to a model built from `model`; you passed `embeddings`, so set "
            "the timeout on that object (e.g. OpenAIEmbeddings(timeout=...))"
        )
    if not model.strip().lower().startswith("openai:"):
        raise ValueError(
            f"`timeout` is supported for 'openai:...' models; {show(model)} is not one (a "
            "'local:' model runs in this process). For another provider, build its embeddings "
            "object with a timeout and pass it as `embeddings`"
        )
    return float(timeout)


def _texts(outputs: Any, reference_outputs: Any) -> list[str]:
    return [_as_text(outputs, "outputs"), _as_text(reference_outputs, "reference_outputs")]


def _check_texts(call: dict[str, Any]) -> dict[str, Any]:
    """Refuse values that cannot be embedded before anything is traced or sent."""
    _texts(call["outputs"], call["reference_outputs"])
    return call


_INFO = EvaluatorInfo(run_name=_KEY, feedback_keys=(_KEY,))
_SHELL: dict[str, Any] = {
    "prepare": _check_texts,
    "passes": ("outputs", "reference_outputs"),
    "paired": True,
    "name": "embedding_similarity",
    "module": __name__,
}


# One flow per entry point, run by openevals._drivers: it yields the texts to embed and receives
# their vectors; the sync factory performs that with ``embed_documents``, the async one with
# ``aembed_documents``. Nothing else differs between the two.
Texts = list[str]


def _pair_flow(core: _Core, outputs: Any, reference_outputs: Any) -> Generator[Texts, Any, float]:
    vectors = yield _texts(outputs, reference_outputs)
    return core.pair_score(vectors)


def _batch_flow(
    core: _Core,
    pairs: Iterable[tuple[Any, Any]] | None,
    outputs: Sequence[Any] | None,
    reference_outputs: Sequence[Any] | None,
) -> Generator[Texts, Any, list[tuple[Any, Any, float]]]:
    outs, refs = _batch_inputs(pairs, outputs, reference_outputs)
    distinct, positions = _unique(outs + refs)
    vectors = (yield distinct) if distinct else []
    scores = core.batch_scores(vectors, positions, len(outs), pairs is not None)
    return list(zip(outs, refs, scores, strict=True))


def _precomputed(score: float) -> Any:
    def scorer(**_: Any) -> float:
        return score

    return scorer


# --------------------------------------------------------------------------- factories


def create_embedding_similarity_evaluator(
    *,
    model: str = "openai:text-embedding-3-small",
    embeddings: Embeddings | None = None,
    algorithm: Algorithm = "cosine",
    timeout: float | None = None,
) -> EmbeddingSimilarityEvaluator:
    """Score how close ``outputs`` is to ``reference_outputs`` in embedding space.

    ``model`` is a ``"provider:model"`` string (``"openai:..."``, ``"local:all-MiniLM-L6-v2"`` for
    the offline model, or any provider ``langchain.embeddings.init_embeddings`` knows); a LangChain
    ``embeddings`` instance wins over ``model``. ``algorithm`` is ``"cosine"`` (default) or
    ``"dot_product"``. Scores are rounded to 2 decimals under the key ``embedding_similarity``.
    Non-string values are JSON-serialised (sorted keys) first, at any depth (a value that
    contains itself raises ``ValueError`` naming the parameter).

    ``timeout`` bounds each request to an ``"openai:..."`` model, in seconds (None: the
    client's default). Timeouts, 5xx and 429 replies (``Retry-After`` honoured), dropped
    connections and unreadable replies are retried; when the retries are used up the evaluator
    raises :class:`~openevals.embeddings.EmbeddingTimeoutError` or
    :class:`~openevals.embeddings.EmbeddingServerError` (both :class:`EmbeddingError`, naming
    the model), never a score.

    The returned evaluator also has ``batch(outputs=[...], reference_outputs=[...])`` (or
    ``batch([(out, ref), ...])``), which embeds every distinct text in one call and returns one
    result per pair.
    """
    core = _Core(model=model, embeddings=embeddings, algorithm=algorithm, timeout=timeout)

    def scorer(*, outputs: Any, reference_outputs: Any) -> float:
        return drive(_pair_flow(core, outputs, reference_outputs), core.embed)

    embedding_similarity = make_evaluator(scorer, _INFO, **_SHELL)

    def batch(
        pairs: Iterable[tuple[Any, Any]] | None = None,
        *,
        outputs: Sequence[Any] | None = None,
        reference_outputs: Sequence[Any] | None = None,
    ) -> list[EvaluatorResult]:
        scored = drive(_batch_flow(core, pairs, outputs, reference_outputs), core.embed)
        return [
            cast(
                EvaluatorResult,
                run_scorer(_INFO, _precomputed(score), outputs=o, reference_outputs=r),
            )
            for o, r, score in scored
        ]

    embedding_similarity.batch = batch  # type: ignore[attr-defined]
    return cast(EmbeddingSimilarityEvaluator, embedding_similarity)


def _async_evaluator(options: dict[str, Any]) -> AsyncEmbeddingSimilarityEvaluator:
    """The async form: the same flows, driven with ``aembed_documents``."""
    core = _Core(**options)

    async def scorer(*, outputs: Any, reference_outputs: Any) -> float:
        return await adrive(_pair_flow(core, outputs, reference_outputs), core.aembed)

    embedding_similarity = make_async_evaluator(scorer, _INFO.as_async(), **_SHELL)

    async def batch(
        pairs: Iterable[tuple[Any, Any]] | None = None,
        *,
        outputs: Sequence[Any] | None = None,
        reference_outputs: Sequence[Any] | None = None,
    ) -> list[EvaluatorResult]:
        scored = await adrive(_batch_flow(core, pairs, outputs, reference_outputs), core.aembed)
        return [
            cast(
                EvaluatorResult,
                await arun_scorer(_INFO, _precomputed(score), outputs=o, reference_outputs=r),
            )
            for o, r, score in scored
        ]

    embedding_similarity.batch = batch  # type: ignore[attr-defined]
    return cast(AsyncEmbeddingSimilarityEvaluator, embedding_similarity)


create_async_embedding_similarity_evaluator = async_twin(
    create_embedding_similarity_evaluator,
    _async_evaluator,
    returns="AsyncEmbeddingSimilarityEvaluator",
    note="``aembed_documents``",
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
