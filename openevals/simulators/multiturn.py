"""Multiturn simulation: a (simulated) user and your app take turns; evaluators judge the result.

One core drives both runners: :func:`_simulation` is a generator that yields each call it needs
(the user, the app, the stopping condition, an evaluator) and receives the call's result. The
package's driver pair (:mod:`openevals._drivers`) runs it: the sync runner performs the calls
directly; the async runner awaits whatever is awaitable. All the
bookkeeping — message coercion, ids, de-duplication, stopping, result collection — lives in the
generator and its helpers.

Trajectory rules
----------------
* Replies may be OpenAI-style dicts, LangChain messages, OpenAI SDK message objects or plain
  strings (a string from the user becomes a ``user`` message, from the app an ``assistant``
  message). The app may return several messages for one turn: a list, or ``{"messages": [...]}``
  (as LangGraph agents return their state). The other side then sees the last one.
* Every recorded message is a fresh OpenAI-style dict with an ``id``; one is generated (uuid4)
  when the message has none.
* A returned message whose ``id`` AND content (role, content, tool calls, tool_call_id) equal a
  message already in the trajectory is history being re-sent (e.g. a LangGraph app returning its
  whole state) and is skipped — except the last message of a reply, which is that turn's answer
  and is always recorded.
* A returned message that reuses an id already in the trajectory but is a different message (fake
  or cached models repeat response ids), or that is the last message of a reply and identical to an
  earlier one (an app answering the same text twice), is recorded with a fresh id. No turn is ever
  dropped.

Errors
------
An exception raised by the app, the user, the stopping condition or an evaluator is re-raised as
:class:`SimulationError` (a ``RuntimeError``) whose message names the stage and the turn; the
original exception is its ``__cause__``. Invalid arguments and invalid replies raise
``ValueError`` / ``TypeError`` naming the turn; so does a reply message that contains itself or
is nested more than ``MAX_DEPTH`` (200) levels deep (a conversation is handed to judges and
evaluators that serialise it, so such a message is rejected when it arrives).
"""

from __future__ import annotations

import copy
import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from openevals._declare import async_entry
from openevals._drivers import adrive, drive
from openevals._messages import convert_to_openai_message, is_langchain_message, to_json_text
from openevals._repr import show
from openevals._structure import MAX_DEPTH, check, load_json
from openevals.types import ChatCompletionMessage, EvaluatorResult, MultiturnSimulationResult

__all__ = [
    "SimulationError",
    "run_multiturn_simulation",
    "run_multiturn_simulation_async",
]

T = TypeVar("T")


class SimulationError(RuntimeError):
    """A callable taking part in a simulation raised; ``__cause__`` holds the original exception.

    ``stage`` is ``"user"``, ``"app"``, ``"stopping_condition"`` or ``"evaluator"``; ``turn`` is
    the 1-based turn during (or, for evaluators, after) which it happened.
    """

    def __init__(self, message: str, *, stage: str, turn: int) -> None:
        super().__init__(message)
        self.stage = stage
        self.turn = turn


@dataclass
class _Call:
    """One call the core asks its driver to make."""

    stage: str
    turn: int
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    trace_name: str | None = None
    label: str = ""

    def describe(self) -> str:
        return self.label or self.stage


# --------------------------------------------------------------------------- validation


def _callable_name(fn: Any) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _validate(
    *,
    app: Any,
    user: Any,
    max_turns: Any,
    stopping_condition: Any,
    trajectory_evaluators: Any,
    thread_id: Any,
) -> tuple[list[Callable[..., Any]], str]:
    if not callable(app):
        raise TypeError(
            f"`app` must be a callable (message, *, thread_id) -> reply; got {show(app)}"
        )
    if not callable(user) and (
        isinstance(user, (str, bytes, Mapping)) or not isinstance(user, Sequence)
    ):
        raise TypeError(
            "`user` must be a callable (trajectory, *, thread_id, turn_counter) -> message, or a "
            f"list of fixed responses (strings or messages); got {type(user).__name__}"
        )
    if max_turns is None and stopping_condition is None:
        raise ValueError(
            "pass `max_turns`, `stopping_condition` or both; otherwise the simulation never ends"
        )
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise ValueError(f"`max_turns` must be a positive integer or None; got {show(max_turns)}")
    if stopping_condition is not None and not callable(stopping_condition):
        raise TypeError(
            "`stopping_condition` must be a callable (trajectory, *, turn_counter) -> bool; got "
            f"{type(stopping_condition).__name__}"
        )
    evaluators: list[Callable[..., Any]] = []
    if trajectory_evaluators is not None:
        if callable(trajectory_evaluators) or not isinstance(trajectory_evaluators, Sequence):
            raise TypeError(
                "`trajectory_evaluators` must be a list of evaluators; got "
                f"{type(trajectory_evaluators).__name__}"
            )
        for i, ev in enumerate(trajectory_evaluators):
            if not callable(ev):
                raise TypeError(
                    f"trajectory_evaluators[{i}] must be a callable evaluator; got "
                    f"{type(ev).__name__}"
                )
            evaluators.append(ev)
    if thread_id is None:
        thread_id = str(uuid.uuid4())
    elif not isinstance(thread_id, str):
        raise TypeError(f"`thread_id` must be a str or None; got {type(thread_id).__name__}")
    return evaluators, thread_id


# --------------------------------------------------------------------------- messages


def _coerce_one(item: Any, *, default_role: str, where: str, name: str) -> dict[str, Any]:
    """One reply item as a new OpenAI-style dict that shares nothing with the caller's object.

    A message that contains itself, or is nested more than ``MAX_DEPTH`` levels deep, raises
    ``ValueError`` naming ``where`` and the path (``name`` is the path's root).
    """
    if isinstance(item, str):
        return {"role": default_role, "content": item}
    try:
        if not isinstance(item, Mapping) and not is_langchain_message(item):
            dump = getattr(item, "model_dump", None)  # e.g. openai's ChatCompletionMessage
            if callable(dump):
                item = dump(exclude_none=True)
        check(item, name, max_depth=MAX_DEPTH)
        message = convert_to_openai_message(item)
        return copy.deepcopy(message)
    except RecursionError:  # an object whose own conversion recurses (e.g. a LangChain message)
        raise ValueError(
            f"{where}: the message is nested too deeply to record; messages may nest at most "
            f"{MAX_DEPTH} levels"
        ) from None
    except (TypeError, ValueError) as exc:
        error = TypeError if isinstance(exc, TypeError) else ValueError
        raise error(f"{where}: {exc}") from exc


def _coerce_reply(reply: Any, *, default_role: str, where: str) -> list[dict[str, Any]]:
    """A user/app reply as a non-empty list of messages."""
    if isinstance(reply, Mapping) and "messages" in reply and "role" not in reply:
        items = reply["messages"]
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise TypeError(
                f"{where} returned {{'messages': ...}} holding {type(items).__name__}; expected a "
                "list of messages"
            )
    elif isinstance(reply, (list, tuple)):
        items = reply
    elif reply is None:
        raise ValueError(
            f"{where} returned None; return a message (dict with 'role' and 'content', a "
            "LangChain message or a string), a list of messages or {'messages': [...]}"
        )
    else:
        items = [reply]
    if len(items) == 0:
        raise ValueError(f"{where} returned no messages")
    return [
        _coerce_one(
            item,
            default_role=default_role,
            where=f"{where} (message {i})",
            name=f"{'user' if default_role == 'user' else 'app'}_reply[{i}]",
        )
        for i, item in enumerate(items)
    ]


def _sorted_json(value: Any, name: str) -> str:
    """``value`` as JSON with sorted keys (other objects as their ``str``), at any depth."""
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except RecursionError:
        return to_json_text(value, sort_keys=True, name=name)


def _canonical_args(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return _sorted_json(load_json(arguments), "a tool call's arguments")
        except ValueError:
            return arguments
    return _sorted_json(arguments, "a tool call's arguments")


def _signature(message: Mapping[str, Any]) -> str:
    """What makes two messages "the same message", ids aside."""
    calls = [
        (
            (c.get("function") or {}).get("name"),
            _canonical_args((c.get("function") or {}).get("arguments")),
        )
        for c in message.get("tool_calls") or []
    ]
    return _sorted_json(
        [message.get("role"), message.get("content"), calls, message.get("tool_call_id")],
        "a message",
    )


class _Trajectory:
    """The recorded messages plus an index by id, applying the de-duplication rules."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._by_id: dict[str, str] = {}  # id -> signature

    def add_reply(self, reply: list[dict[str, Any]]) -> dict[str, Any]:
        """Record one side's reply; returns the message the other side gets to see."""
        last_index = len(reply) - 1
        for i, message in enumerate(reply):
            msg_id = message.get("id")
            known = self._by_id.get(msg_id) if isinstance(msg_id, str) else None
            if known is not None:
                if known == _signature(message) and i != last_index:
                    continue  # history re-sent by the app
                message = {**message, "id": str(uuid.uuid4())}
            elif not isinstance(msg_id, str) or not msg_id:
                message = {**message, "id": str(uuid.uuid4())}
            self.messages.append(message)
            self._by_id[message["id"]] = _signature(message)
        return self.messages[-1]

    def snapshot(self) -> list[ChatCompletionMessage]:
        return cast(list[ChatCompletionMessage], copy.deepcopy(self.messages))


# --------------------------------------------------------------------------- the core


def _simulation(
    *,
    app: Callable[..., Any],
    user: Any,
    max_turns: int | None,
    stopping_condition: Callable[..., Any] | None,
    evaluators: list[Callable[..., Any]],
    reference_outputs: Any,
    thread_id: str,
) -> Generator[_Call, Any, MultiturnSimulationResult]:
    trajectory = _Trajectory()
    fixed_user = None if callable(user) else list(user)
    turn = 0  # completed turns == the `turn_counter` the callables receive
    while max_turns is None or turn < max_turns:
        number = turn + 1
        if fixed_user is not None:
            if turn >= len(fixed_user):
                raise ValueError(
                    f"turn {number} needs a user message but the `user` list has only "
                    f"{len(fixed_user)} response(s); add responses, lower `max_turns` or use a "
                    "stopping_condition"
                )
            user_reply: Any = fixed_user[turn]
        else:
            user_reply = yield _Call(
                "user",
                number,
                user,
                (trajectory.snapshot(),),
                {"thread_id": thread_id, "turn_counter": turn},
                trace_name="simulated_user",
            )
        user_message = trajectory.add_reply(
            _coerce_reply(user_reply, default_role="user", where=f"the user at turn {number}")
        )
        app_reply = yield _Call(
            "app",
            number,
            app,
            (copy.deepcopy(user_message),),
            {"thread_id": thread_id},
            trace_name="app",
        )
        trajectory.add_reply(
            _coerce_reply(app_reply, default_role="assistant", where=f"the app at turn {number}")
        )
        turn += 1
        if stopping_condition is not None:
            stop = yield _Call(
                "stopping_condition",
                number,
                stopping_condition,
                (trajectory.snapshot(),),
                {"turn_counter": turn},
            )
            if stop:
                break

    results: list[EvaluatorResult] = []
    extra = {} if reference_outputs is None else {"reference_outputs": reference_outputs}
    for i, evaluator in enumerate(evaluators):
        label = f"trajectory_evaluators[{i}] ({_callable_name(evaluator)})"
        result = yield _Call(
            "evaluator",
            turn,
            evaluator,
            (),
            {"outputs": trajectory.snapshot(), **extra},
            label=label,
        )
        if isinstance(result, list):
            results.extend(result)
        elif isinstance(result, Mapping):
            results.append(cast(EvaluatorResult, result))
        else:
            raise TypeError(
                f"{label} returned {type(result).__name__}; an evaluator must return a result dict "
                "or a list of result dicts"
            )
    return {"trajectory": trajectory.snapshot(), "evaluator_results": results}


def _failure(call: _Call, exc: BaseException) -> SimulationError:
    if call.stage == "evaluator":
        where = f"{call.describe()} raised after turn {call.turn}"
    else:
        where = f"the {call.describe().replace('_', ' ')} raised during turn {call.turn}"
    return SimulationError(
        f"{where}: {type(exc).__name__}: {exc}", stage=call.stage, turn=call.turn
    )


def _target(call: _Call, traced: bool) -> Callable[..., Any]:
    if traced and call.trace_name is not None:
        from langsmith import traceable

        return cast(Callable[..., Any], traceable(name=call.trace_name)(call.fn))
    return call.fn


def _perform(traced: bool) -> Callable[[_Call], Any]:
    """Make one call the core asks for, blocking (the sync runner's I/O)."""

    def perform(call: _Call) -> Any:
        try:
            value = _target(call, traced)(*call.args, **call.kwargs)
        except Exception as exc:
            raise _failure(call, exc) from exc
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()
            raise TypeError(
                f"the {call.describe().replace('_', ' ')} returned an awaitable at turn "
                f"{call.turn}; use run_multiturn_simulation_async for async callables"
            )
        return value

    return perform


def _aperform(traced: bool) -> Callable[[_Call], Awaitable[Any]]:
    """Async twin of :func:`_perform`: awaits what the call returns when it is awaitable."""

    async def perform(call: _Call) -> Any:
        try:
            value = _target(call, traced)(*call.args, **call.kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            raise _failure(call, exc) from exc
        return value

    return perform


def _planned(
    arguments: dict[str, Any],
) -> tuple[Generator[_Call, Any, MultiturnSimulationResult], bool]:
    """Check a public runner's arguments (by name) and build the simulation it drives;
    also whether its calls are traced (LangSmith tracing or a LangSmith test case is on)."""
    from openevals.utils import _needs_langsmith

    options = dict(arguments)
    reference_outputs = options.pop("reference_outputs")
    evaluators, options["thread_id"] = _validate(**options)
    del options["trajectory_evaluators"]  # checked, as `evaluators`
    simulation = _simulation(evaluators=evaluators, reference_outputs=reference_outputs, **options)
    return simulation, _needs_langsmith()


def _traced(run: Callable[[], T], traced: bool) -> Callable[[], T]:
    """``run`` as the ``multiturn_simulator`` LangSmith run when tracing is on, else unchanged."""
    if traced:
        from langsmith import traceable

        return cast(Callable[[], T], traceable(name="multiturn_simulator")(run))
    return run


# --------------------------------------------------------------------------- public runners


def run_multiturn_simulation(
    *,
    app: Callable[..., Any],
    user: Callable[..., Any] | Sequence[Any],
    max_turns: int | None = None,
    trajectory_evaluators: Sequence[Callable[..., Any]] | None = None,
    stopping_condition: Callable[..., Any] | None = None,
    reference_outputs: Any = None,
    thread_id: str | None = None,
) -> MultiturnSimulationResult:
    """Simulate a conversation between ``user`` and ``app``, then run ``trajectory_evaluators``.

    Each turn: ``user(trajectory, thread_id=..., turn_counter=n)`` (or the next entry of a list of
    fixed responses) produces a message; ``app(that_message, thread_id=...)`` replies. The run
    stops after ``max_turns`` turns or when ``stopping_condition(trajectory, turn_counter=n)`` is
    truthy (checked after each app reply). Every evaluator is then called with
    ``outputs=trajectory`` (and ``reference_outputs`` when given).

    Returns ``{"trajectory": [...], "evaluator_results": [...]}``. See the module documentation
    for the trajectory and error rules.
    """
    simulation, traced = _planned(
        dict(
            app=app,
            user=user,
            max_turns=max_turns,
            trajectory_evaluators=trajectory_evaluators,
            stopping_condition=stopping_condition,
            reference_outputs=reference_outputs,
            thread_id=thread_id,
        )
    )

    def run() -> MultiturnSimulationResult:
        return drive(simulation, _perform(traced))

    return _traced(run, traced)()


async def _simulate_async(**arguments: Any) -> MultiturnSimulationResult:
    """The body of ``run_multiturn_simulation_async``: its arguments by name."""
    simulation, traced = _planned(arguments)

    async def run() -> MultiturnSimulationResult:
        return await adrive(simulation, _aperform(traced))

    return await _traced(run, traced)()


run_multiturn_simulation_async = async_entry(
    run_multiturn_simulation,
    _simulate_async,
    name="run_multiturn_simulation_async",
    doc="""Async twin of :func:`run_multiturn_simulation`.

    ``app``, ``user``, ``stopping_condition`` and the evaluators may each be sync or async; only
    what returns an awaitable is awaited.
    """,
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
