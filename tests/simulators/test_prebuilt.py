"""create_llm_simulated_user / create_async_llm_simulated_user against the fake OpenAI server."""

from __future__ import annotations

import copy
import inspect
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from openevals.simulators import (
    create_async_llm_simulated_user,
    create_llm_simulated_user,
    run_multiturn_simulation,
    run_multiturn_simulation_async,
)
from openevals.testing import FakeOpenAIServer, chat_model, openai_client

PERSONA = "You are an angry and belligerent customer who wants a refund."

Factory = Callable[..., Callable[..., Any]]


async def _call(user: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    out = user(*args, **kwargs)
    if inspect.isawaitable(out):
        out = await out
    return out


FACTORIES = pytest.mark.parametrize(
    "factory",
    [create_llm_simulated_user, create_async_llm_simulated_user],
    ids=["sync", "async"],
)


pytestmark = pytest.mark.usefixtures("tracing_off")


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- request shape


@FACTORIES
async def test_flips_roles_hides_internal_messages_and_prepends_system(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.queue_chat("I still want my refund!")
    user = factory(system=PERSONA, client=chat_model(fake_openai))
    trajectory: list[Any] = [
        {"role": "system", "content": "app-internal system prompt"},
        {"role": "user", "content": "I want a refund."},
        AIMessage(content="", tool_calls=[{"name": "check_policy", "args": {}, "id": "c1"}]),
        ToolMessage(content="no refunds", tool_call_id="c1"),
        {"role": "assistant", "content": "Sorry, refunds are not possible."},
    ]
    before = copy.deepcopy(trajectory)
    message = await _call(user, trajectory, turn_counter=1)

    assert message["role"] == "user"
    assert message["content"] == "I still want my refund!"
    assert _is_uuid(message["id"])
    body = fake_openai.last_chat_body
    assert body["model"] == "gpt-test"
    assert body["messages"] == [
        {"role": "system", "content": PERSONA},
        {"role": "assistant", "content": "I want a refund."},
        {"role": "user", "content": "Sorry, refunds are not possible."},
    ]
    assert trajectory == before


@FACTORIES
async def test_opens_the_conversation_when_nothing_is_visible(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.queue_chat("My car broke down. Refund me now!")
    user = factory(system=PERSONA, client=chat_model(fake_openai))
    message = await _call(user, [], turn_counter=0)
    assert message["content"] == "My car broke down. Refund me now!"
    sent = fake_openai.last_chat_body["messages"]
    assert len(sent) == 2
    assert sent[0] == {"role": "system", "content": PERSONA}
    assert sent[1]["role"] == "user" and "first message" in sent[1]["content"]


@FACTORIES
async def test_langchain_message_trajectories_are_accepted(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.queue_chat("ok then")
    user = factory(system=PERSONA, client=chat_model(fake_openai))
    await _call(
        user,
        [SystemMessage("sys"), HumanMessage("hi"), AIMessage("hello, how can I help?")],
        turn_counter=1,
    )
    assert fake_openai.last_chat_body["messages"][1:] == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "hello, how can I help?"},
    ]


@FACTORIES
async def test_never_returns_the_model_response_id(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.set_default_chat("again")
    user = factory(system=PERSONA, client=chat_model(fake_openai))
    first = await _call(user, [], turn_counter=0)
    second = await _call(user, [], turn_counter=0)
    assert not first["id"].startswith("chatcmpl") and _is_uuid(first["id"])
    assert first["id"] != second["id"]
    assert set(first) == {"role", "content", "id"}


@FACTORIES
async def test_empty_model_answer_is_an_error(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    """An empty reply is asked again once (the judge pipeline's repair); still empty, it raises
    JudgeOutputError (a ValueError), never an empty user turn."""
    from openevals.llm import JudgeOutputError

    fake_openai.set_default_chat("   ")
    user = factory(system=PERSONA, client=chat_model(fake_openai))
    with pytest.raises(JudgeOutputError, match="the reply is empty"):
        await _call(user, [], turn_counter=0)
    assert len(fake_openai.chat_requests) == 2
    fake_openai.reset()
    fake_openai.queue_chat("")
    fake_openai.queue_chat("Fine, then give me store credit.")
    assert (await _call(user, [], turn_counter=0))["content"] == "Fine, then give me store credit."


@FACTORIES
@pytest.mark.usefixtures("openai_env")
async def test_the_model_call_gets_the_judge_pipeline(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    """A model string: the plain request (no response format, no tools), a rate limit retried,
    a hung server bounded by ``timeout=``."""
    from openevals._judge.core import RetryPolicy
    from openevals._judge.shell import judge_core
    from openevals.llm import JudgeTimeoutError

    fake_openai.queue_chat(status=429, headers={"retry-after-ms": "1"})
    fake_openai.queue_chat("Where is my refund?")
    user = factory(system=PERSONA, model="openai:gpt-test", timeout=0.3)
    assert (await _call(user, [], turn_counter=0))["content"] == "Where is my refund?"
    first, second = fake_openai.chat_requests
    assert first == second and set(second) == {"model", "messages"}
    assert second["messages"][0] == {"role": "system", "content": PERSONA}

    fake_openai.set_default_chat(hang=True)
    user = factory(system=PERSONA, model="openai:gpt-test", timeout=0.3)
    judge_core(user).retry = RetryPolicy(max_retries=0)  # retries would only multiply the wait
    with pytest.raises(JudgeTimeoutError) as info:
        await _call(user, [], turn_counter=0)
    assert info.value.timeout == 0.3


# --------------------------------------------------------------------------- fixed responses


@FACTORIES
async def test_fixed_responses_first_then_the_model(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    fixed: list[Any] = [
        {"role": "user", "content": "I demand a refund for my bike!"},
        "I closed my tab, repeat what you just said!",
    ]
    before = copy.deepcopy(fixed)
    fake_openai.queue_chat("This is outrageous.")
    user = factory(system=PERSONA, client=chat_model(fake_openai), fixed_responses=fixed)

    first = await _call(user, [], turn_counter=0)
    second = await _call(user, [], turn_counter=1)
    assert fake_openai.chat_requests == []
    assert [first["content"], second["content"]] == [
        "I demand a refund for my bike!",
        "I closed my tab, repeat what you just said!",
    ]
    assert _is_uuid(first["id"]) and _is_uuid(second["id"])
    third = await _call(
        user,
        [
            first,
            {"role": "assistant", "content": "a"},
            second,
            {"role": "assistant", "content": "b"},
        ],
        turn_counter=2,
    )
    assert third["content"] == "This is outrageous."
    assert len(fake_openai.chat_requests) == 1
    assert fixed == before


@FACTORIES
async def test_fixed_response_ids_are_kept_and_turn_counter_defaults_to_user_count(
    factory: Factory, fake_openai: FakeOpenAIServer
) -> None:
    user = factory(
        system=PERSONA,
        client=chat_model(fake_openai),
        fixed_responses=[HumanMessage("one", id="fixed-1"), "two"],
    )
    first = await _call(user, [])
    assert first == {"role": "user", "content": "one", "id": "fixed-1"}
    second = await _call(user, [first, {"role": "assistant", "content": "x"}])
    assert second["content"] == "two"
    assert fake_openai.chat_requests == []


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({}, ValueError, "exactly one of `model`.*neither"),
        ({"model": "openai:gpt-test", "client": "x"}, ValueError, "exactly one.*both"),
        ({"client": object()}, TypeError, "`client` must be a LangChain chat model"),
        ({"model": "openai:gpt-test", "system": ""}, ValueError, "`system`"),
        ({"model": "openai:gpt-test", "fixed_responses": "hi"}, TypeError, "fixed_responses"),
        (
            {"model": "openai:gpt-test", "fixed_responses": ["ok", AIMessage("no")]},
            ValueError,
            r"fixed_responses\[1\] has role 'assistant'",
        ),
        (
            {"model": "openai:gpt-test", "fixed_responses": [42]},
            TypeError,
            r"fixed_responses\[0\]",
        ),
    ],
)
def test_invalid_arguments(
    kwargs: dict[str, Any], error: type[Exception], pattern: str, openai_env: FakeOpenAIServer
) -> None:
    options = {"system": PERSONA, **kwargs}
    for factory in (create_llm_simulated_user, create_async_llm_simulated_user):
        with pytest.raises(error, match=pattern):
            factory(**options)


def test_factories_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        create_llm_simulated_user(PERSONA, "openai:gpt-test")  # type: ignore[misc]


# --------------------------------------------------------------------------- in a simulation


def test_readme_prebuilt_user_with_fixed_responses_in_a_simulation(
    openai_env: FakeOpenAIServer,
) -> None:
    """README: an OpenAI-client app, a model-string simulated user with fixed responses, and an
    LLM-as-judge trajectory evaluator, all served by the fake server."""
    from openevals.llm import create_llm_as_judge

    server = openai_env
    client = openai_client(server)
    history: dict[str, list[Any]] = {}
    counter = iter(range(100))

    def responder(body: dict[str, Any]) -> Any:
        if body.get("tools") or body.get("response_format"):
            return {"json": {"reasoning": "The user stayed angry.", "score": False}}
        if body["messages"][0]["content"] == PERSONA:
            return f"simulated user line {next(counter)}"
        return f"agent answer {len(body['messages'])}"

    server.set_responder(responder)

    def app(inputs: Any, *, thread_id: str, **kwargs: Any) -> Any:
        history.setdefault(thread_id, []).append(inputs)
        res = client.chat.completions.create(
            model="gpt-test",
            messages=[
                {"role": "system", "content": "You are a patient agent"},
                *history[thread_id],
            ],
        )
        message = res.choices[0].message
        history[thread_id].append(message)
        return message

    user = create_llm_simulated_user(
        system=PERSONA,
        model="openai:gpt-test",
        fixed_responses=[
            {"role": "user", "content": "I demand a refund for my bike!"},
            {"role": "user", "content": "Repeat what you just said!"},
        ],
    )
    judge = create_llm_as_judge(
        model="openai:gpt-test",
        prompt="Based on the below conversation, was the user satisfied?\n{outputs}",
        feedback_key="satisfaction",
    )
    result = run_multiturn_simulation(
        app=app, user=user, trajectory_evaluators=[judge], max_turns=3, thread_id="t1"
    )
    trajectory = result["trajectory"]
    assert [m["role"] for m in trajectory] == ["user", "assistant"] * 3
    assert [m["content"] for m in trajectory[::2]] == [
        "I demand a refund for my bike!",
        "Repeat what you just said!",
        "simulated user line 0",
    ]
    assert [m["content"] for m in trajectory[1::2]] == [
        "agent answer 2",
        "agent answer 4",
        "agent answer 6",
    ]
    assert len({m["id"] for m in trajectory}) == 6
    [judged] = result["evaluator_results"]
    assert (judged["key"], judged["score"], judged["comment"]) == (
        "satisfaction",
        False,
        "The user stayed angry.",
    )
    # the simulated user's one model call: persona + flipped visible conversation
    user_request = next(b for b in server.chat_requests if b["messages"][0]["content"] == PERSONA)
    assert user_request["messages"][1:] == [
        {"role": "assistant", "content": "I demand a refund for my bike!"},
        {"role": "user", "content": "agent answer 2"},
        {"role": "assistant", "content": "Repeat what you just said!"},
        {"role": "user", "content": "agent answer 4"},
    ]
    # the judge saw the whole trajectory
    judge_request = server.chat_requests[-1]
    judge_text = str(judge_request["messages"])
    assert "simulated user line 0" in judge_text and "agent answer 6" in judge_text


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_model_repeating_its_response_id_loses_no_turn(mode: str) -> None:
    """Bug B9b: with the public release, turns after the first vanish from the trajectory."""
    replies = [AIMessage(content=f"user says {i}", id="resp-id") for i in range(3)]
    model = GenericFakeChatModel(messages=iter(replies))
    app_replies = iter(range(3))

    def app(message: Any, **kwargs: Any) -> Any:
        return AIMessage(content=f"app says {next(app_replies)}", id="app-resp-id")

    if mode == "sync":
        user = create_llm_simulated_user(system=PERSONA, client=model)
        result = run_multiturn_simulation(app=app, user=user, max_turns=3)
    else:
        auser = create_async_llm_simulated_user(system=PERSONA, client=model)
        result = await run_multiturn_simulation_async(app=app, user=auser, max_turns=3)
    assert [m["content"] for m in result["trajectory"]] == [
        "user says 0",
        "app says 0",
        "user says 1",
        "app says 1",
        "user says 2",
        "app says 2",
    ]
    assert len({m["id"] for m in result["trajectory"]}) == 6


async def test_async_user_in_async_simulation_through_the_fake_server(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.set_responder(
        lambda body: f"user turn {sum(1 for m in body['messages'] if m['role'] == 'user')}"
    )
    user = create_async_llm_simulated_user(
        system=PERSONA, client=chat_model(fake_openai), fixed_responses=["hello"]
    )

    async def app(message: Any, **kwargs: Any) -> str:
        return f"re: {message['content']}"

    result = await run_multiturn_simulation_async(
        app=app,
        user=user,
        max_turns=10,
        stopping_condition=lambda t, *, turn_counter: "user turn 2" in t[-2]["content"],
    )
    assert [m["content"] for m in result["trajectory"]] == [
        "hello",
        "re: hello",
        "user turn 1",
        "re: user turn 1",
        "user turn 2",
        "re: user turn 2",
    ]
    assert len(fake_openai.chat_requests) == 2
