"""The evaluator runner: how a scorer's return value becomes EvaluatorResult dicts (sync and async)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openevals.exact import exact_match
from openevals.types import EvaluatorResult, SimpleEvaluator
from openevals.utils import (
    _arun_evaluator,
    _arun_evaluator_untyped,
    _run_evaluator,
    _run_evaluator_untyped,
)

Runner = Callable[..., Awaitable[Any]]


pytestmark = pytest.mark.usefixtures("tracing_off")


async def _sync_runner(**kw: Any) -> Any:
    return _run_evaluator(**kw)


async def _async_runner(**kw: Any) -> Any:
    return await _arun_evaluator(**kw)


async def _async_runner_async_scorer(**kw: Any) -> Any:
    scorer = kw.pop("scorer")

    async def ascorer(**inner: Any) -> Any:
        await asyncio.sleep(0)
        return scorer(**inner)

    return await _arun_evaluator(scorer=ascorer, **kw)


RUNNERS = pytest.mark.parametrize(
    "run",
    [_sync_runner, _async_runner, _async_runner_async_scorer],
    ids=["sync", "async-runner-sync-scorer", "async-runner-async-scorer"],
)


def _single(key: str, score: Any, comment: Any = None, metadata: Any = None) -> dict[str, Any]:
    return {"key": key, "score": score, "comment": comment, "metadata": metadata}


async def _run_returning(run: Runner, value: Any, feedback_key: str = "k") -> Any:
    return await run(run_name="r", scorer=lambda: value, feedback_key=feedback_key)


# --------------------------------------------------------------------------- single results


@RUNNERS
@pytest.mark.parametrize("value", [True, False, 0, 1, 0.25, None, "yes", -3.5])
async def test_scalar_becomes_one_result(run: Runner, value: Any) -> None:
    assert await _run_returning(run, value) == _single("k", value)


@RUNNERS
async def test_plain_list_is_not_exploded(run: Runner) -> None:
    value = [1, 2, {"score": 3}]
    result = await _run_returning(run, value)
    assert result == _single("k", [1, 2, {"score": 3}])


@RUNNERS
async def test_empty_list_is_a_single_score(run: Runner) -> None:
    assert await _run_returning(run, []) == _single("k", [])


@RUNNERS
async def test_two_tuple_sets_comment(run: Runner) -> None:
    assert await _run_returning(run, (0.5, "half right")) == _single("k", 0.5, "half right")


@RUNNERS
async def test_three_tuple_sets_metadata(run: Runner) -> None:
    result = await _run_returning(run, (True, "ok", {"model": "m"}))
    assert result == _single("k", True, "ok", {"model": "m"})


@RUNNERS
@pytest.mark.parametrize("value", [(), (1,), (1, "a", {}, "extra")])
async def test_bad_tuple_length_is_value_error(run: Runner, value: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match=rf"tuple of length {len(value)}"):
        await _run_returning(run, value)


@RUNNERS
async def test_single_result_has_no_source_run_id_key(run: Runner) -> None:
    result = await _run_returning(run, 1)
    assert set(result) == {"key", "score", "comment", "metadata"}


# --------------------------------------------------------------------------- multi-key dicts


@RUNNERS
async def test_dict_gives_list_in_dict_order_and_ignores_feedback_key(run: Runner) -> None:
    value = {"zeta": 1, "alpha": 0.5, "mid": False}
    result = await _run_returning(run, value, feedback_key="ignored")
    assert result == [_single("zeta", 1), _single("alpha", 0.5), _single("mid", False)]


@RUNNERS
async def test_empty_dict_gives_empty_list(run: Runner) -> None:
    assert await _run_returning(run, {}) == []


@RUNNERS
async def test_dict_value_with_score_reasoning_metadata(run: Runner) -> None:
    value = {"a": {"score": 0.75, "reasoning": "mostly", "metadata": {"n": 4}}, "b": {"score": 1}}
    assert await _run_returning(run, value) == [
        _single("a", 0.75, "mostly", {"n": 4}),
        _single("b", 1),
    ]


@RUNNERS
async def test_dict_value_without_score_is_value_error(run: Runner) -> None:
    with pytest.raises(ValueError, match=r"'bad'.*score"):
        await _run_returning(run, {"good": 1, "bad": {"reasoning": "no score here"}})


@RUNNERS
async def test_dict_list_value_gives_one_result_per_element(run: Runner) -> None:
    value = {"claim": [1, {"score": 0, "reasoning": "unsupported"}, True], "other": 0.5}
    assert await _run_returning(run, value) == [
        _single("claim", 1),
        _single("claim", 0, "unsupported"),
        _single("claim", True),
        _single("other", 0.5),
    ]


@RUNNERS
async def test_dict_list_value_element_without_score_is_value_error(run: Runner) -> None:
    with pytest.raises(ValueError, match="claim"):
        await _run_returning(run, {"claim": [1, {"comment": "x"}]})


@RUNNERS
async def test_source_run_id_is_kept_only_when_set(run: Runner) -> None:
    value = {
        "a": {"score": 1, "source_run_id": "run-123"},
        "b": {"score": 0, "source_run_id": None},
        "c": [{"score": 2, "source_run_id": "run-456"}],
    }
    result = await _run_returning(run, value)
    assert result[0] == {**_single("a", 1), "source_run_id": "run-123"}
    assert result[1] == _single("b", 0)
    assert "source_run_id" not in result[1]
    assert result[2] == {**_single("c", 2), "source_run_id": "run-456"}


# --------------------------------------------------------------------------- list of result dicts


@RUNNERS
async def test_list_of_result_dicts_passes_through_as_copies(run: Runner) -> None:
    value = [
        {"key": "x", "score": 1, "comment": "c", "metadata": {"m": 1}},
        {"key": "y", "score": 0.5},
        {"key": "z", "score": 0, "source_run_id": "abc"},
    ]
    snapshot = copy.deepcopy(value)
    result = await _run_returning(run, value)
    assert result == [
        _single("x", 1, "c", {"m": 1}),
        _single("y", 0.5),
        {**_single("z", 0), "source_run_id": "abc"},
    ]
    assert all(r is not v for r, v in zip(result, value, strict=True))
    assert value == snapshot


@RUNNERS
async def test_mixed_list_is_not_treated_as_results(run: Runner) -> None:
    value = [{"key": "x", "score": 1}, 5]
    assert await _run_returning(run, value) == _single("k", value)


# --------------------------------------------------------------------------- calling conventions


@RUNNERS
async def test_kwargs_are_passed_verbatim(run: Runner) -> None:
    seen: dict[str, Any] = {}
    obj = object()
    payload = {"nested": [1, 2]}

    def scorer(**kw: Any) -> float:
        seen.update(kw)
        return 1.0

    await run(
        run_name="r",
        scorer=scorer,
        feedback_key="k",
        inputs=payload,
        outputs=obj,
        reference_outputs=None,
        custom=3,
    )
    assert seen == {"inputs": payload, "outputs": obj, "reference_outputs": None, "custom": 3}
    assert seen["inputs"] is payload
    assert seen["outputs"] is obj


@RUNNERS
async def test_scorer_exception_propagates_unchanged(run: Runner) -> None:
    boom = KeyError("the very same object")

    def scorer() -> Any:
        raise boom

    with pytest.raises(KeyError) as info:
        await run(run_name="r", scorer=scorer, feedback_key="k")
    assert info.value is boom


async def test_async_scorer_exception_propagates_unchanged() -> None:
    boom = RuntimeError("async failure")

    async def scorer() -> Any:
        await asyncio.sleep(0)
        raise boom

    with pytest.raises(RuntimeError) as info:
        await _arun_evaluator(run_name="r", scorer=scorer, feedback_key="k")
    assert info.value is boom


async def test_async_runner_awaits_async_scorer_and_calls_sync_scorer() -> None:
    calls: list[str] = []

    async def ascorer(*, x: int) -> tuple[int, str]:
        await asyncio.sleep(0)
        calls.append("async")
        return x * 2, "doubled"

    def sscorer(*, x: int) -> int:
        calls.append("sync")
        return x + 1

    assert await _arun_evaluator(run_name="r", scorer=ascorer, feedback_key="k", x=3) == _single(
        "k", 6, "doubled"
    )
    assert await _arun_evaluator(run_name="r", scorer=sscorer, feedback_key="k", x=3) == _single(
        "k", 4
    )
    assert calls == ["async", "sync"]


async def test_async_runner_awaits_awaitable_returned_by_plain_callable() -> None:
    async def inner() -> float:
        return 0.5

    result = await _arun_evaluator(run_name="r", scorer=lambda: inner(), feedback_key="k")
    assert result == _single("k", 0.5)


async def test_async_runner_runs_concurrently() -> None:
    gate = asyncio.Event()
    started = 0

    async def scorer() -> bool:
        nonlocal started
        started += 1
        if started == 3:
            gate.set()
        await asyncio.wait_for(gate.wait(), timeout=2)
        return True

    results = await asyncio.gather(
        *(_arun_evaluator(run_name="r", scorer=scorer, feedback_key="k") for _ in range(3))
    )
    assert results == [_single("k", True)] * 3


def test_return_raw_outputs_passes_value_untouched() -> None:
    raw = {"anything": {"no": "score"}}
    out = _run_evaluator_untyped(
        run_name="r", scorer=lambda: raw, feedback_key="k", return_raw_outputs=True
    )
    assert out is raw


async def test_async_return_raw_outputs_passes_value_untouched() -> None:
    raw = (1, 2, 3, 4)

    async def scorer() -> Any:
        return raw

    out = await _arun_evaluator_untyped(
        run_name="r", scorer=scorer, feedback_key="k", return_raw_outputs=True
    )
    assert out is raw


def test_runner_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        _run_evaluator("r", lambda: 1, "k")  # type: ignore[misc]


# --------------------------------------------------------------------------- property: sync == async


_scalars = st.one_of(
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.none(),
    st.text(max_size=5),
)
_entry = st.one_of(
    _scalars,
    st.fixed_dictionaries(
        {"score": _scalars},
        optional={
            "reasoning": st.text(max_size=5),
            "metadata": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        },
    ),
)
_scores = st.one_of(
    _scalars,
    st.tuples(_scalars, st.text(max_size=5)),
    st.dictionaries(
        st.text(min_size=1, max_size=4), st.one_of(_entry, st.lists(_entry, max_size=3)), max_size=4
    ),
)


@given(_scores)
def test_sync_and_async_runners_agree(value: Any) -> None:
    sync = _run_evaluator(run_name="r", scorer=lambda: value, feedback_key="k")

    async def ascorer() -> Any:
        return value

    async_result = asyncio.run(_arun_evaluator(run_name="r", scorer=ascorer, feedback_key="k"))
    assert sync == async_result
    results = sync if isinstance(sync, list) else [sync]
    if isinstance(value, dict):
        expected_len = sum(len(v) if isinstance(v, list) else 1 for v in value.values())
        assert len(results) == expected_len
        assert [r["key"] for r in results] == [
            k for k, v in value.items() for _ in (v if isinstance(v, list) else [v])
        ]
    else:
        assert len(results) == 1
        assert results[0]["key"] == "k"


# --------------------------------------------------------------------------- README custom evaluator


def create_regex_evaluator(*, regex: str) -> SimpleEvaluator:
    """The README's "Creating your own" example, verbatim apart from type annotations."""
    regex = re.compile(regex)  # type: ignore[assignment]

    def wrapped_evaluator(*, outputs: Any, **kwargs: Any) -> EvaluatorResult:
        if not isinstance(outputs, str):
            outputs = json.dumps(outputs)

        def get_score() -> bool:
            return regex.match(outputs) is not None  # type: ignore[attr-defined]

        res = _run_evaluator(
            run_name="regex_match",
            scorer=get_score,
            feedback_key="regex_match",
        )
        return res  # type: ignore[return-value]

    return wrapped_evaluator  # type: ignore[return-value]


def test_readme_regex_evaluator_example() -> None:
    evaluator = create_regex_evaluator(regex=r"some string")
    result = evaluator(outputs="this contains some string")
    # The README prints ``'score': True`` for this call, but ``re.match`` anchors at the start of
    # the string, so the real result (ours and the public release's) is False.
    assert result == _single("regex_match", False)
    assert evaluator(outputs="some string and more") == {
        "key": "regex_match",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    assert evaluator(outputs={"a": 1}, inputs="ignored", reference_outputs="ignored") == (
        _single("regex_match", False)
    )
    assert create_regex_evaluator(regex=r'\{"a"')(outputs={"a": 1})["score"] is True


# --------------------------------------------------------------------------- overhead


def test_per_call_overhead_is_small_when_langsmith_is_off() -> None:
    def scorer(*, outputs: Any, reference_outputs: Any) -> bool:
        return outputs == reference_outputs

    n = 10_000
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            _run_evaluator(
                run_name="r", scorer=scorer, feedback_key="k", outputs=1, reference_outputs=1
            )
        best = min(best, time.perf_counter() - start)
    assert best < 0.5, f"{n} calls took {best:.3f}s"


async def test_async_per_call_overhead_is_small_when_langsmith_is_off() -> None:
    async def scorer(*, outputs: Any) -> bool:
        return bool(outputs)

    n = 10_000
    start = time.perf_counter()
    for _ in range(n):
        await _arun_evaluator(run_name="r", scorer=scorer, feedback_key="k", outputs=1)
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, f"{n} async calls took {elapsed:.3f}s"


# --------------------------------------------------------------------------- environment switch

_TRACING_VARS = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)


@pytest.fixture
def fresh_tracing_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from langsmith import utils as ls_utils

    from openevals import utils

    for name in _TRACING_VARS:
        monkeypatch.delenv(name, raising=False)
    utils._reread_tracing_env()
    ls_utils.get_env_var.cache_clear()
    yield
    monkeypatch.undo()
    utils._reread_tracing_env()
    ls_utils.get_env_var.cache_clear()


@pytest.mark.usefixtures("fresh_tracing_env")
@given(
    st.dictionaries(
        st.sampled_from(_TRACING_VARS),
        st.sampled_from(["true", " TRUE ", "True", "false", "", "  ", "1", "true "]),
    )
)
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_tracing_env_is_read_by_langsmiths_rule(values: dict[str, str]) -> None:
    """The same variables, precedence and value test as LangSmith's own tracing_is_enabled."""
    from langsmith import utils as ls_utils

    from openevals import utils

    with pytest.MonkeyPatch.context() as patch:
        for name, value in values.items():
            patch.setenv(name, value)
        ls_utils.get_env_var.cache_clear()
        theirs = ls_utils.get_env_var(
            "TRACING_V2", default=ls_utils.get_env_var("TRACING", default="")
        )
        assert utils._read_tracing_env() is (theirs == "true")
    ls_utils.get_env_var.cache_clear()


@pytest.mark.usefixtures("fresh_tracing_env")
def test_tracing_env_is_read_once_per_process_like_langsmith(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openevals import utils

    assert utils._env_tracing_on() is False
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    assert utils._env_tracing_on() is False  # kept, as langsmith.utils.get_env_var keeps it
    utils._reread_tracing_env()
    assert utils._env_tracing_on() is True


@pytest.mark.usefixtures("fresh_tracing_env")
def test_a_direct_call_reads_no_environment_variable() -> None:
    """The per-call check costs no os.environ lookups (it made exact_match ~3x slower)."""
    reads: list[str] = []
    real_get = os.environ.get

    def counting_get(name: str, default: Any = None) -> Any:
        reads.append(name)
        return real_get(name, default)

    exact_match(outputs="a", reference_outputs="a")  # the one read of the process
    os.environ.get = counting_get  # type: ignore[method-assign]
    try:
        for _ in range(100):
            exact_match(outputs="a", reference_outputs="a")
    finally:
        del os.environ.get
    assert reads == []


@pytest.mark.usefixtures("fresh_tracing_env")
def test_tracing_switched_on_mid_process_is_noticed_where_langsmith_notices_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import langsmith
    import langsmith.run_helpers  # LangSmith's tracing code, loaded
    from langsmith import utils as ls_utils

    from openevals import utils

    assert "langsmith.run_helpers" in sys.modules
    assert utils._needs_langsmith() is False
    with langsmith.tracing_context(enabled=True):  # LangSmith's own switch
        assert utils._needs_langsmith() is True
    assert utils._needs_langsmith() is False
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    ls_utils.get_env_var.cache_clear()  # how LangSmith itself sees a variable set mid-process
    assert ls_utils.tracing_is_enabled() is True
    assert utils._needs_langsmith() is True
