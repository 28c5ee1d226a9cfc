"""A simulated user backed by a chat model, with optional fixed opening lines.

The model plays the user: it gets the persona (``system``) and the conversation so far with the
roles flipped (the app's answers are shown to it as the "user" side, its own earlier lines as
"assistant"), so that its next completion is the user's next message. Only the outward-facing
part of the trajectory is shown: user messages and assistant messages without tool calls; tool
calls, tool results and system messages stay internal to the app.

The model is asked through the judge pipeline (:mod:`openevals._judge`) for a free-text answer:
the same retries of transient failures, malformed replies raised as ``JudgeServerError``, the
batch run's cache and admission control, and ``timeout=``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openevals._declare import async_twin
from openevals._drivers import adrive, drive
from openevals._judge.shell import attach_core
from openevals._messages import (
    convert_to_openai_message,
    normalize_to_openai_messages_list,
)
from openevals._repr import show
from openevals.types import ChatCompletionMessage

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["create_async_llm_simulated_user", "create_llm_simulated_user"]

_OPENING_REQUEST = (
    "Begin the conversation now: write the first message you would send, in character, as the "
    "person described above. Reply with that message only."
)
_FLIP = {"user": "assistant", "assistant": "user"}


def _user_message(content: Any, msg_id: str | None = None) -> ChatCompletionMessage:
    return {"role": "user", "content": content, "id": msg_id or str(uuid.uuid4())}


def _fixed_message(item: Any, index: int) -> ChatCompletionMessage:
    """Validate one fixed response at creation time; returns a fresh user message dict."""
    if isinstance(item, str):
        return {"role": "user", "content": item}
    try:
        message = convert_to_openai_message(item)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"fixed_responses[{index}] must be a string or a user message; {exc}"
        ) from None
    if message.get("role") != "user":
        raise ValueError(
            f"fixed_responses[{index}] has role {show(message.get('role'))}; the simulated user "
            "can only say 'user' messages"
        )
    out: ChatCompletionMessage = {"role": "user", "content": message.get("content", "")}
    if message.get("id"):
        out["id"] = message["id"]
    return out


def _request_prompt(*, inputs: Any = None, **_: Any) -> Any:
    """The judge prompt of the simulated user: the request :meth:`_SimulatedUserCore.request`
    built, passed through as the call's ``inputs``."""
    return inputs


def _is_internal_message(message: Mapping[str, Any]) -> bool:
    """True for a message the simulated user does not see: anything but a user message or an
    assistant message without tool calls (0.2.2's name; its current tests import it)."""
    role = message.get("role")
    return role not in _FLIP or bool(role == "assistant" and message.get("tool_calls"))


class _SimulatedUserCore:
    """Everything except the model call: fixed responses, the request, the returned message."""

    def __init__(
        self,
        *,
        system: str,
        model: str | None,
        client: BaseChatModel | None,
        fixed_responses: Sequence[Any] | None,
        timeout: float | None,
        is_async: bool,
    ) -> None:
        if not isinstance(system, str) or not system.strip():
            raise ValueError(
                f"`system` must be a non-empty persona prompt string; got {show(system)}"
            )
        if (model is None) == (client is None):
            raise ValueError(
                "pass exactly one of `model` (a 'provider:model' string such as "
                "'openai:gpt-4.1-mini') or `client` (a LangChain chat model); got "
                + ("both" if model is not None else "neither")
            )
        if fixed_responses is not None and (
            isinstance(fixed_responses, (str, bytes, Mapping))
            or not isinstance(fixed_responses, Sequence)
        ):
            raise TypeError(
                "`fixed_responses` must be a list of strings or user messages; got "
                f"{type(fixed_responses).__name__}"
            )
        self.system = system
        self.fixed = [_fixed_message(item, i) for i, item in enumerate(fixed_responses or [])]
        if client is not None and not callable(getattr(client, "invoke", None)):
            raise TypeError(
                "`client` must be a LangChain chat model (with invoke / ainvoke); got "
                f"{type(client).__name__}"
            )
        self.client = client
        from openevals._judge.options import FactorySpec
        from openevals._judge.shell import build_core

        name = "create_async_llm_simulated_user" if is_async else "create_llm_simulated_user"
        self.judge = build_core(
            FactorySpec(name, ("judge", "model", "timeout"), is_async=is_async),
            {"judge": client, "model": model, "timeout": timeout},
            run_name="simulated_user",
            prompt=_request_prompt,
            feedback_key="simulated_user",
        )

    def fixed_response(
        self, trajectory: Any, turn_counter: int | None
    ) -> ChatCompletionMessage | None:
        if turn_counter is None:
            turn_counter = sum(
                1 for m in normalize_to_openai_messages_list(trajectory) if m["role"] == "user"
            )
        if 0 <= turn_counter < len(self.fixed):
            fixed = self.fixed[turn_counter]
            return _user_message(fixed["content"], fixed.get("id"))
        return None

    def request(self, trajectory: Any) -> list[dict[str, Any]]:
        """The messages sent to the model: persona, then the visible conversation, roles flipped."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system}]
        for message in normalize_to_openai_messages_list(trajectory):
            if _is_internal_message(message):
                continue
            messages.append({"role": _FLIP[message["role"]], "content": message.get("content", "")})
        if len(messages) == 1:
            messages.append({"role": "user", "content": _OPENING_REQUEST})
        return messages

    def turn(
        self, trajectory: Any, turn_counter: int | None
    ) -> Generator[Any, Any, ChatCompletionMessage]:
        """The user's next message (sans-IO): a fixed response, else the model's free-text
        answer to :meth:`request`, asked as one judge step."""
        from openevals._judge.schema import TEXT_ANSWER
        from openevals._judge.shell import Ask, JudgeCall

        fixed = self.fixed_response(trajectory, turn_counter)
        if fixed is not None:
            return fixed
        (outcome,) = yield Ask((JudgeCall(inputs=self.request(trajectory), spec=TEXT_ANSWER),))
        return _user_message(outcome.value)


def create_llm_simulated_user(
    *,
    system: str,
    model: str | None = None,
    client: BaseChatModel | None = None,
    fixed_responses: Sequence[str | Any] | None = None,
    timeout: float | None = None,
) -> Callable[..., ChatCompletionMessage]:
    """A simulated user for :func:`~openevals.simulators.run_multiturn_simulation`.

    ``system`` is the persona prompt. Pass exactly one of ``model`` (``"provider:model"``) or
    ``client`` (a LangChain chat model). ``fixed_responses`` (strings or user messages) are used
    in order for the first turns; later turns are written by the model. With no fixed response and
    an empty conversation the model opens the conversation itself.

    The returned callable ``(trajectory, *, turn_counter=None, **kwargs)`` always returns
    ``{"role": "user", "content": ..., "id": ...}`` with a fresh id (fixed responses keep an id
    they were given). Without ``turn_counter`` the number of user messages in ``trajectory`` is
    used. ``timeout`` bounds each request to the model (as the judges' ``timeout=``). A model that
    keeps failing raises (``JudgeServerError``, ``JudgeTimeoutError``, the client's errors); an
    empty reply is asked again once, then raises ``JudgeOutputError``.
    """
    core = _SimulatedUserCore(
        system=system,
        model=model,
        client=client,
        fixed_responses=fixed_responses,
        timeout=timeout,
        is_async=False,
    )

    def simulated_user(
        trajectory: Any, *, turn_counter: int | None = None, **kwargs: Any
    ) -> ChatCompletionMessage:
        from openevals._judge.shell import ask

        return drive(core.turn(trajectory, turn_counter), lambda step: ask(core.judge, step))

    attach_core(simulated_user, core.judge)
    return simulated_user


def _async_user(options: dict[str, Any]) -> Callable[..., Awaitable[ChatCompletionMessage]]:
    """The async simulated user of ``create_async_llm_simulated_user(**options)``."""
    core = _SimulatedUserCore(**options, is_async=True)

    async def simulated_user(
        trajectory: Any, *, turn_counter: int | None = None, **kwargs: Any
    ) -> ChatCompletionMessage:
        from openevals._judge.shell import aask

        turn = core.turn(trajectory, turn_counter)
        return await adrive(turn, lambda step: aask(core.judge, step))

    attach_core(simulated_user, core.judge)
    return simulated_user


create_async_llm_simulated_user = async_twin(
    create_llm_simulated_user,
    _async_user,
    returns="Callable[..., Awaitable[ChatCompletionMessage]]",
    note="the model is called with ``ainvoke``",
)
