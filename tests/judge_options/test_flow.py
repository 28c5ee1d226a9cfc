"""The judge core is a sans-IO flow run by the package's driver pair; so is the simulator."""

from __future__ import annotations

from typing import Any

import pytest

import openevals._judge.core as core_module
import openevals.simulators.multiturn as multiturn
from openevals._drivers import drive
from openevals._judge.shell import judge_core
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.simulators import run_multiturn_simulation, run_multiturn_simulation_async
from openevals.testing import FakeOpenAIServer, openai_client


def _reply(score: bool) -> dict[str, Any]:
    text = '{"reasoning": "r", "score": %s}' % ("true" if score else "false")
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}


def test_the_judge_flow_yields_its_io(fake_openai: FakeOpenAIServer) -> None:
    """Driven by hand, without any server: the flow yields a Send per request, a Sleep per
    backoff, and returns the validated outcome."""
    judge = create_llm_as_judge(prompt="{outputs}", judge=openai_client(fake_openai), model="m")
    core = judge_core(judge)
    flow = core.flow(None, "x", None, {})
    steps: list[Any] = []

    def perform(step: Any) -> Any:
        steps.append(step)
        if isinstance(step, core_module.Sleep):
            return None
        if sum(isinstance(s, core_module.Send) for s in steps) == 1:
            raise core_module.JudgeServerError("garbled")
        return _reply(True)

    core.retry = core_module.RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.001)
    outcome = drive(flow, perform)
    assert [type(s).__name__ for s in steps] == ["Send", "Sleep", "Send"]
    assert outcome.value == (True, "r")
    assert fake_openai.chat_requests == []


def _spy_on_drivers(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[str]:
    """Record which driver ``module`` runs its flows with."""
    used: list[str] = []
    real_drive, real_adrive = module.drive, module.adrive

    def spy_drive(flow: Any, perform: Any) -> Any:
        used.append("drive")
        return real_drive(flow, perform)

    async def spy_adrive(flow: Any, perform: Any) -> Any:
        used.append("adrive")
        return await real_adrive(flow, perform)

    monkeypatch.setattr(module, "drive", spy_drive)
    monkeypatch.setattr(module, "adrive", spy_adrive)
    return used


@pytest.mark.parametrize("is_async", [False, True])
async def test_both_shells_go_through_the_drivers(
    is_async: bool, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    used = _spy_on_drivers(monkeypatch, core_module)
    fake_openai.queue_chat(json={"reasoning": "r", "score": True})
    factory = create_async_llm_as_judge if is_async else create_llm_as_judge
    judge = factory(prompt="{outputs}", judge=openai_client(fake_openai), model="m")
    result = judge(outputs="x")
    if is_async:
        result = await result
    assert result["score"] is True
    assert used == (["adrive"] if is_async else ["drive"])


@pytest.mark.parametrize("is_async", [False, True])
async def test_simulator_runs_on_the_drivers(
    is_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    used = _spy_on_drivers(monkeypatch, multiturn)
    options: dict[str, Any] = {"app": lambda m, **kw: "hello", "user": ["hi"], "max_turns": 1}
    if is_async:
        result = await run_multiturn_simulation_async(**options)
    else:
        result = run_multiturn_simulation(**options)
    assert [m["content"] for m in result["trajectory"]] == ["hi", "hello"]
    assert used == (["adrive"] if is_async else ["drive"])
