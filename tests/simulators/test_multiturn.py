"""run_multiturn_simulation / run_multiturn_simulation_async: turn loop, trajectory rules, errors."""

from __future__ import annotations

import asyncio
import copy
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from openevals.simulators import (
    SimulationError,
    run_multiturn_simulation,
    run_multiturn_simulation_async,
)
from openevals.simulators.multiturn import _simulation, _validate
from openevals.types import ChatCompletionMessage
from openevals.utils import _run_evaluator

Run = Callable[..., Awaitable[Any]]


async def _run_sync(**kwargs: Any) -> Any:
    return run_multiturn_simulation(**kwargs)


async def _run_async(**kwargs: Any) -> Any:
    return await run_multiturn_simulation_async(**kwargs)


RUNNERS = pytest.mark.parametrize("run", [_run_sync, _run_async], ids=["sync", "async"])


pytestmark = pytest.mark.usefixtures("tracing_off")


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _roles(trajectory: list[Any]) -> list[str]:
    return [m["role"] for m in trajectory]


def _contents(trajectory: list[Any]) -> list[Any]:
    return [m["content"] for m in trajectory]


# --------------------------------------------------------------------------- README examples


@RUNNERS
async def test_readme_custom_user_and_app(run: Run) -> None:
    def my_app(inputs: ChatCompletionMessage, *, thread_id: str, **kwargs: Any) -> Any:
        output = "3.11 is greater than 3.9."
        return {"role": "assistant", "content": output, "id": "1234"}

    def my_simulated_user(
        trajectory: list[ChatCompletionMessage], *, thread_id: str, **kwargs: Any
    ) -> Any:
        output = "Wow that's amazing!"
        return {"role": "user", "content": output, "id": "5678"}

    result = await run(app=my_app, user=my_simulated_user, trajectory_evaluators=[], max_turns=1)
    assert result == {
        "trajectory": [
            {"role": "user", "content": "Wow that's amazing!", "id": "5678"},
            {"role": "assistant", "content": "3.11 is greater than 3.9.", "id": "1234"},
        ],
        "evaluator_results": [],
    }


@RUNNERS
async def test_canned_replies_with_fixed_ids_keep_every_turn(run: Run) -> None:
    """The README's custom functions over 3 turns: same id and text every turn, no turn lost."""
    result = await run(
        app=lambda m, **kw: {"role": "assistant", "content": "3.11 > 3.9", "id": "1234"},
        user=lambda t, **kw: {"role": "user", "content": "Wow!", "id": "5678"},
        max_turns=3,
    )
    trajectory = result["trajectory"]
    assert _roles(trajectory) == ["user", "assistant"] * 3
    assert _contents(trajectory) == ["Wow!", "3.11 > 3.9"] * 3
    ids = [m["id"] for m in trajectory]
    assert ids[:2] == ["5678", "1234"]
    assert len(set(ids)) == 6
    assert all(_is_uuid(i) for i in ids[2:])


# --------------------------------------------------------------------------- the turn protocol


@RUNNERS
async def test_call_protocol_user_first_app_gets_latest_message(run: Run) -> None:
    user_calls: list[tuple[list[Any], dict[str, Any]]] = []
    app_calls: list[tuple[Any, dict[str, Any]]] = []

    def user(trajectory: list[Any], **kwargs: Any) -> str:
        user_calls.append((trajectory, kwargs))
        return f"question {kwargs['turn_counter']}"

    def app(message: Any, **kwargs: Any) -> str:
        app_calls.append((message, kwargs))
        return f"answer to {message['content']}"

    result = await run(app=app, user=user, max_turns=3, thread_id="thread-7")
    assert [kw for _, kw in user_calls] == [
        {"thread_id": "thread-7", "turn_counter": n} for n in range(3)
    ]
    assert [len(t) for t, _ in user_calls] == [0, 2, 4]
    assert user_calls[2][0][-1]["content"] == "answer to question 1"
    assert [kw for _, kw in app_calls] == [{"thread_id": "thread-7"}] * 3
    assert [m["content"] for m, _ in app_calls] == ["question 0", "question 1", "question 2"]
    assert all(m["role"] == "user" and _is_uuid(m["id"]) for m, _ in app_calls)
    # the app receives the very message that was recorded (same id)
    assert [m["id"] for m, _ in app_calls] == [m["id"] for m in result["trajectory"][::2]]
    assert _roles(result["trajectory"]) == ["user", "assistant"] * 3


@RUNNERS
async def test_plain_strings_become_messages_of_the_right_role(run: Run) -> None:
    """Bug B9a: the public release raises on a string from the user callable."""
    result = await run(app=lambda m, **kw: "hello back", user=lambda t, **kw: "hello", max_turns=1)
    assert [(m["role"], m["content"]) for m in result["trajectory"]] == [
        ("user", "hello"),
        ("assistant", "hello back"),
    ]
    assert all(_is_uuid(m["id"]) for m in result["trajectory"])


@RUNNERS
async def test_default_thread_id_is_a_uuid_shared_by_all_turns(run: Run) -> None:
    seen: list[str] = []

    def app(message: Any, *, thread_id: str, **kwargs: Any) -> str:
        seen.append(thread_id)
        return "ok"

    await run(
        app=app, user=lambda t, *, thread_id, **kw: seen.append(thread_id) or "hi", max_turns=2
    )
    assert len(seen) == 4 and len(set(seen)) == 1 and _is_uuid(seen[0])


@RUNNERS
async def test_user_as_list_of_fixed_responses(run: Run) -> None:
    responses: list[Any] = ["first", {"role": "user", "content": "second", "id": "u2"}]
    before = copy.deepcopy(responses)
    received: list[str] = []

    def app(message: Any, **kwargs: Any) -> str:
        received.append(message["content"])
        return "noted"

    result = await run(app=app, user=responses, max_turns=2)
    assert received == ["first", "second"]
    assert result["trajectory"][2]["id"] == "u2"
    assert _is_uuid(result["trajectory"][0]["id"])
    assert responses == before  # no ids added to the caller's list


@RUNNERS
async def test_user_list_too_short_names_the_turn(run: Run) -> None:
    with pytest.raises(ValueError, match=r"turn 3 .*only 2 response"):
        await run(app=lambda m, **kw: "ok", user=["a", "b"], max_turns=5)


@RUNNERS
async def test_user_list_with_stopping_condition_and_no_max_turns(run: Run) -> None:
    result = await run(
        app=lambda m, **kw: "ok",
        user=["a", "b", "c"],
        stopping_condition=lambda t, *, turn_counter: turn_counter == 3,
    )
    assert _contents(result["trajectory"]) == ["a", "ok", "b", "ok", "c", "ok"]


# --------------------------------------------------------------------------- multi-message replies


def _agent_turn(n: int) -> list[Any]:
    return [
        AIMessage(
            content="",
            tool_calls=[{"name": "lookup", "args": {"order": n}, "id": f"call-{n}"}],
            id=f"ai-tool-{n}",
        ),
        ToolMessage(content=f"order {n} shipped", tool_call_id=f"call-{n}", id=f"tool-{n}"),
        AIMessage(content=f"Your order {n} has shipped.", id=f"ai-final-{n}"),
    ]


@RUNNERS
@pytest.mark.parametrize("shape", ["list", "messages-dict"])
async def test_app_returning_several_langchain_messages(run: Run, shape: str) -> None:
    seen_by_user: list[Any] = []

    def app(message: Any, **kwargs: Any) -> Any:
        msgs = _agent_turn(len(seen_by_user) - 1)
        return msgs if shape == "list" else {"messages": msgs}

    def user(trajectory: list[Any], **kwargs: Any) -> str:
        seen_by_user.append(trajectory[-1] if trajectory else None)
        return "where is my order?"

    result = await run(app=app, user=user, max_turns=2)
    trajectory = result["trajectory"]
    assert _roles(trajectory) == ["user", "assistant", "tool", "assistant"] * 2
    assert trajectory[1]["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": '{"order": 0}',
    }
    assert trajectory[2]["tool_call_id"] == "call-0"
    assert [m["id"] for m in trajectory[1:4]] == ["ai-tool-0", "tool-0", "ai-final-0"]
    # the user sees the app's last message of the previous turn
    assert seen_by_user[0] is None
    assert seen_by_user[1]["content"] == "Your order 0 has shipped."


class _LangGraphLikeAgent:
    """Keeps its state like a LangGraph checkpointer and returns the whole state every turn."""

    def __init__(self) -> None:
        self.state: dict[str, list[Any]] = {}

    def __call__(self, message: Any, *, thread_id: str, **kwargs: Any) -> dict[str, Any]:
        history = self.state.setdefault(thread_id, [])
        history.append(HumanMessage(content=message["content"], id=message["id"]))
        n = len(history)
        history.append(AIMessage(content=f"reply {n}", id=f"run-{n}"))
        return {"messages": list(history)}


@RUNNERS
async def test_app_returning_its_whole_state_does_not_duplicate_history(run: Run) -> None:
    agent = _LangGraphLikeAgent()
    result = await run(app=agent, user=lambda t, **kw: f"q{len(t)}", max_turns=3)
    trajectory = result["trajectory"]
    assert _contents(trajectory) == ["q0", "reply 1", "q2", "reply 3", "q4", "reply 5"]
    assert [m["id"] for m in trajectory[1::2]] == ["run-1", "run-3", "run-5"]
    assert len({m["id"] for m in trajectory}) == 6


@RUNNERS
async def test_reused_id_with_different_content_is_kept_with_a_fresh_id(run: Run) -> None:
    """Bug B9b: a model repeating its response id must not make turns vanish."""
    counter = iter(range(100))
    result = await run(
        app=lambda m, **kw: AIMessage(content=f"answer {next(counter)}", id="resp-id"),
        user=lambda t, **kw: {"role": "user", "content": f"q{len(t)}", "id": "user-id"},
        max_turns=3,
    )
    trajectory = result["trajectory"]
    assert _contents(trajectory) == ["q0", "answer 0", "q2", "answer 1", "q4", "answer 2"]
    assert [m["id"] for m in trajectory[:2]] == ["user-id", "resp-id"]
    assert len({m["id"] for m in trajectory}) == 6


@RUNNERS
async def test_non_final_messages_reusing_an_id_with_new_content_are_kept(run: Run) -> None:
    turn = iter(range(100))

    def app(message: Any, **kwargs: Any) -> list[Any]:
        n = next(turn)
        # "step" reuses id "x" every turn with new content: a different message, so it is kept
        return [
            {"role": "assistant", "content": f"step {n}", "id": "x"},
            {"role": "assistant", "content": f"done {n}"},
        ]

    result = await run(app=app, user=lambda t, **kw: "go", max_turns=2)
    assert _contents(result["trajectory"]) == ["go", "step 0", "done 0", "go", "step 1", "done 1"]
    assert result["trajectory"][1]["id"] == "x"
    assert result["trajectory"][4]["id"] != "x"


@RUNNERS
async def test_non_final_messages_resent_unchanged_are_skipped(run: Run) -> None:
    preamble = {"role": "assistant", "content": "Welcome!", "id": "welcome"}
    turn = iter(range(100))

    def app(message: Any, **kwargs: Any) -> list[Any]:
        return [preamble, {"role": "assistant", "content": f"answer {next(turn)}"}]

    result = await run(app=app, user=lambda t, **kw: "hi", max_turns=3)
    assert _contents(result["trajectory"]) == [
        "hi",
        "Welcome!",
        "answer 0",
        "hi",
        "answer 1",
        "hi",
        "answer 2",
    ]
    assert preamble == {"role": "assistant", "content": "Welcome!", "id": "welcome"}


@RUNNERS
async def test_openai_sdk_message_objects_are_accepted(run: Run) -> None:
    from openai.types.chat import ChatCompletionMessage as SDKMessage

    result = await run(
        app=lambda m, **kw: SDKMessage(role="assistant", content="from the SDK"),
        user=lambda t, **kw: "hi",
        max_turns=1,
    )
    reply = result["trajectory"][1]
    assert reply["role"] == "assistant" and reply["content"] == "from the SDK"
    assert _is_uuid(reply["id"])


@RUNNERS
@pytest.mark.parametrize(
    ("reply", "error", "pattern"),
    [
        (None, ValueError, r"the app at turn 1 returned None"),
        ([], ValueError, r"the app at turn 1 returned no messages"),
        ({"messages": []}, ValueError, r"returned no messages"),
        (42, TypeError, r"the app at turn 1 \(message 0\).*int"),
        ({"content": "no role"}, ValueError, r"the app at turn 1 .*'role'"),
        ({"messages": "text"}, TypeError, r"holding str"),
    ],
)
async def test_invalid_app_replies_name_the_turn(
    run: Run, reply: Any, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        await run(app=lambda m, **kw: reply, user=lambda t, **kw: "hi", max_turns=2)


# --------------------------------------------------------------------------- stopping


@RUNNERS
async def test_stopping_condition_is_checked_after_each_app_reply(run: Run) -> None:
    calls: list[tuple[int, int]] = []

    def stop(trajectory: list[Any], *, turn_counter: int) -> bool:
        calls.append((turn_counter, len(trajectory)))
        return trajectory[-1]["content"] == "bye"

    replies = iter(["hello", "sure", "bye", "never reached"])
    result = await run(
        app=lambda m, **kw: next(replies),
        user=lambda t, **kw: "msg",
        stopping_condition=stop,
        max_turns=10,
    )
    assert calls == [(1, 2), (2, 4), (3, 6)]
    assert len(result["trajectory"]) == 6


@RUNNERS
async def test_max_turns_wins_over_a_stopping_condition_that_never_fires(run: Run) -> None:
    result = await run(
        app=lambda m, **kw: "a",
        user=lambda t, **kw: "u",
        stopping_condition=lambda t, **kw: False,
        max_turns=2,
    )
    assert len(result["trajectory"]) == 4


@RUNNERS
@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({}, ValueError, "max_turns.*stopping_condition"),
        ({"max_turns": 0}, ValueError, "positive integer.*0"),
        ({"max_turns": True}, ValueError, "positive integer"),
        ({"max_turns": 1, "stopping_condition": "yes"}, TypeError, "stopping_condition"),
        ({"max_turns": 1, "app": "not callable"}, TypeError, "`app`"),
        ({"max_turns": 1, "user": "hello"}, TypeError, "`user`.*str"),
        ({"max_turns": 1, "user": 3}, TypeError, "`user`"),
        ({"max_turns": 1, "trajectory_evaluators": lambda **kw: 1}, TypeError, "list of"),
        ({"max_turns": 1, "trajectory_evaluators": [1]}, TypeError, r"trajectory_evaluators\[0\]"),
        ({"max_turns": 1, "thread_id": 5}, TypeError, "thread_id"),
    ],
)
async def test_invalid_arguments(
    run: Run, kwargs: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    called: list[str] = []
    options: dict[str, Any] = {
        "app": lambda m, **kw: called.append("app") or "ok",
        "user": lambda t, **kw: called.append("user") or "hi",
        **kwargs,
    }
    with pytest.raises(error, match=pattern):
        await run(**options)
    assert called == []


# --------------------------------------------------------------------------- evaluators


def _count_turns_evaluator(*, outputs: list[Any], **kwargs: Any) -> Any:
    def scorer(*, outputs: list[Any]) -> int:
        return sum(1 for m in outputs if m["role"] == "user")

    return _run_evaluator(run_name="turns", scorer=scorer, feedback_key="turns", outputs=outputs)


@RUNNERS
async def test_evaluators_receive_the_trajectory_and_reference(run: Run) -> None:
    from openevals.trajectory import create_trajectory_match_evaluator

    seen: list[dict[str, Any]] = []

    def spy(**kwargs: Any) -> list[Any]:
        seen.append(kwargs)
        return [
            {"key": "a", "score": 1, "comment": None, "metadata": None},
            {"key": "b", "score": 0, "comment": None, "metadata": None},
        ]

    reference = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    before = copy.deepcopy(reference)
    result = await run(
        app=lambda m, **kw: "hello",
        user=["hi"],
        max_turns=1,
        trajectory_evaluators=[
            create_trajectory_match_evaluator(trajectory_match_mode="strict"),
            spy,
            _count_turns_evaluator,
        ],
        reference_outputs=reference,
    )
    assert [r["key"] for r in result["evaluator_results"]] == [
        "trajectory_strict_match",
        "a",
        "b",
        "turns",
    ]
    assert result["evaluator_results"][0]["score"] is True
    assert result["evaluator_results"][3]["score"] == 1
    assert seen[0]["outputs"] == result["trajectory"]
    assert seen[0]["reference_outputs"] is reference
    assert reference == before


@RUNNERS
async def test_reference_outputs_kwarg_is_omitted_when_not_given(run: Run) -> None:
    seen: list[dict[str, Any]] = []
    await run(
        app=lambda m, **kw: "x",
        user=["y"],
        max_turns=1,
        trajectory_evaluators=[lambda **kw: seen.append(kw) or {"key": "k", "score": 1}],
    )
    assert list(seen[0]) == ["outputs"]


@RUNNERS
async def test_evaluator_must_return_results(run: Run) -> None:
    with pytest.raises(
        TypeError, match=r"trajectory_evaluators\[0\] \(<lambda>\) returned NoneType"
    ):
        await run(
            app=lambda m, **kw: "x",
            user=["y"],
            max_turns=1,
            trajectory_evaluators=[lambda **kw: None],
        )


@RUNNERS
async def test_evaluators_cannot_corrupt_the_returned_trajectory(run: Run) -> None:
    def vandal(*, outputs: list[Any], **kwargs: Any) -> dict[str, Any]:
        outputs[0]["content"] = "vandalised"
        outputs.clear()
        return {"key": "v", "score": 0}

    result = await run(
        app=lambda m, **kw: "x", user=["y"], max_turns=1, trajectory_evaluators=[vandal]
    )
    assert _contents(result["trajectory"]) == ["y", "x"]


# --------------------------------------------------------------------------- errors


class Boom(Exception):
    pass


def _raise_at(turn: int, value: Any) -> Callable[..., Any]:
    count = iter(range(1, 100))

    def fn(*args: Any, **kwargs: Any) -> Any:
        if next(count) == turn:
            raise Boom(f"exploded on call {turn}")
        return value

    return fn


@RUNNERS
@pytest.mark.parametrize(
    ("stage", "pattern"),
    [
        ("app", r"the app raised during turn 2: Boom: exploded on call 2"),
        ("user", r"the user raised during turn 2: Boom"),
        ("stopping_condition", r"the stopping condition raised during turn 2: Boom"),
    ],
)
async def test_exceptions_propagate_with_the_turn_number(
    run: Run, stage: str, pattern: str
) -> None:
    options: dict[str, Any] = {
        "app": lambda m, **kw: "ok",
        "user": lambda t, **kw: "hi",
        "max_turns": 3,
        "stopping_condition": lambda t, **kw: False,
    }
    options[stage] = _raise_at(2, False if stage == "stopping_condition" else "fine")
    with pytest.raises(SimulationError, match=pattern) as info:
        await run(**options)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value.__cause__, Boom)
    assert info.value.stage == stage and info.value.turn == 2


@RUNNERS
async def test_evaluator_exceptions_propagate(run: Run) -> None:
    def broken(**kwargs: Any) -> Any:
        raise Boom("judge down")

    with pytest.raises(
        SimulationError, match=r"trajectory_evaluators\[1\] \(broken\) raised after turn 2: Boom"
    ) as info:
        await run(
            app=lambda m, **kw: "ok",
            user=lambda t, **kw: "hi",
            max_turns=2,
            trajectory_evaluators=[_count_turns_evaluator, broken],
        )
    assert info.value.stage == "evaluator"
    assert isinstance(info.value.__cause__, Boom)


# --------------------------------------------------------------------------- async specifics


async def test_async_runner_accepts_mixed_sync_and_async_callables() -> None:
    """Bug B9c: the public release awaits stopping_condition and evaluators unconditionally."""

    async def app(message: Any, **kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"role": "assistant", "content": f"echo {message['content']}"}

    def user(trajectory: list[Any], *, turn_counter: int, **kwargs: Any) -> str:
        return f"u{turn_counter}"

    async def astop(trajectory: list[Any], *, turn_counter: int) -> bool:
        await asyncio.sleep(0)
        return turn_counter >= 2

    async def aeval(*, outputs: list[Any], **kwargs: Any) -> dict[str, Any]:
        return {"key": "async_len", "score": len(outputs), "comment": None, "metadata": None}

    result = await run_multiturn_simulation_async(
        app=app,
        user=user,
        stopping_condition=astop,
        trajectory_evaluators=[aeval, _count_turns_evaluator],
    )
    assert _contents(result["trajectory"]) == ["u0", "echo u0", "u1", "echo u1"]
    assert [(r["key"], r["score"]) for r in result["evaluator_results"]] == [
        ("async_len", 4),
        ("turns", 2),
    ]

    # sync app, async user, sync stopping condition
    async def auser(trajectory: list[Any], **kwargs: Any) -> str:
        return "hey"

    result = await run_multiturn_simulation_async(
        app=lambda m, **kw: "ok",
        user=auser,
        stopping_condition=lambda t, *, turn_counter: True,
    )
    assert _contents(result["trajectory"]) == ["hey", "ok"]


async def test_async_runner_accepts_awaitable_returning_callables() -> None:
    """Only awaitables are awaited, whatever kind of callable produced them."""

    class Handler:
        async def _reply(self) -> str:
            return "from a bound coroutine"

        def __call__(self, message: Any, **kwargs: Any) -> Any:
            return self._reply()  # a plain callable returning a coroutine

    result = await run_multiturn_simulation_async(app=Handler(), user=["hi"], max_turns=1)
    assert result["trajectory"][1]["content"] == "from a bound coroutine"


async def test_async_app_error_propagates_with_turn() -> None:
    async def app(message: Any, **kwargs: Any) -> str:
        raise Boom("async failure")

    with pytest.raises(SimulationError, match="the app raised during turn 1: Boom: async failure"):
        await run_multiturn_simulation_async(app=app, user=["hi"], max_turns=1)


def test_sync_runner_rejects_async_callables_without_leaking_coroutines() -> None:
    async def app(message: Any, **kwargs: Any) -> str:
        return "never"

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine was never awaited" would fail the test
        with pytest.raises(TypeError, match="run_multiturn_simulation_async"):
            run_multiturn_simulation(app=app, user=["hi"], max_turns=1)


# --------------------------------------------------------------------------- immutability


@RUNNERS
async def test_app_returned_objects_are_never_mutated(run: Run) -> None:
    reply = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    lc_reply = AIMessage(content="lc")
    replies = iter([reply, lc_reply])
    result = await run(app=lambda m, **kw: next(replies), user=lambda t, **kw: "q", max_turns=2)
    assert reply == {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    assert lc_reply.id is None
    # the returned trajectory shares nothing with the app's objects
    result["trajectory"][1]["content"][0]["text"] = "changed"
    assert reply["content"][0]["text"] == "hi"


@RUNNERS
async def test_callables_cannot_corrupt_the_recorded_trajectory(run: Run) -> None:
    def user(trajectory: list[Any], **kwargs: Any) -> str:
        for message in trajectory:
            message["content"] = "tampered"
        return "q"

    def app(message: Any, **kwargs: Any) -> str:
        message["content"] = "tampered too"
        return "a"

    result = await run(app=app, user=user, max_turns=2)
    assert _contents(result["trajectory"]) == ["q", "a", "q", "a"]


# --------------------------------------------------------------------------- tracing


@RUNNERS
async def test_langsmith_tracing_wraps_run_user_and_app(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langsmith

    import openevals.utils

    names: list[str] = []

    def fake_traceable(*, name: str, **kwargs: Any) -> Callable[[Any], Any]:
        def decorate(fn: Any) -> Any:
            names.append(name)
            return fn

        return decorate

    monkeypatch.setattr(langsmith, "traceable", fake_traceable)
    monkeypatch.setattr(openevals.utils, "_needs_langsmith", lambda: False)
    await run(app=lambda m, **kw: "a", user=lambda t, **kw: "u", max_turns=1)
    assert names == []

    monkeypatch.setattr(openevals.utils, "_needs_langsmith", lambda: True)
    await run(app=lambda m, **kw: "a", user=lambda t, **kw: "u", max_turns=2)
    assert names == ["multiturn_simulator", "simulated_user", "app", "simulated_user", "app"]


# --------------------------------------------------------------------------- properties

_ids = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))
_contents_st = st.sampled_from(["x", "y", "z"])
_reply = st.lists(st.tuples(_ids, _contents_st), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(replies=st.lists(_reply, min_size=1, max_size=5))
def test_trajectory_invariants(replies: list[list[tuple[str | None, str]]]) -> None:
    """Whatever ids an app reuses: ids stay unique, every turn keeps its final answer, and only
    exact re-sends of recorded messages are skipped."""
    scripted = [
        [
            {"role": "assistant", "content": c, **({"id": i} if i is not None else {})}
            for i, c in reply
        ]
        for reply in replies
    ]
    before = copy.deepcopy(scripted)
    seen_by_user: list[Any] = []
    turn = iter(range(100))

    def user(trajectory: list[Any], **kwargs: Any) -> str:
        if trajectory:
            seen_by_user.append(trajectory[-1])
        return "u"

    result = run_multiturn_simulation(
        app=lambda m, **kw: scripted[next(turn)], user=user, max_turns=len(scripted)
    )
    trajectory = result["trajectory"]
    ids = [m["id"] for m in trajectory]
    assert len(ids) == len(set(ids))
    assert scripted == before
    # split the trajectory into turns at the user messages
    turns: list[list[Any]] = []
    for message in trajectory:
        if message["role"] == "user":
            turns.append([])
        else:
            turns[-1].append(message)
    assert len(turns) == len(scripted)
    assert [[m["content"] for m in t] for t in turns] == _expected_turn_contents(replies)
    for recorded, reply in zip(turns, scripted, strict=True):
        assert recorded[-1]["content"] == reply[-1]["content"]  # the final answer is never lost
    assert [m["content"] for m in seen_by_user] == [r[-1]["content"] for r in scripted[:-1]]


def _expected_turn_contents(replies: list[list[tuple[str | None, str]]]) -> list[list[str]]:
    """The documented rule, stated independently: a non-final message is skipped iff a recorded
    message already has its id and its content; everything else is recorded (ids kept when free)."""
    recorded: dict[object, str] = {}
    out = []
    for reply in replies:
        kept = []
        for position, (msg_id, content) in enumerate(reply):
            final = position == len(reply) - 1
            if msg_id is not None and recorded.get(msg_id) == content and not final:
                continue
            key: object = msg_id if msg_id is not None and msg_id not in recorded else object()
            recorded[key] = content
            kept.append(content)
        out.append(kept)
    return out


def test_core_generator_is_shared_by_both_runners() -> None:
    """The sync and async runners drive one generator; it asks for calls and never runs them."""
    evaluators, thread_id = _validate(
        app=lambda m, **kw: "a",
        user=lambda t, **kw: "u",
        max_turns=1,
        stopping_condition=None,
        trajectory_evaluators=None,
        thread_id="t",
    )
    gen = _simulation(
        app=lambda m, **kw: "a",
        user=lambda t, **kw: "u",
        max_turns=1,
        stopping_condition=None,
        evaluators=evaluators,
        reference_outputs=None,
        thread_id=thread_id,
    )
    first = next(gen)
    assert (first.stage, first.turn, first.kwargs) == (
        "user",
        1,
        {"thread_id": "t", "turn_counter": 0},
    )
    second = gen.send("hello")
    assert second.stage == "app" and second.args[0]["content"] == "hello"
    with pytest.raises(StopIteration) as done:
        gen.send("world")
    assert _contents(done.value.value["trajectory"]) == ["hello", "world"]


@RUNNERS
async def test_traces_reach_a_langsmith_api(run: Run) -> None:
    """Real ``langsmith`` tracing against the fake LangSmith API on 127.0.0.1."""
    from langsmith import Client, tracing_context

    from tests.fakes.fake_langsmith import FakeLangSmith

    with FakeLangSmith() as server:
        client = Client(api_url=server.url, api_key="dummy-key")
        with tracing_context(client=client, enabled=True, project_name="sim-tests"):
            result = await run(
                app=lambda m, **kw: "a",
                user=lambda t, **kw: "u",
                max_turns=2,
                trajectory_evaluators=[_count_turns_evaluator],
            )
        client.flush()
        runs = server.posted_runs()
    assert result["evaluator_results"][0]["score"] == 2
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_name.setdefault(r.get("name", ""), []).append(r)
    (root,) = by_name["multiturn_simulator"]
    assert len(by_name["simulated_user"]) == 2 and len(by_name["app"]) == 2
    children = by_name["simulated_user"] + by_name["app"] + by_name["turns"]
    assert {str(r["parent_run_id"]) for r in children} == {str(root["id"])}


# --------------------------------------------------------------------------- cyclic / deep replies


@RUNNERS
async def test_cyclic_or_over_deep_replies_are_rejected_with_the_turn(run: Run) -> None:
    from openevals._structure import MAX_DEPTH

    content: Any = "deep"
    for _ in range(2_000):
        content = [content]
    loop: dict[str, Any] = {"role": "assistant", "content": "x"}
    loop["extra"] = [loop]

    def app(replies: list[Any]) -> Callable[..., Any]:
        def respond(message: Any, *, thread_id: str) -> Any:
            return replies

        return respond

    with pytest.raises(ValueError, match=rf"the app at turn 1 \(message 1\).*{MAX_DEPTH} levels"):
        await run(
            app=app(["fine", {"role": "assistant", "content": content}]), user=["hi"], max_turns=1
        )
    with pytest.raises(ValueError, match=r"the app at turn 1 \(message 0\).*contains itself"):
        await run(app=app([loop]), user=["hi"], max_turns=1)
    assert loop["extra"][0] is loop


def test_tool_call_arguments_deeper_than_json_can_walk_are_compared() -> None:
    # The de-duplication signature of a message reads its tool-call arguments, which arrive as
    # JSON text of any depth (messages themselves are refused past MAX_DEPTH levels).
    from openevals.simulators.multiturn import _signature

    deep = "[" * 3000 + "]" * 3000
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": deep}}],
    }
    assert _signature(message) == _signature(
        {**message, "tool_calls": [{"id": "2", "function": {"name": "f", "arguments": deep}}]}
    )
