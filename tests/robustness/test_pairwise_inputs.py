"""Bad inputs to the pairwise judge name the caller's parameter (issue 29, item 4).

Deep ``inputs``/``outputs``/``reference_outputs`` are rendered (no ``RecursionError``); a cycle is
reported under the parameter that holds it; dicts with keys JSON cannot hold give a TypeError
naming the parameter; a lone surrogate is reported under ``outputs[...]``, not the prompt's
``output_a``; bad ``runs`` name ``runs``. Every refusal happens before any model call, sync and
async, and nothing the caller passed is mutated.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI

from openevals._structure import encode_json
from openevals.llm import create_async_pairwise_llm_as_judge, create_pairwise_llm_as_judge
from openevals.testing import FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("tracing_off")

DEPTH = 2_000
VERDICT = {"json": {"reasoning": "r", "preference": "A"}}


def judge(server: FakeOpenAIServer, is_async: bool) -> Any:
    server.set_responder(lambda body: VERDICT)
    if is_async:
        return create_async_pairwise_llm_as_judge(
            judge=AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0),
            model="gpt-test",
        )
    return create_pairwise_llm_as_judge(
        judge=OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0),
        model="gpt-test",
    )


def call(evaluator: Any, **kwargs: Any) -> Any:
    result = evaluator(**kwargs)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


def deep(depth: int = DEPTH) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def cyclic() -> Any:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
GOOD = {"inputs": "q", "outputs": ["x", "y"], "reference_outputs": "r"}


@SYNC_ASYNC
@pytest.mark.parametrize("where", ["inputs", "outputs", "reference_outputs"])
def test_deep_values_are_judged(fake_openai: FakeOpenAIServer, is_async: bool, where: str) -> None:
    value = deep()
    kwargs = {**GOOD, where: [value, "y"] if where == "outputs" else value}
    result = call(judge(fake_openai, is_async), **kwargs)
    assert result["scores"] == {0: 0.5, 1: 0.5}  # a judge that always says "A": a flagged tie
    assert encode_json(value, "v") == encode_json(deep(), "v")
    sent = json.dumps(fake_openai.chat_requests[0]["messages"])
    assert '\\"k\\"' in sent or '"k"' in sent


CYCLES = [
    ("inputs", lambda: {"inputs": cyclic()}, r"^`inputs` contains itself"),
    ("reference", lambda: {"reference_outputs": cyclic()}, r"^`reference_outputs` contains"),
    ("outputs-0", lambda: {"outputs": [cyclic(), "y"]}, r"^`outputs\[0\]` contains itself"),
    ("outputs-1", lambda: {"outputs": ["x", cyclic()]}, r"^`outputs\[1\]` contains itself"),
    (
        "outputs-dict",
        lambda: {"outputs": {"sys-a": "x", "sys-b": cyclic()}},
        r"^`outputs\['sys-b'\]` contains itself",
    ),
]


@SYNC_ASYNC
@pytest.mark.parametrize(("case", "make", "pattern"), CYCLES, ids=[c[0] for c in CYCLES])
def test_a_cycle_is_reported_under_its_parameter(
    fake_openai: FakeOpenAIServer, is_async: bool, case: str, make: Any, pattern: str
) -> None:
    with pytest.raises(ValueError, match=pattern):
        call(judge(fake_openai, is_async), **{**GOOD, **make()})
    assert fake_openai.chat_requests == []


BAD_KEYS = [
    ("inputs", {"inputs": {(1, 2): "x"}}, r"^`inputs` cannot be shown to the judge as JSON"),
    (
        "reference",
        {"reference_outputs": {"a": {frozenset(): 1}}},
        r"^`reference_outputs` cannot be shown",
    ),
    ("outputs", {"outputs": [{(1,): "x"}, "y"]}, r"^`outputs\[0\]` cannot be shown"),
]


@SYNC_ASYNC
@pytest.mark.parametrize(("case", "kwargs", "pattern"), BAD_KEYS, ids=[c[0] for c in BAD_KEYS])
def test_non_string_keys_name_the_parameter(
    fake_openai: FakeOpenAIServer, is_async: bool, case: str, kwargs: Any, pattern: str
) -> None:
    with pytest.raises(TypeError, match=pattern):
        call(judge(fake_openai, is_async), **{**GOOD, **kwargs})
    assert fake_openai.chat_requests == []


@SYNC_ASYNC
def test_non_string_keys_in_a_deep_value_name_the_parameter(
    fake_openai: FakeOpenAIServer, is_async: bool
) -> None:
    value = {(1, 2): deep()}
    with pytest.raises(TypeError, match=r"^`inputs` cannot be shown to the judge as JSON"):
        call(judge(fake_openai, is_async), **{**GOOD, "inputs": value})


SURROGATES = [
    ("outputs-0", {"outputs": ["caf\udce9", "y"]}, r"^`outputs\[0\]` contains a lone surrogate"),
    ("outputs-1", {"outputs": ["x", {"t": "caf\udce9"}]}, r"^`outputs\[1\]` contains a lone"),
    ("outputs-dict", {"outputs": {"a": "x", "b": "\ud800"}}, r"^`outputs\['b'\]` contains"),
    ("inputs", {"inputs": {"q": "\udce9"}}, r"^`inputs` contains a lone surrogate"),
    ("reference", {"reference_outputs": "\udce9"}, r"^`reference_outputs` contains a lone"),
]


@SYNC_ASYNC
@pytest.mark.parametrize(("case", "kwargs", "pattern"), SURROGATES, ids=[c[0] for c in SURROGATES])
def test_a_lone_surrogate_is_reported_under_the_callers_parameter(
    fake_openai: FakeOpenAIServer, is_async: bool, case: str, kwargs: Any, pattern: str
) -> None:
    with pytest.raises(ValueError, match=pattern) as caught:
        call(judge(fake_openai, is_async), **{**GOOD, **kwargs})
    assert "output_a" not in str(caught.value)
    assert "output_b" not in str(caught.value)
    assert fake_openai.chat_requests == []


class Run:
    def __init__(self, run_id: Any) -> None:
        self.id = run_id


BAD_RUNS = [
    ([1, 2], TypeError, r"^`runs\[0\]` must be a run with an `id`"),
    ([None, None], TypeError, r"^`runs\[0\]` must be a run with an `id`"),
    ([Run("a"), object()], TypeError, r"^`runs\[1\]` must be a run with an `id`"),
    ("ab", TypeError, r"^`runs` must be a list of the two runs"),
    (5, TypeError, r"^`runs` must be a list of the two runs; got int 5|^`runs` must be a list"),
    ([Run("a")], ValueError, r"`runs` has 1"),
    ([Run("a"), Run("b"), Run("c")], ValueError, r"`runs` has 3"),
]


@SYNC_ASYNC
@pytest.mark.parametrize(("runs", "error", "pattern"), BAD_RUNS)
def test_bad_runs_name_runs(
    fake_openai: FakeOpenAIServer, is_async: bool, runs: Any, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        call(judge(fake_openai, is_async), **GOOD, runs=runs)
    assert fake_openai.chat_requests == []


@SYNC_ASYNC
def test_runs_with_ids_key_the_scores(fake_openai: FakeOpenAIServer, is_async: bool) -> None:
    result = call(judge(fake_openai, is_async), **GOOD, runs=[Run("r1"), {"id": "r2"}])
    assert set(result["scores"]) == {"r1", "r2"}
