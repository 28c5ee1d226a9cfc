"""The pairwise judge against the fake OpenAI server: both orders, ties, position bias."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI

from openevals.pairwise import (
    PAIRWISE_CORRECTNESS_PROMPT,
    create_async_pairwise_llm_as_judge,
    create_pairwise_llm_as_judge,
)
from openevals.testing import FakeOpenAIServer


def _positions(body: dict[str, Any]) -> tuple[str, str]:
    text = json.dumps(body["messages"])
    a = re.search(r"<response_a>\\n(.*?)\\n</response_a>", text)
    b = re.search(r"<response_b>\\n(.*?)\\n</response_b>", text)
    assert a and b, text
    return a.group(1), b.group(1)


def _verdict(preference: str) -> dict[str, Any]:
    return {"json": {"reasoning": f"picked {preference}", "preference": preference}}


def _prefers(winner: str):  # type: ignore[no-untyped-def]
    """A consistent judge: always prefers the output whose text is ``winner``."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        a, b = _positions(body)
        return _verdict("A" if a == winner else "B" if b == winner else "tie")

    return respond


def _first_position(body: dict[str, Any]) -> dict[str, Any]:
    """A position-biased judge: always prefers whatever comes first."""
    return _verdict("A")


def _sync(server: FakeOpenAIServer, **kw: Any) -> Any:
    return create_pairwise_llm_as_judge(
        judge=OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0),
        model="gpt-test",
        **kw,
    )


def _async(server: FakeOpenAIServer, **kw: Any) -> Any:
    return create_async_pairwise_llm_as_judge(
        judge=AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0),
        model="gpt-test",
        **kw,
    )


def test_consistent_preference_in_both_orders(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_prefers("good answer"))
    evaluator = _sync(fake_openai)
    result = evaluator(inputs="q", outputs={"sys1": "bad answer", "sys2": "good answer"})
    assert result["key"] == "pairwise_preference"
    assert result["scores"] == {"sys1": 0.0, "sys2": 1.0}
    assert result["metadata"]["preferred"] == "sys2"
    assert result["metadata"]["position_consistent"] is True
    assert result["metadata"]["verdicts"] == ["B", "B"]
    assert len(fake_openai.chat_requests) == 2
    # the second request shows the outputs swapped
    assert _positions(fake_openai.chat_requests[1]) == ("good answer", "bad answer")


async def test_async_judges_both_orders(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_prefers("good answer"))
    evaluator = _async(fake_openai)
    result = await evaluator(inputs="q", outputs=["good answer", "bad answer"])
    assert result["scores"] == {0: 1.0, 1: 0.0}
    assert result["metadata"]["preferred"] == 0
    assert len(fake_openai.chat_requests) == 2


@pytest.mark.parametrize("is_async", [False, True])
async def test_position_bias_becomes_a_flagged_tie(
    fake_openai: FakeOpenAIServer, is_async: bool
) -> None:
    fake_openai.set_responder(_first_position)
    evaluator = (_async if is_async else _sync)(fake_openai)
    result = evaluator(inputs="q", outputs=["one", "two"])
    if is_async:
        result = await result
    assert result["scores"] == {0: 0.5, 1: 0.5}
    assert result["metadata"]["position_consistent"] is False
    assert result["metadata"]["order_flip"] is True
    assert result["metadata"]["preferred"] is None


def test_tie_in_one_order_only_is_inconsistent(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(**_verdict("A"))
    fake_openai.queue_chat(**_verdict("tie"))
    result = _sync(fake_openai)(outputs=["x", "y"])
    assert result["scores"] == {0: 0.5, 1: 0.5}
    assert result["metadata"]["position_consistent"] is False
    assert result["metadata"]["order_flip"] is False


def test_single_order_when_swapping_is_off(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_first_position)
    result = _sync(fake_openai, swap_positions=False)(outputs=["x", "y"])
    assert result["scores"] == {0: 1.0, 1: 0.0}
    assert len(fake_openai.chat_requests) == 1


def test_ties_can_be_disallowed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_prefers("x"))
    _sync(fake_openai, allow_ties=False)(outputs=["x", "y"])
    body = json.dumps(fake_openai.chat_requests[0])
    assert '"enum": ["A", "B"]' in body


def test_criteria_and_reference_reach_the_prompt(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(lambda body: _verdict("tie"))
    evaluator = _sync(
        fake_openai, prompt=PAIRWISE_CORRECTNESS_PROMPT, criteria="Units must be metric."
    )
    evaluator(inputs="how far?", outputs=["5 km", "3 miles"], reference_outputs="5 km")
    text = json.dumps(fake_openai.chat_requests[0]["messages"])
    assert "Units must be metric." in text
    assert "<reference_output>\\n5 km\\n</reference_output>" in text


def test_langsmith_comparative_evaluator_shape(fake_openai: FakeOpenAIServer) -> None:
    """langsmith's own comparative wrapper accepts the evaluator and keys scores by run id."""
    import uuid

    from langsmith.evaluation.evaluator import comparison_evaluator
    from langsmith.schemas import Example, Run

    runs = [
        Run(
            id=uuid.uuid4(),
            name="a",
            run_type="chain",
            inputs={},
            outputs={"answer": "worse"},
            start_time="2026-01-01T00:00:00",
            trace_id=uuid.uuid4(),
        ),
        Run(
            id=uuid.uuid4(),
            name="b",
            run_type="chain",
            inputs={},
            outputs={"answer": "better"},
            start_time="2026-01-01T00:00:00",
            trace_id=uuid.uuid4(),
        ),
    ]
    example = Example(
        id=uuid.uuid4(),
        inputs={"question": "q"},
        outputs={"answer": "ref"},
        dataset_id=uuid.uuid4(),
        created_at="2026-01-01T00:00:00",
    )
    evaluator = _sync(fake_openai, prompt="Q: {inputs}\nA: {output_a}\nB: {output_b}")
    fake_openai.set_responder(
        lambda body: _verdict(
            "B" if '\\"better\\"' in json.dumps(body["messages"]).split("B: ")[1] else "A"
        )
    )
    result = comparison_evaluator(evaluator).compare_runs(runs, example)
    assert result.key == "pairwise_preference"
    assert result.scores == {str(runs[0].id): 0.0, str(runs[1].id): 1.0}


@pytest.mark.parametrize(
    ("outputs", "error", "match"),
    [
        (["only one"], ValueError, "exactly two"),
        ({"a": 1, "b": 2, "c": 3}, ValueError, "exactly two"),
        ("a string", TypeError, "`outputs`"),
        (None, TypeError, "`outputs`"),
    ],
)
def test_bad_outputs_fail_before_any_model_call(
    fake_openai: FakeOpenAIServer, outputs: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        _sync(fake_openai)(outputs=outputs)
    assert fake_openai.chat_requests == []


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"feedback_key": ""}, ValueError, "`feedback_key`"),
        ({"criteria": 3}, TypeError, "`criteria`"),
        ({"swap_positions": "yes"}, TypeError, "`swap_positions`"),
        ({"allow_ties": 1}, TypeError, "`allow_ties`"),
    ],
)
def test_bad_options_fail_at_creation(
    fake_openai: FakeOpenAIServer, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        _sync(fake_openai, **kwargs)


def test_judge_failure_raises_never_a_score(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(status=500)
    with pytest.raises(Exception) as info:
        _sync(fake_openai, max_retries=0)(outputs=["x", "y"])
    assert not isinstance(info.value, AssertionError)
