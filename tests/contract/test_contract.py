"""The evaluator contract: scorer + info -> sync/async evaluator."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest

from openevals._contract import (
    EvaluatorInfo,
    arun_scorer,
    info_of,
    make_async_evaluator,
    make_evaluator,
    run_scorer,
)

INFO = EvaluatorInfo(run_name="length_match", feedback_keys=("length_match",), pure=True)
AINFO = EvaluatorInfo(run_name="length_match", feedback_keys=("length_match",), is_async=True)


def _score(*, outputs: Any, reference_outputs: Any) -> tuple[bool, str]:
    return len(outputs) == len(reference_outputs), f"{len(outputs)} vs {len(reference_outputs)}"


def _require_outputs(call: dict[str, Any]) -> dict[str, Any]:
    if call["outputs"] is None:
        raise TypeError("length_match needs `outputs`")
    return call


def test_sync_evaluator_maps_the_score_under_the_feedback_key() -> None:
    evaluator = make_evaluator(_score, INFO, passes=("outputs", "reference_outputs"))
    assert evaluator(inputs="ignored", outputs="abc", reference_outputs="xyz") == {
        "key": "length_match",
        "score": True,
        "comment": "3 vs 3",
        "metadata": None,
    }
    assert info_of(evaluator) is INFO
    assert not inspect.iscoroutinefunction(evaluator)


async def test_async_evaluator_awaits_async_scorers() -> None:
    async def ascore(**kw: Any) -> tuple[bool, str]:
        return _score(**kw)

    evaluator = make_async_evaluator(ascore, AINFO, passes=("outputs", "reference_outputs"))
    assert inspect.iscoroutinefunction(evaluator)
    result = await evaluator(outputs="ab", reference_outputs="xyz")
    assert result["score"] is False
    assert info_of(evaluator) is AINFO


async def test_async_evaluator_accepts_sync_scorers() -> None:
    evaluator = make_async_evaluator(_score, AINFO, passes=("outputs", "reference_outputs"))
    assert (await evaluator(outputs="a", reference_outputs="b"))["score"] is True


def test_prepare_runs_before_scoring_and_its_errors_propagate() -> None:
    calls: list[Any] = []

    def scorer(**kw: Any) -> bool:
        calls.append(kw)
        return True

    evaluator = make_evaluator(scorer, INFO, prepare=_require_outputs)
    with pytest.raises(TypeError, match="`outputs`"):
        evaluator(reference_outputs="x")
    assert calls == []


async def test_async_prepare_runs_before_scoring() -> None:
    evaluator = make_async_evaluator(_score, AINFO, prepare=_require_outputs)
    with pytest.raises(TypeError, match="`outputs`"):
        await evaluator(reference_outputs="x")


def test_without_passes_every_argument_reaches_the_scorer() -> None:
    seen: dict[str, Any] = {}

    def scorer(**kw: Any) -> int:
        seen.update(kw)
        return 1

    make_evaluator(scorer, INFO)(outputs=1, context="c")
    assert seen == {"inputs": None, "outputs": 1, "reference_outputs": None, "context": "c"}


def test_raw_returns_the_scorer_value_unchanged() -> None:
    evaluator = make_evaluator(lambda **kw: {"answer": 42}, INFO, raw=True)
    assert evaluator(outputs="x") == {"answer": 42}


def test_name_sets_the_evaluator_name() -> None:
    evaluator = make_evaluator(_score, INFO, name="length_match")
    assert evaluator.__name__ == "length_match"


def test_info_of_looks_through_partials_and_ignores_foreign_callables() -> None:
    evaluator = make_evaluator(_score, INFO)
    assert info_of(functools.partial(evaluator, outputs="x")) is INFO
    assert info_of(lambda **kw: True) is None
    assert info_of(object()) is None


def test_sync_and_async_builders_check_info() -> None:
    with pytest.raises(ValueError, match="async"):
        make_evaluator(_score, AINFO)
    with pytest.raises(ValueError, match="is_async=True"):
        make_async_evaluator(_score, INFO)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"run_name": ""}, "run_name"),
        ({"run_name": "x", "feedback_keys": "x"}, "feedback_keys"),
        ({"run_name": "x", "feedback_keys": ("",)}, "feedback_keys"),
        ({"run_name": "x", "pure": True, "judge": True}, "cannot be pure"),
    ],
)
def test_info_rejects_inconsistent_descriptions(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        EvaluatorInfo(**kwargs)


def test_feedback_key_defaults_to_the_run_name() -> None:
    assert EvaluatorInfo(run_name="json_match").feedback_key == "json_match"
    assert EvaluatorInfo(run_name="x", feedback_keys=("a", "b")).feedback_key == "a"


def test_paired_shell_has_the_public_release_signature_and_requires_both_values() -> None:
    evaluator = make_evaluator(
        _score,
        INFO,
        passes=("outputs", "reference_outputs"),
        paired=True,
        name="length_match",
        doc="Lengths agree.",
        module="my_package.metrics",
    )
    assert str(inspect.signature(evaluator)) == (
        "(*, outputs: 'Any', reference_outputs: 'Any', **kwargs: 'Any') -> 'EvaluatorResult'"
    )
    assert (evaluator.__name__, evaluator.__doc__, evaluator.__module__) == (
        "length_match",
        "Lengths agree.",
        "my_package.metrics",
    )
    with pytest.raises(TypeError, match=r"length_match.*'reference_outputs'"):
        evaluator(outputs="abc")
    assert evaluator(outputs="ab", reference_outputs="cd", inputs="ignored")["score"] is True


async def test_async_paired_shell_passes_extra_arguments_when_asked() -> None:
    seen: dict[str, Any] = {}

    async def scorer(**kw: Any) -> int:
        seen.update(kw)
        return 1

    evaluator = make_async_evaluator(scorer, AINFO, paired=True)
    assert evaluator.__name__ == "evaluator"
    await evaluator(outputs=1, reference_outputs=2, inputs=3, extra=4)
    assert seen == {"outputs": 1, "reference_outputs": 2, "inputs": 3, "extra": 4}
    with pytest.raises(TypeError, match="'outputs'"):
        await evaluator(reference_outputs=2)


def test_returns_sets_the_return_annotation_only_of_that_evaluator() -> None:
    listed = make_evaluator(_score, INFO, returns="list[EvaluatorResult]")
    plain = make_evaluator(_score, INFO)
    assert inspect.signature(listed).return_annotation == "list[EvaluatorResult]"
    assert inspect.signature(plain).return_annotation == "Any"


def test_run_scorer_scores_like_the_evaluator() -> None:
    evaluator = make_evaluator(_score, INFO, passes=("outputs", "reference_outputs"))
    assert run_scorer(INFO, _score, outputs="ab", reference_outputs="c") == evaluator(
        outputs="ab", reference_outputs="c"
    )
    assert run_scorer(INFO, lambda **kw: {"x": 1}, raw=True) == {"x": 1}


async def test_arun_scorer_awaits_coroutine_scorers() -> None:
    async def ascore(**kw: Any) -> tuple[bool, str]:
        return _score(**kw)

    result = await arun_scorer(AINFO, ascore, outputs="a", reference_outputs="b")
    assert result == {"key": "length_match", "score": True, "comment": "1 vs 1", "metadata": None}


def test_as_async_marks_the_twin_async_and_not_pure() -> None:
    twin = INFO.as_async()
    assert (twin.is_async, twin.pure, twin.run_name) == (True, False, "length_match")
    assert INFO.is_async is False  # the info itself is unchanged (frozen)
