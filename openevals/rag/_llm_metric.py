"""Shared machinery of the LLM-based RAG metrics.

A metric is one structured judge call (through :class:`~openevals._judge.core.JudgeCore`, so it
gets the structured-output ladder, retries and repair), optionally followed by one batched
embedding call, and then a pure function that turns the answer into results. The sync and async
evaluators are thin shells over that description.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openevals._judge.core import JudgeCore
from openevals._messages import normalize_final_app_outputs_as_string, to_json_text
from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = ["LLMMetric", "build_async_evaluator", "build_sync_evaluator", "render_contexts"]

Prepared = dict[str, Any]


@dataclass
class LLMMetric:
    """Everything about one metric except how it waits for I/O."""

    core: JudgeCore
    run_name: str
    feedback_key: str
    prepare: Callable[[dict[str, Any]], Prepared]
    compute: Callable[[dict[str, Any], Prepared, list[list[float]] | None], Any]
    embed_texts: Callable[[dict[str, Any], Prepared], list[str] | None] | None = None
    embeddings_factory: Callable[[], Any] | None = None
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

    @staticmethod
    def judge_args(prepared: Prepared) -> tuple[Any, Any, Any, dict[str, Any]]:
        return (
            prepared.get("inputs"),
            prepared.get("outputs"),
            prepared.get("reference_outputs"),
            dict(prepared.get("extra", {})),
        )


def with_usage(metadata: dict[str, Any], usage: Mapping[str, int] | None) -> dict[str, Any]:
    if usage:
        metadata["usage"] = dict(usage)
    return metadata


def build_sync_evaluator(metric: LLMMetric) -> SimpleEvaluator:
    def scorer(**kwargs: Any) -> Any:
        prepared = metric.prepare(kwargs)
        outcome = metric.core.ask_sync(*metric.judge_args(prepared))
        answer = dict(outcome.value)
        answer["__usage__"] = outcome.usage
        texts = metric.embed_texts(answer, prepared) if metric.embed_texts else None
        vectors = metric.embeddings.embed_documents(texts) if texts else None
        return metric.compute(answer, prepared, vectors)

    def evaluator(**kwargs: Any) -> Any:
        return _run_evaluator(
            run_name=metric.run_name, scorer=scorer, feedback_key=metric.feedback_key, **kwargs
        )

    evaluator.core = metric.core  # type: ignore[attr-defined]
    return evaluator


def build_async_evaluator(metric: LLMMetric) -> SimpleAsyncEvaluator:
    async def scorer(**kwargs: Any) -> Any:
        prepared = metric.prepare(kwargs)
        outcome = await metric.core.ask_async(*metric.judge_args(prepared))
        answer = dict(outcome.value)
        answer["__usage__"] = outcome.usage
        texts = metric.embed_texts(answer, prepared) if metric.embed_texts else None
        vectors = await metric.embeddings.aembed_documents(texts) if texts else None
        return metric.compute(answer, prepared, vectors)

    async def evaluator(**kwargs: Any) -> Any:
        return await _arun_evaluator(
            run_name=metric.run_name, scorer=scorer, feedback_key=metric.feedback_key, **kwargs
        )

    evaluator.core = metric.core  # type: ignore[attr-defined]
    return evaluator


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
