"""A judge family is declared once (its options type, defaults and order) and both public
factories are derived from it: signature, names, docs, registration, keyword checks."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from openevals._judge.declare import EVALUATORS, judge_factories
from openevals._judge.options import FACTORIES, JUDGE_ORDER, FactorySpec, JudgeOptions
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from tests.compat.test_signatures import _compatible


@dataclass(frozen=True, kw_only=True)
class _WithNewOption(JudgeOptions):
    """JudgeOptions after someone adds one option: one field (its check would be the other
    edit)."""

    feedback_key: str = "demo"  # a family default given by redeclaring the field
    new_option: int = 0
    own: str = "family"


def _build(spec: FactorySpec, options: JudgeOptions) -> Any:
    return (spec, options)


@pytest.fixture
def derived() -> Iterator[tuple[Any, Any]]:
    made = judge_factories(
        "create_demo_judge",
        _WithNewOption,
        _build,
        EVALUATORS,
        order=JUDGE_ORDER,
        leaves_out=("own",),
        async_annotations={"new_option": "float"},
        prompt="grade {outputs}",
        doc="A demo judge.",
    )
    try:
        yield made
    finally:  # the registry holds the package's own judges only
        FACTORIES.pop("create_demo_judge")
        FACTORIES.pop("create_async_demo_judge")


def test_a_new_option_reaches_the_factories_last_where_compatibility_allows(
    derived: tuple[Any, Any],
) -> None:
    sync, asyn = derived
    before = (
        str(inspect.signature(create_llm_as_judge))
        .replace("prompt: 'Any'", "prompt: 'Any' = 'grade {outputs}'")
        .replace("'score'", "'demo'")
    )
    now = str(inspect.signature(sync))
    assert list(inspect.signature(sync).parameters)[-1] == "new_option"
    assert now.endswith("new_option: 'int' = 0) -> 'SimpleEvaluator'")
    assert _compatible(before, now)
    assert "own" not in inspect.signature(sync).parameters  # left out
    twin = inspect.signature(asyn)
    assert twin.parameters["new_option"].annotation == "float"
    assert twin.return_annotation == "SimpleAsyncEvaluator"


def test_names_docs_module_and_registration(derived: tuple[Any, Any]) -> None:
    sync, asyn = derived
    assert (sync.__name__, sync.__qualname__) == ("create_demo_judge",) * 2
    assert (asyn.__name__, asyn.__qualname__) == ("create_async_demo_judge",) * 2
    assert sync.__module__ == asyn.__module__ == __name__
    assert sync.__doc__ == "A demo judge."
    assert asyn.__doc__.startswith("The async twin of :func:`create_demo_judge`")
    assert asyn.__doc__.endswith("A demo judge.")
    spec, twin = FACTORIES["create_demo_judge"], FACTORIES["create_async_demo_judge"]
    assert (spec.is_async, twin.is_async) == (False, True)
    assert spec.async_twin == twin.name and twin.sync_twin == spec.name
    assert spec.takes == FACTORIES["create_llm_as_judge"].takes  # new_option: not a judge option
    assert spec.default("prompt") == "grade {outputs}"
    assert spec.default("feedback_key") == "demo"
    assert inspect.signature(sync).parameters["feedback_key"].default == "demo"


def test_a_call_builds_the_checked_options_with_the_family_defaults(
    derived: tuple[Any, Any],
) -> None:
    sync, asyn = derived
    spec, options = sync(model="openai:m", new_option=2, choices=[1, 2])
    assert spec is FACTORIES["create_demo_judge"]
    assert isinstance(options, _WithNewOption)
    assert (options.prompt, options.new_option, options.own) == ("grade {outputs}", 2, "family")
    assert options.choices == (1.0, 2.0)  # converted by the declaration's check
    assert asyn(model="openai:m")[0] is FACTORIES["create_async_demo_judge"]
    with pytest.raises(ValueError, match="`samples` must be between 1"):
        sync(model="openai:m", samples=0)


def test_bad_keywords_are_refused_like_a_call() -> None:
    with pytest.raises(
        TypeError, match=r"create_llm_as_judge\(\) got an unexpected keyword .*modle"
    ):
        create_llm_as_judge(prompt="x", modle="openai:m")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing required keyword argument 'prompt'"):
        create_async_llm_as_judge(model="openai:m")
    with pytest.raises(TypeError, match="positional"):
        create_llm_as_judge("x")  # type: ignore[misc]


def test_a_family_must_name_its_own_fields() -> None:
    with pytest.raises(ValueError, match="not fields of JudgeOptions"):
        judge_factories(
            "create_bad_judge", JudgeOptions, _build, EVALUATORS, order=("promt",), doc=""
        )
    assert "create_bad_judge" not in FACTORIES
