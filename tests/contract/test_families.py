"""Every deterministic family and code/ is built on the evaluator contract and describes itself.

The batch runner decides "pure" (run inline on the event loop) and "judge" (token accounting) from
the :class:`~openevals._contract.EvaluatorInfo` alone; there is no module-name list any more.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from openevals._contract import EvaluatorInfo, info_of
from openevals.code.mypy import create_async_mypy_evaluator, create_mypy_evaluator
from openevals.code.pyright import create_async_pyright_evaluator, create_pyright_evaluator
from openevals.exact import exact_match, exact_match_async
from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator
from openevals.rag import ranking
from openevals.rag.steps import create_async_steps_evaluator, create_steps_evaluator
from openevals.string.embedding_similarity import (
    create_async_embedding_similarity_evaluator,
    create_embedding_similarity_evaluator,
)
from openevals.string.levenshtein import levenshtein_distance, levenshtein_distance_async
from openevals.trajectory.match import (
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)
from openevals.trajectory.strict import trajectory_strict_match, trajectory_strict_match_async
from openevals.trajectory.subset import trajectory_subset, trajectory_subset_async


def _ranking() -> list[tuple[Any, str, tuple[str, ...]]]:
    cases = []
    for name in sorted(ranking.__all__):
        if name.startswith("create_") and "retrieval" not in name:
            metric = name.removeprefix("create_").removeprefix("async_").removesuffix("_evaluator")
            cases.append((getattr(ranking, name)(), metric, (metric,)))
    keys = ("recall@3", "precision@3", "ndcg@3")
    for factory in (ranking.create_retrieval_evaluator, ranking.create_async_retrieval_evaluator):
        made = factory(metrics=["recall", "precision", "ndcg"], k=3)
        cases.append((made, "retrieval_metrics", keys))
    return cases


# (evaluator, run name, feedback keys, pure, judge)
CASES: list[tuple[Any, str, tuple[str, ...], bool, bool]] = [
    (exact_match, "exact_match", ("exact_match",), True, False),
    (exact_match_async, "exact_match", ("exact_match",), False, False),
    (levenshtein_distance, "levenshtein_distance", ("levenshtein_distance",), True, False),
    (levenshtein_distance_async, "levenshtein_distance", ("levenshtein_distance",), False, False),
    (
        create_trajectory_match_evaluator(trajectory_match_mode="unordered"),
        "trajectory_unordered_match",
        ("trajectory_unordered_match",),
        True,
        False,
    ),
    (
        create_async_trajectory_match_evaluator(),
        "trajectory_strict_match",
        ("trajectory_strict_match",),
        False,
        False,
    ),
    (trajectory_strict_match, "trajectory_strict_match", ("trajectory_strict_match",), True, False),
    (
        trajectory_strict_match_async,
        "trajectory_strict_match",
        ("trajectory_strict_match",),
        False,
        False,
    ),
    (trajectory_subset, "trajectory_subset", ("trajectory_subset",), True, False),
    (trajectory_subset_async, "trajectory_subset", ("trajectory_subset",), False, False),
    (create_json_match_evaluator(), "json_match_evaluator", (), False, False),
    (
        create_async_json_match_evaluator(aggregator="average"),
        "json_match_evaluator",
        ("json_match:average",),
        False,
        False,
    ),
    (
        create_json_match_evaluator(rubric={"tone": "polite"}, model="openai:gpt-x"),
        "json_match_evaluator",
        (),
        False,
        True,
    ),
    (create_steps_evaluator(), "steps_score", ("steps_score",), False, False),
    (create_async_steps_evaluator(feedback_key="s"), "steps_score", ("s",), False, False),
    (
        create_embedding_similarity_evaluator(),
        "embedding_similarity",
        ("embedding_similarity",),
        False,
        False,
    ),
    (
        create_async_embedding_similarity_evaluator(),
        "embedding_similarity",
        ("embedding_similarity",),
        False,
        False,
    ),
    (create_mypy_evaluator(), "mypy_evaluator", ("mypy_succeeded",), False, False),
    (create_async_mypy_evaluator(), "mypy_check", ("mypy_succeeded",), False, False),
    (create_pyright_evaluator(), "pyright_evaluator", ("pyright_succeeded",), False, False),
    (create_async_pyright_evaluator(), "pyright_check", ("pyright_succeeded",), False, False),
    *[
        (made, run, keys, not inspect.iscoroutinefunction(made), False)
        for made, run, keys in _ranking()
    ],
]


def _is_async(evaluator: Any) -> bool:
    return inspect.iscoroutinefunction(evaluator) or inspect.iscoroutinefunction(
        getattr(evaluator, "__call__", None)  # noqa: B004 - the code classes
    )


@pytest.mark.parametrize(
    ("evaluator", "run_name", "keys", "pure", "judge"),
    CASES,
    ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)],
)
def test_every_family_evaluator_carries_its_info(
    evaluator: Any, run_name: str, keys: tuple[str, ...], pure: bool, judge: bool
) -> None:
    info = info_of(evaluator)
    assert isinstance(info, EvaluatorInfo)
    assert (info.run_name, info.feedback_keys, info.pure, info.judge) == (
        run_name,
        keys,
        pure,
        judge,
    )
    assert info.is_async == _is_async(evaluator)
    assert (info.pure, info.judge, info.run_name) == (pure, judge, run_name)


def test_the_runner_has_no_separate_description() -> None:
    assert importlib.util.find_spec("openevals.evaluation.description") is None


def test_a_json_rubric_names_its_judge_model() -> None:
    graded = create_json_match_evaluator(rubric={"tone": "polite"}, model="openai:gpt-x")
    assert info_of(graded).model == "gpt-x"  # type: ignore[union-attr]
    assert info_of(create_json_match_evaluator()).model is None  # type: ignore[union-attr]


def test_a_pure_looking_user_function_is_not_inlined() -> None:
    # Before, a function defined in a module named like a family was taken for pure.
    def exact(*, outputs: Any, reference_outputs: Any) -> bool:
        return bool(outputs == reference_outputs)

    exact.__module__ = "openevals.exact"
    assert info_of(exact) is None


SCORE_CALLS: list[tuple[Callable[..., Any], dict[str, Any]]] = [
    (exact_match, {"outputs": {"a": 1}, "reference_outputs": {"a": 1}}),
    (levenshtein_distance, {"outputs": "kitten", "reference_outputs": "sitting"}),
    (ranking.create_recall_evaluator(k=2), {"outputs": ["a", "b"], "reference_outputs": ["b"]}),
    (create_steps_evaluator(), {"outputs": [], "reference_outputs": [[{"name": "s"}]]}),
]


@pytest.mark.parametrize(
    ("evaluator", "call"), SCORE_CALLS, ids=lambda v: getattr(v, "__name__", "")
)
def test_the_fast_path_and_the_traced_path_give_the_same_results(
    evaluator: Callable[..., Any], call: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import openevals._contract as contract

    fast = evaluator(inputs={"q": 1}, **call)
    seen: list[dict[str, Any]] = []
    real = contract._run_evaluator_untyped

    def wrapper(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(contract, "_needs_langsmith", lambda: True)
    monkeypatch.setattr(contract, "_run_evaluator_untyped", wrapper)
    assert evaluator(inputs={"q": 1}, **call) == fast
    assert len(seen) == 1 and seen[0]["run_name"] == info_of(evaluator).run_name  # type: ignore[union-attr]


def test_async_twins_score_like_the_sync_evaluators() -> None:
    pairs = [
        (exact_match, exact_match_async, {"outputs": [1, 2], "reference_outputs": [1, 2]}),
        (
            levenshtein_distance,
            levenshtein_distance_async,
            {"outputs": "ab", "reference_outputs": "b"},
        ),
        (
            create_trajectory_match_evaluator(),
            create_async_trajectory_match_evaluator(),
            {"outputs": [{"role": "user", "content": "x"}], "reference_outputs": []},
        ),
        (
            ranking.create_ndcg_evaluator(k=2),
            ranking.create_async_ndcg_evaluator(k=2),
            {"outputs": ["a", "b"], "reference_outputs": ["b"]},
        ),
    ]
    for sync, asynchronous, call in pairs:
        assert asyncio.run(asynchronous(**call)) == sync(**call)


def test_paired_evaluators_still_require_outputs_and_reference_outputs() -> None:
    for evaluator in (exact_match, levenshtein_distance, create_trajectory_match_evaluator()):
        with pytest.raises(TypeError, match="reference_outputs"):
            evaluator(outputs="x")
        with pytest.raises(TypeError, match="positional"):
            evaluator("x", "y")
