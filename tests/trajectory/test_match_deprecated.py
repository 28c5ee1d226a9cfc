"""Deprecated plain trajectory evaluators and the public-compatible private helpers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from openevals.trajectory import strict, subset, superset, unordered
from openevals.trajectory.strict import trajectory_strict_match, trajectory_strict_match_async
from openevals.trajectory.subset import trajectory_subset, trajectory_subset_async
from openevals.trajectory.superset import trajectory_superset, trajectory_superset_async
from openevals.trajectory.unordered import (
    trajectory_unordered_match,
    trajectory_unordered_match_async,
)
from openevals.trajectory.utils import (
    _convert_to_openai_message,
    _extract_tool_calls,
    _get_matcher_for_tool_name,
    _is_trajectory_superset,
    _normalize_to_openai_messages_list,
)
from tests.trajectory.match_helpers import ai, tool, user

OUT = [user(), ai(("search", {"q": "cats"}), ("fetch", {"url": "a"})), tool(), tool()]
REF = [user(), ai(("fetch", {"url": "b"}), ("search", {"q": "dogs"})), tool(), tool()]
REF_ONE = [user(), ai(("search", {"q": "mice"})), tool()]

SYNC = [
    (trajectory_strict_match, "trajectory_strict_match", "strict"),
    (trajectory_unordered_match, "trajectory_unordered_match", "unordered"),
    (trajectory_subset, "trajectory_subset", "subset"),
    (trajectory_superset, "trajectory_superset", "superset"),
]
ASYNC = [
    (trajectory_strict_match_async, "trajectory_strict_match", "strict"),
    (trajectory_unordered_match_async, "trajectory_unordered_match", "unordered"),
    (trajectory_subset_async, "trajectory_subset", "subset"),
    (trajectory_superset_async, "trajectory_superset", "superset"),
]
# Expected verdicts (OUT vs REF, OUT vs REF_ONE): arguments are ignored, except by the strict
# alias, which compares them unless tool_call_args_exact_match=False.
EXPECTED = {
    "strict": (False, False),
    "unordered": (True, False),
    "subset": (True, False),
    "superset": (True, True),
}


@pytest.mark.parametrize(("fn", "key", "mode"), SYNC)
def test_deprecated_evaluators_warn_and_ignore_arguments(fn: Any, key: str, mode: str) -> None:
    for reference, expected in zip((REF, REF_ONE), EXPECTED[mode], strict=True):
        with pytest.warns(DeprecationWarning, match=rf"{key} is deprecated; use .*'{mode}'") as rec:
            result = fn(outputs=OUT, reference_outputs=reference)
        assert rec[0].filename == __file__  # the warning points at the caller
        assert result["key"] == key
        assert result["score"] is expected
        assert (result["comment"] is None) is expected


@pytest.mark.parametrize(("fn", "key", "mode"), ASYNC)
async def test_async_deprecated_evaluators(fn: Any, key: str, mode: str) -> None:
    for reference, expected in zip((REF, REF_ONE), EXPECTED[mode], strict=True):
        with pytest.warns(DeprecationWarning, match="is deprecated"):
            result = await fn(outputs=OUT, reference_outputs=reference)
        assert result["key"] == key
        assert result["score"] is expected


async def test_strict_alias_exact_arguments_mode() -> None:
    same_names_different_args = [user(), ai(("search", {"q": "x"})), tool()]
    reference = [user(), ai(("search", {"q": "y"})), tool()]
    with pytest.warns(DeprecationWarning):
        exact = trajectory_strict_match(
            outputs=same_names_different_args, reference_outputs=reference
        )
    with pytest.warns(DeprecationWarning):
        ignored = await trajectory_strict_match_async(
            outputs=same_names_different_args,
            reference_outputs=reference,
            tool_call_args_exact_match=False,
        )
    assert exact["score"] is False
    assert ignored["score"] is True


@pytest.mark.parametrize(("fn", "key", "mode"), SYNC)
def test_deprecated_evaluators_reject_args_mode_options(fn: Any, key: str, mode: str) -> None:
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(TypeError, match="does not accept 'tool_args_match_mode'"),
    ):
        fn(outputs=OUT, reference_outputs=REF, tool_args_match_mode="exact")


def test_deprecated_evaluators_do_not_mutate_inputs() -> None:
    out, ref = copy.deepcopy(OUT), copy.deepcopy(REF)
    for fn, _, _ in SYNC:
        with pytest.warns(DeprecationWarning):
            fn(outputs=out, reference_outputs=ref)
    assert (out, ref) == (OUT, REF)


def test_module_scorers() -> None:
    assert strict._scorer(outputs=OUT, reference_outputs=REF) is False  # exact args by default
    assert strict._scorer(outputs=OUT, reference_outputs=REF, tool_args_match_mode="ignore")
    assert unordered._scorer(outputs=OUT, reference_outputs=REF) is True
    assert subset._scorer(outputs=REF_ONE, reference_outputs=OUT) is True
    assert subset._scorer(outputs=OUT, reference_outputs=REF_ONE) is False
    assert superset._scorer(outputs=OUT, reference_outputs=REF_ONE) is True
    assert (
        superset._scorer(
            outputs=OUT, reference_outputs=REF_ONE, tool_args_match_overrides={"search": "exact"}
        )
        is False
    )


def test_private_helpers() -> None:
    assert _extract_tool_calls(OUT) == [
        {"name": "search", "args": {"q": "cats"}},
        {"name": "fetch", "args": {"url": "a"}},
    ]
    matcher = _get_matcher_for_tool_name("search", "superset", {"fetch": ["url"]})
    assert matcher({"q": 1, "x": 2}, {"q": 1}) is True
    assert matcher({"q": 1}, {"q": 1, "x": 2}) is False
    path_matcher = _get_matcher_for_tool_name("fetch", "superset", {"fetch": ["url"]})
    assert path_matcher({"url": "a", "z": 1}, {"url": "a"}) is True
    assert path_matcher({}, {"url": "a"}) is False
    with pytest.raises(ValueError, match="tool_args_match_mode"):
        _get_matcher_for_tool_name("x", "nope")  # type: ignore[arg-type]
    assert _is_trajectory_superset(OUT, REF_ONE, "ignore") is True
    assert _is_trajectory_superset(OUT, REF_ONE) is False
    assert _normalize_to_openai_messages_list({"role": "human", "content": "x"}) == [
        {"role": "user", "content": "x"}
    ]
    assert _convert_to_openai_message({"role": "ai", "content": None}) == {
        "role": "assistant",
        "content": "",
    }
