"""Evaluator specs for the CLI: parsing, building, and the errors for bad specs."""

from __future__ import annotations

from typing import Any

import pytest

from openevals.evaluation import EVALUATOR_NAMES, build_evaluator
from openevals.evaluation.registry import SpecError, parse_spec


def test_parse_spec_options_positional_and_colons_in_values() -> None:
    spec = parse_spec("llm:CORRECTNESS_PROMPT:feedback_key=correct:continuous=true")
    assert (spec.name, spec.positional) == ("llm", "CORRECTNESS_PROMPT")
    assert spec.options == {"feedback_key": "correct", "continuous": "true"}
    model = parse_spec("embedding_similarity:model=local:all-MiniLM-L6-v2:algorithm=cosine")
    assert model.options == {"model": "local:all-MiniLM-L6-v2", "algorithm": "cosine"}
    assert parse_spec("exact_match").options == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "non-empty"),
        ("recall:k=1:k=2", "sets option 'k' twice"),
        ("recall:=3", "without a name"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_spec(text)


def run(spec_text: str, **kwargs: Any) -> Any:
    spec = build_evaluator(spec_text)
    fields = dict(kwargs)
    for arg, path in (spec.fields or {}).items():
        head, _, rest = path.partition(".")
        fields[arg] = kwargs[head][rest] if rest else kwargs[head]
    return spec, spec.evaluator(
        **{k: v for k, v in fields.items() if k in ("outputs", "reference_outputs", "inputs")}
    )


def test_deterministic_names_build_working_evaluators() -> None:
    spec, result = run("exact_match", outputs="a", reference_outputs="a")
    assert result["score"] is True and spec.inline is True and spec.name == "exact_match"
    _, result = run("levenshtein_distance", outputs="abc", reference_outputs="abd")
    assert result["key"] == "levenshtein_distance" and 0 < result["score"] < 1
    _, result = run(
        "json_match:aggregator=average",
        outputs={"a": 1, "b": 2},
        reference_outputs={"a": 1, "b": 3},
    )
    assert result[0]["score"] == 0.5
    _, result = run("recall:k=2", outputs=["d1", "d9", "d2"], reference_outputs=["d1", "d2"])
    assert (result["key"], result["score"]) == ("recall@2", 0.5)
    _, result = run("mrr", outputs=["x", "d1"], reference_outputs=["d1"])
    assert result["score"] == 0.5
    _, result = run("map:k=3", outputs=["d1", "x", "d2"], reference_outputs=["d1", "d2"])
    assert result["score"] == pytest.approx((1 + 2 / 3) / 2)


def test_trajectory_mode_as_option_or_positional() -> None:
    calls = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
        }
    ]
    for text in ("trajectory_match:mode=unordered", "trajectory_match:unordered"):
        _, result = run(text, outputs=calls, reference_outputs=calls)
        assert result["key"] == "trajectory_unordered_match" and result["score"] is True


def test_field_options_and_name() -> None:
    spec = build_evaluator(
        "exact_match:name=answer:outputs=outputs.answer:reference_outputs=ref.answer"
    )
    assert spec.name == "answer"
    assert spec.fields == {"outputs": "outputs.answer", "reference_outputs": "ref.answer"}


def test_llm_spec_needs_a_model_and_a_known_prompt() -> None:
    with pytest.raises(SpecError, match="pass --model"):
        build_evaluator("llm:CORRECTNESS_PROMPT")
    with pytest.raises(SpecError, match="unknown prompt constant 'NOPE_PROMPT'"):
        build_evaluator("llm:NOPE_PROMPT", model="openai:gpt-test")
    with pytest.raises(SpecError, match="name the prompt constant"):
        build_evaluator("llm", model="openai:gpt-test")
    spec = build_evaluator("llm:CONCISENESS_PROMPT:continuous=true", model="openai:gpt-test")
    assert spec.evaluator.core.feedback_key == "conciseness"  # type: ignore[attr-defined]
    assert spec.inline is False
    named = build_evaluator("llm:CORRECTNESS_PROMPT:feedback_key=ok", model="openai:gpt-test")
    assert named.evaluator.core.feedback_key == "ok"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bleu", "unknown evaluator 'bleu'"),
        ("exact_match:strict=true", "does not take option"),
        ("recall:k=0", "cannot build evaluator 'recall:k=0'"),
        ("json_match:aggregator=most", "cannot build evaluator"),
        ("trajectory_match:mode=sideways", "cannot build evaluator"),
        ('json_match:rubric={"a": "is it polite"}', "pass --model"),
        ("recall:fast", "takes only option=value"),
    ],
)
def test_bad_specs_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        build_evaluator(text)


def test_embedding_similarity_defaults_to_the_offline_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openevals.string import embedding_similarity

    seen: list[dict[str, Any]] = []

    def factory(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return lambda **kw: None

    monkeypatch.setattr(embedding_similarity, "create_embedding_similarity_evaluator", factory)
    spec = build_evaluator("embedding_similarity")
    build_evaluator(
        "embedding_similarity:model=openai:text-embedding-3-small:algorithm=dot_product"
    )
    assert seen == [
        {"model": "local:all-MiniLM-L6-v2"},
        {"model": "openai:text-embedding-3-small", "algorithm": "dot_product"},
    ]
    assert spec.inline is False, "embedding models run in the thread pool"


def test_every_listed_name_is_buildable_or_needs_options() -> None:
    for name in EVALUATOR_NAMES:
        if name in ("llm", "trajectory_match", "embedding_similarity"):
            continue
        spec = build_evaluator(name)
        assert callable(spec.evaluator)
