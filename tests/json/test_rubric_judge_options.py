"""The JSON rubric judge is built like every judge (``build_core``): its options get the shared
checks at creation, and ``timeout=`` bounds a rubric request to a server that never answers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator
from openevals.llm import JudgeTimeoutError
from openevals.testing import FakeOpenAIServer

RUBRIC = {"a": "Does it name a fruit?"}


def test_timeout_is_checked_with_the_other_judge_options() -> None:
    with pytest.raises(ValueError, match="`timeout` must be a finite number of seconds > 0"):
        create_json_match_evaluator(rubric=RUBRIC, model="openai:gpt-test", timeout=-1)
    with pytest.raises(TypeError, match="`timeout` must be a number of seconds"):
        create_async_json_match_evaluator(rubric=RUBRIC, model="openai:gpt-test", timeout="9")  # type: ignore[arg-type]


def test_timeout_without_a_rubric_is_refused() -> None:
    for factory in (create_json_match_evaluator, create_async_json_match_evaluator):
        with pytest.raises(ValueError, match="there is no `rubric`"):
            factory(timeout=5)


def test_a_bad_model_is_refused_at_creation() -> None:
    with pytest.raises(TypeError, match="`model` must be a 'provider:model' string"):
        create_json_match_evaluator(rubric=RUBRIC, model=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`judge` must be a LangChain chat model or an OpenAI"):
        create_json_match_evaluator(rubric=RUBRIC, judge=object())


def test_no_judge_is_built_without_a_rubric() -> None:
    evaluator = create_json_match_evaluator()
    with pytest.raises(TypeError, match="is not an LLM-as-judge evaluator"):
        judge_core(evaluator)
    assert evaluator(outputs={"a": 1}, reference_outputs={"a": 1})[0]["score"] == 1


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize("use_async", [False, True])
def test_a_hung_rubric_request_is_a_judge_timeout(
    fake_openai: FakeOpenAIServer, use_async: bool
) -> None:
    fake_openai.set_default_chat(hang=True)
    factory: Any = create_async_json_match_evaluator if use_async else create_json_match_evaluator
    evaluator = factory(rubric=RUBRIC, model="openai:gpt-test", timeout=0.3)
    judge_core(evaluator).retry = RetryPolicy(max_retries=1, initial_delay=0.01, max_delay=0.01)
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError) as info:
        out = evaluator(outputs={"a": "Mango"}, reference_outputs={"a": "Mango"})
        if asyncio.iscoroutine(out):
            asyncio.run(out)
    assert time.monotonic() - started < 2.5  # two attempts of 0.3 s
    assert info.value.timeout == 0.3 and info.value.attempts == 2
