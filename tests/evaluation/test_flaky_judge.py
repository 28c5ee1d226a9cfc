"""A flaky judge must not starve healthy rows (issue 43): eval_timeout bounds each attempt and
counts no back-off or admission wait; a hung judge attempt is tried again; only server signals
(429/503, dropped connections) slow the run down."""

from __future__ import annotations

import asyncio
from typing import Any

from openevals import evaluate
from openevals.evaluation import LocalEngine
from openevals.llm import create_async_llm_as_judge
from openevals.testing import FakeOpenAIServer, async_openai_client
from openevals.testing._protocol import make_reply

ROWS = [{"inputs": f"q{i}", "outputs": f"a{i}"} for i in range(6)]


def _judge(server: FakeOpenAIServer) -> Any:
    return create_async_llm_as_judge(
        prompt="Is {outputs} right for {inputs}?",
        judge=async_openai_client(server, max_retries=0),
        model="gpt-test",
    )


def _first_attempt(fault: Any) -> Any:
    """A responder whose first request for row q0 gets ``fault``; everything else succeeds."""
    seen: set[str] = set()

    def respond(body: dict[str, Any]) -> Any:
        text = str(body["messages"])
        if "q0" in text and "q0" not in seen:
            seen.add("q0")
            return fault
        return make_reply(json={"reasoning": "ok", "score": True})

    return respond


def _scores(result: Any) -> list[Any]:
    return [r["evaluations"]["llm_as_judge"]["results"][0]["score"] for r in result.rows]


def test_a_back_off_longer_than_eval_timeout_does_not_time_the_row_out(
    fake_openai: FakeOpenAIServer,
) -> None:
    busy = make_reply(status=503, headers={"Retry-After": "0.6"}, body={"error": {"message": "x"}})
    fake_openai.set_responder(_first_attempt(busy))
    result = evaluate(
        ROWS, [_judge(fake_openai)], engine=LocalEngine(eval_timeout=0.4), progress=False
    )
    assert result.summary["pairs"]["failed"] == 0, result.summary["errors"]
    assert _scores(result) == [True] * 6
    assert result.summary["concurrency"]["backoffs"] == 1  # a 503 is a server signal


def test_a_hung_judge_attempt_is_tried_again(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_responder(_first_attempt(make_reply(hang=True)))
    result = evaluate(
        ROWS, [_judge(fake_openai)], engine=LocalEngine(eval_timeout=0.5), progress=False
    )
    assert result.summary["pairs"]["failed"] == 0, result.summary["errors"]
    assert _scores(result) == [True] * 6
    assert len(fake_openai.chat_requests) == 7  # six rows, one of them asked twice
    assert result.summary["concurrency"]["backoffs"] == 0  # a timeout is no congestion


def test_a_slow_plain_evaluator_times_out_once_and_slows_nothing() -> None:
    calls = 0

    async def slow(*, outputs: Any, **_: Any) -> bool:
        nonlocal calls
        calls += 1
        if outputs == "a0":
            await asyncio.sleep(5)
        return True

    result = evaluate(ROWS, [slow], engine=LocalEngine(eval_timeout=0.2), progress=False)
    (failed,) = [r for r in result.rows if r["status"] == "error"]
    error = failed["evaluations"]["slow"]["error"]
    assert error["type"] == "TimeoutError" and "eval_timeout=0.2" in error["message"]
    assert calls == 6  # not a judge: no second attempt
    assert result.summary["concurrency"]["backoffs"] == 0
