"""Evaluator specs for the CLI: parsing, building, and the errors for bad specs."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import TypedDict, Unpack

from openevals._contract import info_of
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
    assert info_of(spec.evaluator).feedback_key == "conciseness"  # type: ignore[union-attr]
    assert spec.inline is False
    named = build_evaluator("llm:CORRECTNESS_PROMPT:feedback_key=ok", model="openai:gpt-test")
    assert info_of(named.evaluator).feedback_key == "ok"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("meteor", "unknown evaluator 'meteor'"),
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


# The options each name accepted before they were derived from the factories' signatures.
KNOWN_OPTIONS = {
    "json_match": {
        "aggregator",
        "list_aggregator",
        "exclude_keys",
        "list_match_mode",
        "rubric",
        "use_reasoning",
        "model",
        "timeout",
    },
    "embedding_similarity": {"model", "algorithm", "timeout"},
    "trajectory_match": {"trajectory_match_mode", "tool_args_match_mode"},
    "recall": {"k", "mode", "key", "empty_reference", "feedback_key"},
    "precision": {"k", "denominator", "key", "empty_reference", "feedback_key"},
    "hit_rate": {"k", "key", "empty_reference", "feedback_key"},
    "reciprocal_rank": {"k", "key", "empty_reference", "feedback_key"},
    "average_precision": {"k", "normalize_by", "key", "empty_reference", "feedback_key"},
    "ndcg": {"k", "key", "empty_reference", "feedback_key"},
    "llm": {
        "feedback_key",
        "continuous",
        "choices",
        "use_reasoning",
        "system",
        "model",
        "max_retries",
        "samples",
        "score_weighting",
        "timeout",
    },
}


def _factories() -> dict[str, Any]:
    from openevals import rag
    from openevals.json import create_json_match_evaluator
    from openevals.llm import create_async_llm_as_judge
    from openevals.string.embedding_similarity import create_embedding_similarity_evaluator
    from openevals.trajectory import create_trajectory_match_evaluator

    return {
        "json_match": create_json_match_evaluator,
        "embedding_similarity": create_embedding_similarity_evaluator,
        "trajectory_match": create_trajectory_match_evaluator,
        "llm": create_async_llm_as_judge,
        **{
            name: getattr(rag, f"create_{name}_evaluator")
            for name in (
                "recall",
                "precision",
                "hit_rate",
                "reciprocal_rank",
                "average_precision",
                "ndcg",
            )
        },
    }


@pytest.mark.parametrize("name", sorted(KNOWN_OPTIONS))
def test_option_names_match_the_factory_signatures(name: str) -> None:
    import inspect

    from openevals.evaluation.registry import NOT_FROM_TEXT, factory_options

    factory = _factories()[name]
    options = factory_options(factory)
    assert options is not None
    assert set(options) == set(inspect.signature(factory).parameters) - NOT_FROM_TEXT
    assert set(options) == KNOWN_OPTIONS[name], "the registry's accepted options changed"
    # What the registry says it accepts is what it checks.
    text = "llm:CORRECTNESS_PROMPT" if name == "llm" else name
    with pytest.raises(SpecError, match="accepted: ") as info:
        build_evaluator(f"{text}:not_an_option=1", model="openai:gpt-x")
    accepted = str(info.value).split("accepted: ", 1)[1]
    alias = {"mode"} if name == "trajectory_match" else set()  # its short alias
    assert set(accepted.split(", ")) == KNOWN_OPTIONS[name] | alias


def test_a_new_factory_parameter_is_an_option_without_editing_the_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openevals import rag

    real = rag.create_recall_evaluator
    seen: list[dict[str, Any]] = []

    def create_recall_evaluator(
        *, k: int | None = None, feedback_key: str | None = None, boost: float = 1.0
    ) -> Any:
        seen.append({"k": k, "boost": boost})
        return real(k=k)

    monkeypatch.setattr(rag, "create_recall_evaluator", create_recall_evaluator)
    build_evaluator("recall:k=2:boost=0.5")
    assert seen == [{"k": 2, "boost": 0.5}]
    with pytest.raises(SpecError, match=r"accepted: k, feedback_key, boost"):
        build_evaluator("recall:mode=strict")


class _Options(TypedDict, total=False):
    alpha: float
    judge: Any


def test_factory_options_reads_declared_keyword_dicts() -> None:
    from openevals.evaluation.registry import factory_options

    def declared(*, name: str = "x", **options: Unpack[_Options]) -> Any:
        return None

    def undeclared(**options: Any) -> Any:
        return None

    assert factory_options(declared) == ("name", "alpha")
    assert factory_options(undeclared) is None
