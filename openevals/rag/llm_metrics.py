"""LLM-based RAG metrics: claim-level answer correctness, faithfulness, context relevance and
answer relevancy.

* Answer correctness (graphrag-eval): the judge extracts the claims of the reference and of the
  answer and pairs the ones that state the same fact; results ``answer_recall``,
  ``answer_precision`` and ``answer_f1``.
* Faithfulness (Haystack): the answer is split into statements, each judged inferable from the
  contexts or not; score = supported / total.
* Context relevance (Haystack): the statements of each context that help answer the question;
  a context scores 1 when it has any, and the score is the mean over contexts.
* Answer relevancy (ragas): the judge writes ``strictness`` questions the answer responds to and
  flags noncommittal answers (score 0); score = mean cosine similarity between the embedding of the
  real question and those of the generated ones.

Each is one structured judge call per sample (plus one batched embedding call for answer
relevancy). Edge cases: an empty denominator gives 1.0 when both sides are empty and 0.0 otherwise
(claims); an answer with no checkable statement scores 0.0 for faithfulness.

Every factory also takes ``samples=n``: the judge answers n times and the scores are averaged
(``metadata["samples"]``, ``metadata["std"]``); see :mod:`openevals.rag._llm_metric`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from openevals._judge.answers import MAX_ANSWER_CHARS
from openevals._judge.core import JudgeCore
from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.errors import JudgeOutputError
from openevals._judge.options import FactorySpec, ModelOptions
from openevals._judge.shell import build_core
from openevals._matching import maximum_bipartite_matching
from openevals._repr import show
from openevals.prompts._loader import load_prompt
from openevals.rag._llm_metric import (
    LLMMetric,
    build_evaluator,
    context_list,
    render_contexts,
    require_text,
    with_usage,
)

__all__ = [
    "ANSWER_CORRECTNESS_PROMPT",
    "ANSWER_RELEVANCY_PROMPT",
    "CONTEXT_RELEVANCE_PROMPT",
    "FAITHFULNESS_PROMPT",
    "create_answer_correctness_evaluator",
    "create_answer_relevancy_evaluator",
    "create_async_answer_correctness_evaluator",
    "create_async_answer_relevancy_evaluator",
    "create_async_context_relevance_evaluator",
    "create_async_faithfulness_evaluator",
    "create_context_relevance_evaluator",
    "create_faithfulness_evaluator",
]

ANSWER_CORRECTNESS_PROMPT = load_prompt("rag_metrics/answer_correctness.txt")
FAITHFULNESS_PROMPT = load_prompt("rag_metrics/faithfulness.txt")
CONTEXT_RELEVANCE_PROMPT = load_prompt("rag_metrics/context_relevance.txt")
ANSWER_RELEVANCY_PROMPT = load_prompt("rag_metrics/answer_relevancy.txt")

RAG_ORDER = "model judge prompt system max_retries samples"
"""The order of the RAG judges' parameters (``timeout`` and options added later follow)."""
_RELEVANCY_ORDER = (
    "model judge embeddings embedding_model strictness prompt system max_retries samples"
)


@dataclass(frozen=True, kw_only=True)
class RelevancyOptions(ModelOptions):
    """The options of the answer relevancy judge: the judge's, and how it embeds questions."""

    embeddings: Any = None
    embedding_model: str | None = None
    strictness: int = 3


_O = TypeVar("_O", bound=ModelOptions)

_STR = {"type": "string"}
_INT = {"type": "integer"}
_STR_LIST = {"type": "array", "items": _STR}


def _records(**properties: Any) -> dict[str, Any]:
    """A JSON-schema array of objects with these properties, every one required."""
    items = {"type": "object", "properties": properties, "required": list(properties)}
    return {"type": "array", "items": items}


CLAIMS_SCHEMA: dict[str, Any] = {
    "title": "claim_comparison",
    "type": "object",
    "properties": {
        "reference_claims": _STR_LIST,
        "answer_claims": _STR_LIST,
        "reasoning": _STR,
        "matches": _records(reference_index=_INT, answer_index=_INT),
    },
    "required": ["reference_claims", "answer_claims", "reasoning", "matches"],
}

STATEMENTS_SCHEMA: dict[str, Any] = {
    "title": "statement_verdicts",
    "type": "object",
    "properties": {
        "statements": _records(statement=_STR, reason=_STR, supported={"type": "boolean"})
    },
    "required": ["statements"],
}

CONTEXTS_SCHEMA: dict[str, Any] = {
    "title": "context_relevance",
    "type": "object",
    "properties": {"contexts": _records(index=_INT, relevant_statements=_STR_LIST)},
    "required": ["contexts"],
}

QUESTIONS_SCHEMA: dict[str, Any] = {
    "title": "generated_questions",
    "type": "object",
    "properties": {"questions": _STR_LIST, "noncommittal": {"type": "boolean"}},
    "required": ["questions", "noncommittal"],
}


def _metric_core(spec: FactorySpec, options: ModelOptions, key: str, schema: Any) -> JudgeCore:
    """The judge of one metric: the factory's options plus the metric's key and answer schema."""
    return build_core(spec, options, run_name=key, feedback_key=key, output_schema=schema)


def _evaluator(
    metric: Callable[[FactorySpec, _O], LLMMetric],
) -> Callable[[FactorySpec, _O], object]:
    """The builder of a metric's public factories: its evaluator, sync or async as ``spec``."""

    def build(spec: FactorySpec, options: _O) -> object:
        return build_evaluator(metric(spec, options), is_async=spec.is_async)

    return build


def _ratio(numerator: int, denominator: int, *, other_empty: bool) -> float:
    if denominator == 0:
        return 1.0 if other_empty else 0.0
    return numerator / denominator


def _bad_answer(message: str, answer: Mapping[str, Any]) -> JudgeOutputError:
    raw = {k: v for k, v in answer.items() if k != "__usage__"}
    return JudgeOutputError(f"{message}. Judge answer: {show(raw)}", raw=repr(raw))


# --------------------------------------------------------------------------- answer correctness


def _prepare_correctness(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputs": kwargs.get("inputs") if kwargs.get("inputs") is not None else "",
        "outputs": require_text(kwargs.get("outputs"), "outputs"),
        "reference_outputs": require_text(kwargs.get("reference_outputs"), "reference_outputs"),
    }


def _compute_correctness(answer: dict[str, Any], _: Any, __: Any) -> dict[str, Any]:
    reference = [str(c) for c in answer["reference_claims"]]
    actual = [str(c) for c in answer["answer_claims"]]
    adjacency: list[list[int]] = [[] for _ in reference]
    for pair in answer["matches"]:
        r, a = pair.get("reference_index"), pair.get("answer_index")
        if not (isinstance(r, int) and isinstance(a, int)) or not (
            0 <= r < len(reference) and 0 <= a < len(actual)
        ):
            raise _bad_answer(f"the judge matched claims that do not exist ({show(pair)})", answer)
        if a not in adjacency[r]:
            adjacency[r].append(a)
    pairing = maximum_bipartite_matching(len(reference), len(actual), adjacency)
    matched = sum(1 for a in pairing if a is not None)
    recall = _ratio(matched, len(reference), other_empty=not actual)
    precision = _ratio(matched, len(actual), other_empty=not reference)
    f1 = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    reason = str(answer.get("reasoning", ""))
    metadata = with_usage(
        {
            "answer_reference_claims_count": len(reference),
            "answer_actual_claims_count": len(actual),
            "answer_matching_claims_count": matched,
            "answer_correctness_reason": reason,
            "reference_claims": reference,
            "answer_claims": actual,
            "matches": [
                {"reference_index": r, "answer_index": a}
                for r, a in enumerate(pairing)
                if a is not None
            ],
        },
        answer.get("__usage__"),
    )
    return {
        key: {"score": value, "reasoning": reason, "metadata": metadata}
        for key, value in (
            ("answer_recall", recall),
            ("answer_precision", precision),
            ("answer_f1", f1),
        )
    }


def _correctness_metric(spec: FactorySpec, options: ModelOptions) -> LLMMetric:
    return LLMMetric(
        core=_metric_core(spec, options, "answer_correctness", CLAIMS_SCHEMA),
        prepare=_prepare_correctness,
        compute=_compute_correctness,
        feedback_keys=("answer_recall", "answer_precision", "answer_f1"),
    )


create_answer_correctness_evaluator, create_async_answer_correctness_evaluator = judge_factories(
    "create_answer_correctness_evaluator",
    ModelOptions,
    _evaluator(_correctness_metric),
    EVALUATORS,
    order=RAG_ORDER,
    prompt=ANSWER_CORRECTNESS_PROMPT,
    doc="""Claim-level correctness of ``outputs`` against ``reference_outputs`` (graphrag-eval).

Returns three results: ``answer_recall`` (matched / reference claims), ``answer_precision``
(matched / answer claims) and ``answer_f1``; each carries the claim counts, the claims, the
matches and the judge's reason in ``metadata``.
""",
)


# --------------------------------------------------------------------------- faithfulness


def _prepare_with_context(kwargs: dict[str, Any], *, needs_outputs: bool) -> dict[str, Any]:
    passages = context_list(kwargs.get("context"))
    prepared: dict[str, Any] = {
        "inputs": kwargs.get("inputs") if kwargs.get("inputs") is not None else "",
        "extra": {"context": render_contexts(passages)},
        "passages": passages,
    }
    if needs_outputs:
        prepared["outputs"] = require_text(kwargs.get("outputs"), "outputs")
    return prepared


def _compute_faithfulness(answer: dict[str, Any], _: Any, __: Any) -> Any:
    statements = answer["statements"]
    verdicts = [bool(s.get("supported")) for s in statements]
    supported = sum(verdicts)
    score = supported / len(verdicts) if verdicts else 0.0
    unsupported = [str(s.get("statement")) for s in statements if not s.get("supported")]
    if not statements:
        comment = "The answer contains no statement that can be checked against the context."
    else:
        comment = f"{supported} of {len(statements)} statements are supported by the context."
        if unsupported:
            comment += " Unsupported: " + "; ".join(show(u, MAX_ANSWER_CHARS) for u in unsupported)
    metadata = with_usage(
        {
            "statements": [str(s.get("statement")) for s in statements],
            "statement_scores": [int(v) for v in verdicts],
            "reasons": [str(s.get("reason", "")) for s in statements],
        },
        answer.get("__usage__"),
    )
    return (score, comment, metadata)


def _faithfulness_metric(spec: FactorySpec, options: ModelOptions) -> LLMMetric:
    return LLMMetric(
        core=_metric_core(spec, options, "faithfulness", STATEMENTS_SCHEMA),
        prepare=lambda kw: _prepare_with_context(kw, needs_outputs=True),
        compute=_compute_faithfulness,
    )


create_faithfulness_evaluator, create_async_faithfulness_evaluator = judge_factories(
    "create_faithfulness_evaluator",
    ModelOptions,
    _evaluator(_faithfulness_metric),
    EVALUATORS,
    order=RAG_ORDER,
    prompt=FAITHFULNESS_PROMPT,
    doc="""Fraction of the answer's statements that can be inferred from ``context`` (Haystack).

Call with ``outputs`` (the answer), ``context`` (a string or list of passages) and optionally
``inputs`` (the question). Key ``faithfulness``; statements and verdicts go to ``metadata``.
""",
)


# --------------------------------------------------------------------------- context relevance


def _compute_context_relevance(answer: dict[str, Any], prepared: dict[str, Any], _: Any) -> Any:
    passages = prepared["passages"]
    found: dict[int, list[str]] = {}
    for entry in answer["contexts"]:
        index = entry.get("index")
        if not isinstance(index, int) or not 0 <= index < len(passages):
            raise _bad_answer(
                f"the judge returned a context index {show(index)} that does not exist", answer
            )
        found.setdefault(index, []).extend(str(s) for s in entry.get("relevant_statements") or [])
    individual = [1.0 if found.get(i) else 0.0 for i in range(len(passages))]
    results = [
        {"relevant_statements": found.get(i, []), "score": individual[i]}
        for i in range(len(passages))
    ]
    score = sum(individual) / len(individual) if individual else 0.0
    relevant = sum(1 for s in individual if s)
    comment = (
        f"{relevant} of {len(passages)} contexts contain information relevant to the question."
    )
    metadata = with_usage(
        {"results": results, "individual_scores": individual}, answer.get("__usage__")
    )
    return (score, comment, metadata)


def _context_relevance_metric(spec: FactorySpec, options: ModelOptions) -> LLMMetric:
    core = _metric_core(spec, options, "context_relevance", CONTEXTS_SCHEMA)

    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        if kwargs.get("inputs") is None:
            raise ValueError("context relevance needs `inputs` (the question); got None")
        prepared = _prepare_with_context(kwargs, needs_outputs=False)
        prepared["inputs"] = kwargs["inputs"]
        if not prepared["passages"]:
            raise ValueError("context relevance needs at least one passage in `context`")
        return prepared

    return LLMMetric(
        core=core,
        prepare=prepare,
        compute=_compute_context_relevance,
    )


create_context_relevance_evaluator, create_async_context_relevance_evaluator = judge_factories(
    "create_context_relevance_evaluator",
    ModelOptions,
    _evaluator(_context_relevance_metric),
    EVALUATORS,
    order=RAG_ORDER,
    prompt=CONTEXT_RELEVANCE_PROMPT,
    doc="""Which retrieved passages help answer the question (Haystack's context relevance).

Call with ``inputs`` (the question) and ``context`` (passages). A passage scores 1 when the
judge finds statements in it relevant to the question; the score is the mean over passages, and
``metadata["results"]`` lists each passage's relevant statements and score.
""",
)


# --------------------------------------------------------------------------- answer relevancy


def _answer_relevancy_metric(spec: FactorySpec, options: RelevancyOptions) -> LLMMetric:
    strictness = options.strictness
    embeddings, embedding_model = options.embeddings, options.embedding_model
    if isinstance(strictness, bool) or not isinstance(strictness, int) or strictness < 1:
        raise ValueError(f"`strictness` must be an integer >= 1, got {show(strictness)}")
    core = _metric_core(spec, options, "answer_relevancy", QUESTIONS_SCHEMA)

    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        question = require_text(kwargs.get("inputs"), "inputs")
        return {
            "question": question,
            "outputs": require_text(kwargs.get("outputs"), "outputs"),
            "extra": {"strictness": strictness},
        }

    def embed_texts(answer: dict[str, Any], prepared: dict[str, Any]) -> list[str] | None:
        questions = [str(q) for q in answer["questions"] if str(q).strip()]
        if not questions:
            raise _bad_answer("the judge generated no questions", answer)
        if answer.get("noncommittal"):
            return None
        return [prepared["question"], *questions]

    def compute(answer: dict[str, Any], prepared: dict[str, Any], vectors: Any) -> Any:
        from openevals.embeddings import cosine_similarity

        questions = [str(q) for q in answer["questions"] if str(q).strip()]
        metadata = with_usage(
            {"generated_questions": questions, "noncommittal": bool(answer.get("noncommittal"))},
            answer.get("__usage__"),
        )
        if answer.get("noncommittal"):
            return (
                0.0,
                "The answer is noncommittal, so it does not address the question.",
                metadata,
            )
        question_vector, *generated = vectors
        similarities = [cosine_similarity(question_vector, v) for v in generated]
        metadata["similarities"] = similarities
        score = sum(similarities) / len(similarities)
        return (score, f"Mean similarity of {len(similarities)} generated questions.", metadata)

    def embeddings_factory() -> Any:
        from openevals.embeddings import resolve_embeddings

        return resolve_embeddings(embedding_model, embeddings)

    return LLMMetric(
        core=core,
        prepare=prepare,
        compute=compute,
        embed_texts=embed_texts,
        embeddings_factory=embeddings_factory,
    )


create_answer_relevancy_evaluator, create_async_answer_relevancy_evaluator = judge_factories(
    "create_answer_relevancy_evaluator",
    RelevancyOptions,
    _evaluator(_answer_relevancy_metric),
    EVALUATORS,
    order=_RELEVANCY_ORDER,
    prompt=ANSWER_RELEVANCY_PROMPT,
    doc="""How well ``outputs`` addresses the question ``inputs`` (ragas' answer relevancy).

The judge writes ``strictness`` questions the answer responds to (and flags noncommittal
answers, which score 0); the score is the mean cosine similarity between the embedding of the
real question and those of the generated ones. Embeddings come from ``embeddings`` (a LangChain
``Embeddings``) or ``embedding_model`` (``"openai:text-embedding-3-small"``,
``"local:all-MiniLM-L6-v2"``; default: the offline local model).
""",
)
