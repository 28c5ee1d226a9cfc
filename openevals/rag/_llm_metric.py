"""Shared machinery of the LLM-based RAG metrics.

A metric is one structured judge call (through :class:`~openevals._judge.core.JudgeCore`, so it
gets the structured-output ladder, retries and repair), optionally followed by one batched
embedding call, and then a pure function that turns the answer into results. That is one flow
(:meth:`LLMMetric.flow`), written once; the judge shell (:mod:`openevals._judge.shell`) runs it
for the sync and the async evaluator, and :data:`EMBED_STEPS` performs its embedding step. With
``samples=n`` the judge answers n times; each answer is computed into results, and the scores are
averaged (``metadata["samples"]`` and ``metadata["std"]`` hold the spread; the comment and the
rest of the metadata are the first sample's).
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openevals._judge.core import JudgeCore
from openevals._judge.shell import Ask, JudgeCall, Steps, judge_evaluator
from openevals._judge.steps import Outcome
from openevals._messages import normalize_final_app_outputs_as_string, to_json_text

Prepared = dict[str, Any]


@dataclass
class LLMMetric:
    """Everything about one metric except how it waits for I/O."""

    core: JudgeCore
    """The metric's judge; its run name and feedback key are the evaluator's."""
    prepare: Callable[[dict[str, Any]], Prepared]
    compute: Callable[[dict[str, Any], Prepared, list[list[float]] | None], Any]
    embed_texts: Callable[[dict[str, Any], Prepared], list[str] | None] | None = None
    embeddings_factory: Callable[[], Any] | None = None
    #: Every feedback key its results carry, when there are several (answer correctness).
    feedback_keys: tuple[str, ...] = ()
    _embeddings: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def embeddings(self) -> Any:
        """The embeddings client, built once per evaluator on first use."""
        if self._embeddings is None:
            with self._lock:
                if self._embeddings is None:
                    assert self.embeddings_factory is not None
                    self._embeddings = self.embeddings_factory()
        return self._embeddings

    def flow(self, **kwargs: Any) -> Generator[Any, Any, Any]:
        """One evaluation: prepare, ask the judge, embed each answer's texts when the metric
        needs vectors, compute each sample's results and average them."""
        prepared = self.prepare(kwargs)
        call = JudgeCall(
            prepared.get("inputs"),
            prepared.get("outputs"),
            prepared.get("reference_outputs"),
            dict(prepared.get("extra", {})),
        )
        (outcome,) = yield Ask((call,))
        results = []
        for answer in _answers(outcome):
            texts = self.embed_texts(answer, prepared) if self.embed_texts else None
            vectors = (yield _Embed(self, texts)) if texts else None
            results.append(self.compute(answer, prepared, vectors))
        return _mean_of(results)


@dataclass(frozen=True)
class _Embed:
    """Flow step: the vectors of ``texts`` from the metric's embeddings client."""

    metric: LLMMetric
    texts: list[str]


def _embed(step: _Embed) -> Any:
    """The metric's embedding call, with the embeddings' retries and errors."""
    from openevals._embed_calls import embed
    from openevals.embeddings import embeddings_label

    client = step.metric.embeddings
    return embed(client, step.texts, model=embeddings_label(client))


async def _aembed(step: _Embed) -> Any:
    from openevals._embed_calls import aembed
    from openevals.embeddings import embeddings_label

    client = step.metric.embeddings
    return await aembed(client, step.texts, model=embeddings_label(client))


EMBED_STEPS = Steps(sync=_embed, asynchronous=_aembed)


def with_usage(metadata: dict[str, Any], usage: Mapping[str, int] | None) -> dict[str, Any]:
    if usage:
        metadata["usage"] = dict(usage)
    return metadata


def _answers(outcome: Outcome) -> list[dict[str, Any]]:
    """One answer dict per judge sample; the token usage of all samples rides on each."""
    return [{**value, "__usage__": outcome.usage} for value in outcome.values or [outcome.value]]


def _mean_of(results: list[Any]) -> Any:
    """The results of several samples as one: mean score, the samples and their spread.

    Each result is ``(score, comment, metadata)`` or a dict of key -> result dict; the comment
    and metadata are the first sample's.
    """
    if len(results) == 1:
        return results[0]

    def spread(scores: list[float], metadata: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**(metadata or {}), "samples": scores, "std": statistics.pstdev(scores)}

    first = results[0]
    if isinstance(first, tuple):
        scores = [float(r[0]) for r in results]
        return (statistics.fmean(scores), first[1], spread(scores, first[2]))
    merged = {}
    for key, result in first.items():
        scores = [float(r[key]["score"]) for r in results]
        merged[key] = {
            **result,
            "score": statistics.fmean(scores),
            "metadata": spread(scores, result.get("metadata")),
        }
    return merged


def build_evaluator(metric: LLMMetric, *, is_async: bool) -> Any:
    """The metric's evaluator: its flow behind the judge shell."""
    return judge_evaluator(
        metric.core,
        is_async=is_async,
        flow=metric.flow,
        steps=EMBED_STEPS,
        feedback_keys=metric.feedback_keys or None,
        raw=False,
    )


def _context_text(item: Any, index: int) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for key in ("content", "page_content", "text"):
            if isinstance(item.get(key), str):
                return str(item[key])
    text = getattr(item, "page_content", None)
    if isinstance(text, str):
        return text
    raise TypeError(
        f"`context[{index}]` must be a string, a dict with 'content', or a LangChain Document; got "
        f"{type(item).__name__}"
    )


def context_list(context: Any) -> list[str]:
    """Normalise ``context`` (a string, or a list of strings / dicts / Documents) to strings."""
    if context is None:
        raise ValueError(
            "this metric needs `context` (the retrieved passages): pass context='...' or a list "
            "of strings, dicts with 'content', or LangChain Documents"
        )
    if isinstance(context, str):
        return [context]
    if isinstance(context, Mapping) or not isinstance(context, Sequence):
        return [_context_text(context, 0)]
    return [_context_text(item, i) for i, item in enumerate(context)]


def render_contexts(passages: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {text}" for i, text in enumerate(passages))


def require_text(value: Any, name: str) -> str:
    if value is None:
        raise ValueError(f"this metric needs `{name}`; got None")
    if isinstance(value, str):
        return value
    try:
        return normalize_final_app_outputs_as_string(value)
    except (TypeError, ValueError):
        return to_json_text(value)
