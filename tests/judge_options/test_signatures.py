"""Every judge factory's signature: unchanged from before the options were declared once, plus
``samples`` / ``score_weighting``, and in agreement with its declaration in
``openevals._judge.options`` (so the two cannot drift apart)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import Any

import pytest

from openevals._judge.options import FACTORIES, OPTIONS

MODULES = (
    "openevals.llm",
    "openevals.trajectory.llm",
    "openevals.code.llm",
    "openevals.rag.llm_metrics",
    "openevals.pairwise.judge",
    "openevals.graph_trajectory.llm",
    "openevals.rubric",
)
NEW = {"samples": "int = 1", "score_weighting": "ScoreWeighting | None = None"}

# The signatures before this change (printed from main with inspect.signature); long prompt
# defaults as a hash of their text.
BEFORE = {
    "openevals.llm:create_llm_as_judge": (
        "prompt: Any = <required>, feedback_key: str = 'score', judge: Any = None, model: str | None = None, system: str | None = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.llm:create_async_llm_as_judge": (
        "prompt: Any = <required>, feedback_key: str = 'score', judge: Any = None, model: str | None = None, system: str | None = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.llm:create_pairwise_llm_as_judge": (
        "prompt: Any = sha1:5ad02f41c729, feedback_key: str = 'pairwise_preference', judge: Any = None, model: str | None = None, system: str | None = None, criteria: str | None = None, allow_ties: bool = True, swap_positions: bool = True, max_retries: int = 3"
        + " -> "
        + "Any"
    ),
    "openevals.llm:create_async_pairwise_llm_as_judge": (
        "prompt: Any = sha1:5ad02f41c729, feedback_key: str = 'pairwise_preference', judge: Any = None, model: str | None = None, system: str | None = None, criteria: str | None = None, allow_ties: bool = True, swap_positions: bool = True, max_retries: int = 3"
        + " -> "
        + "Any"
    ),
    "openevals.graph_trajectory.llm:create_graph_trajectory_llm_as_judge": (
        "prompt: Any = sha1:94acbd4f8ac0, model: str | None = None, feedback_key: str = 'graph_trajectory_accuracy', judge: Any = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, system: str | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.graph_trajectory.llm:create_async_graph_trajectory_llm_as_judge": (
        "prompt: Any = sha1:94acbd4f8ac0, model: str | None = None, feedback_key: str = 'graph_trajectory_accuracy', judge: Any = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, system: str | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.rubric:create_rubric_judge": (
        "criteria: Mapping[str, Any] | Sequence[Criterion] = <required>, prompt: Any = sha1:25f682c040cc, judge: Any = None, model: str | None = None, system: str | None = None, few_shot_examples: Sequence[FewShotExample] | None = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.rubric:create_async_rubric_judge": (
        "criteria: Mapping[str, Any] | Sequence[Criterion] = <required>, prompt: Any = sha1:25f682c040cc, judge: Any = None, model: str | None = None, system: str | None = None, few_shot_examples: Sequence[FewShotExample] | None = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.trajectory.llm:create_trajectory_llm_as_judge": (
        "prompt: Any = sha1:1d874edb4d8e, model: str | None = None, feedback_key: str = 'trajectory_accuracy', judge: Any = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, system: str | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.trajectory.llm:create_async_trajectory_llm_as_judge": (
        "prompt: Any = sha1:1d874edb4d8e, model: str | None = None, feedback_key: str = 'trajectory_accuracy', judge: Any = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, system: str | None = None, output_schema: Any = None, structured_output_kwargs: Mapping[str, Any] | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.code.llm:create_code_llm_as_judge": (
        "prompt: Any = <required>, feedback_key: str = 'code_correctness', code_extraction_strategy: CodeExtractionStrategy = 'none', code_extractor: Callable[[Any], str | None] | None = None, judge: Any = None, model: str | None = None, system: str | None = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, max_retries: int = 3"
        + " -> "
        + "CodeEvaluator"
    ),
    "openevals.code.llm:create_async_code_llm_as_judge": (
        "prompt: Any = <required>, feedback_key: str = 'code_correctness', code_extraction_strategy: CodeExtractionStrategy = 'none', code_extractor: Callable[[Any], Any] | None = None, judge: Any = None, model: str | None = None, system: str | None = None, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True, few_shot_examples: Sequence[FewShotExample] | None = None, max_retries: int = 3"
        + " -> "
        + "AsyncCodeEvaluator"
    ),
    "openevals.rag.llm_metrics:create_answer_correctness_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:c9979b8c8893, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.rag.llm_metrics:create_async_answer_correctness_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:c9979b8c8893, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.rag.llm_metrics:create_faithfulness_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:a6067023ca23, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.rag.llm_metrics:create_async_faithfulness_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:a6067023ca23, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.rag.llm_metrics:create_context_relevance_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:b7a1bb4b0da1, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.rag.llm_metrics:create_async_context_relevance_evaluator": (
        "model: str | None = None, judge: Any = None, prompt: Any = sha1:b7a1bb4b0da1, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
    "openevals.rag.llm_metrics:create_answer_relevancy_evaluator": (
        "model: str | None = None, judge: Any = None, embeddings: Any = None, embedding_model: str | None = None, strictness: int = 3, prompt: Any = sha1:88b62a754991, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleEvaluator"
    ),
    "openevals.rag.llm_metrics:create_async_answer_relevancy_evaluator": (
        "model: str | None = None, judge: Any = None, embeddings: Any = None, embedding_model: str | None = None, strictness: int = 3, prompt: Any = sha1:88b62a754991, system: str | None = None, max_retries: int = 3"
        + " -> "
        + "SimpleAsyncEvaluator"
    ),
}


def _default(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return "<required>"
    if isinstance(value, str) and len(value) > 40:
        return "sha1:" + hashlib.sha1(value.encode()).hexdigest()[:12]
    return repr(value)


def _factory(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("path", sorted(BEFORE))
def test_signature_is_unchanged_apart_from_the_new_options(path: str) -> None:
    sig = inspect.signature(_factory(path))
    old = [
        f"{p.name}: {p.annotation} = {_default(p.default)}"
        for p in sig.parameters.values()
        if p.name not in NEW
    ]
    assert ", ".join(old) + " -> " + str(sig.return_annotation) == BEFORE[path]
    assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
    added = {p.name: f"{p.annotation} = {_default(p.default)}" for p in sig.parameters.values()}
    assert added["samples"] == NEW["samples"]
    if "output_schema" in sig.parameters or "continuous" in sig.parameters:
        assert added["score_weighting"] == NEW["score_weighting"]


def _declared() -> dict[str, Any]:
    for module in MODULES:
        importlib.import_module(module)
    return dict(FACTORIES)


def test_every_judge_factory_is_declared() -> None:
    declared = _declared()
    assert {path.split(":")[1] for path in BEFORE} == set(declared)


def _disagreements(spec: Any, params: Any) -> list[str]:
    """How a factory's parameters differ from its declaration (empty: they agree)."""
    problems = []
    for option in spec.takes:
        param = params.get(option)
        if param is None:
            problems.append(f"{option}: not a parameter")
            continue
        if param.annotation != OPTIONS[option].annotation:
            problems.append(f"{option}: annotation {param.annotation!r}")
        expected = inspect.Parameter.empty if spec.required(option) else spec.default(option)
        if param.default is not expected and param.default != expected:
            problems.append(f"{option}: default {param.default!r}")
    # No judge option may be taken without being declared (it would bypass the shared checks).
    problems += [f"{p}: not declared" for p in params if p in OPTIONS and p not in spec.takes]
    return problems


@pytest.mark.parametrize("name", sorted({p.split(":")[1] for p in BEFORE}))
def test_signature_agrees_with_the_declaration(name: str) -> None:
    spec = _declared()[name]
    path = next(p for p in BEFORE if p.endswith(":" + name))
    assert _disagreements(spec, inspect.signature(_factory(path)).parameters) == []
    twin = _declared()[spec.async_twin or spec.sync_twin or ""]
    assert twin.takes == spec.takes and dict(twin.defaults) == dict(spec.defaults)
    assert twin.is_async != spec.is_async


def test_a_drifted_signature_is_caught() -> None:
    """The agreement check really compares defaults, annotations and undeclared options."""
    spec = _declared()["create_code_llm_as_judge"]

    def drifted(
        *,
        prompt: Any,
        feedback_key: str = "score",
        judge: Any = None,
        model: str | None = None,
        system: int | None = None,
        continuous: bool = False,
        choices: Any = None,
        use_reasoning: bool = True,
        few_shot_examples: Any = None,
        max_retries: int = 5,
        samples: int = 1,
        score_weighting: Any = None,
        output_schema: Any = None,
    ) -> None: ...

    problems = _disagreements(spec, inspect.signature(drifted).parameters)
    assert any(p.startswith("feedback_key: default") for p in problems)
    assert any(p.startswith("max_retries: default") for p in problems)
    assert any(p.startswith("system: annotation") for p in problems)
    assert "output_schema: not declared" in problems
