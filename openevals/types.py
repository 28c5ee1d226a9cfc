"""Public types of the evaluator contract.

Everything here is importable without loading any LLM stack: LangChain message types are only
referenced for static type checkers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union, runtime_checkable

from typing_extensions import NotRequired, TypedDict

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, BaseMessageChunk

__all__ = [
    "ChatCompletion",
    "ChatCompletionMessage",
    "ChatCompletionsClient",
    "EvaluatorResult",
    "FewShotExample",
    "Messages",
    "ModelClient",
    "MultiturnSimulationResult",
    "RunnableLike",
    "ScoreType",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "ToolArgsMatchMode",
    "ToolArgsMatchOverrides",
    "TrajectoryMatchMode",
]

ScoreType = float | bool
"""A score: a boolean verdict or a number (usually in [0, 1])."""


class EvaluatorResult(TypedDict):
    """One piece of feedback produced by an evaluator.

    ``source_run_id`` is only present when an evaluator links its feedback to a traced run.
    """

    key: str
    score: ScoreType
    comment: str | None
    metadata: dict[str, Any] | None
    source_run_id: NotRequired[str | None]


class SimpleEvaluator(Protocol):
    """A synchronous evaluator: keyword-only ``inputs`` / ``outputs`` / ``reference_outputs``."""

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


class SimpleAsyncEvaluator(Protocol):
    """The asynchronous twin of :class:`SimpleEvaluator`."""

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult | list[EvaluatorResult]: ...


class ChatCompletionMessage(TypedDict):
    """An OpenAI-style chat message."""

    id: NotRequired[str | None]
    content: str | list[dict[str, Any]]
    role: str
    tool_calls: NotRequired[list[dict[str, Any]] | None]
    tool_call_id: NotRequired[str | None]
    name: NotRequired[str | None]


class ChatCompletion(TypedDict):
    """The part of an OpenAI chat-completion response that evaluators read."""

    choices: list[dict[str, Any]]


class FewShotExample(TypedDict, total=False):
    """An example shown to an LLM judge: what it saw, how it reasoned, and the score it gave."""

    inputs: Any
    outputs: Any
    reference_outputs: Any
    score: float | bool
    reasoning: str | None


Messages = Union[ChatCompletionMessage, "BaseMessage", "BaseMessageChunk"]


@runtime_checkable
class ChatCompletionsClient(Protocol):
    """Anything with an OpenAI-style ``create(**kwargs)`` for chat completions."""

    def create(self, **kwargs: Any) -> Any: ...


@runtime_checkable
class ModelClient(Protocol):
    """An OpenAI-like client: any object exposing ``.chat`` (``client.chat.completions.create``)."""

    @property
    def chat(self) -> Any: ...


@runtime_checkable
class RunnableLike(Protocol):
    """Deprecated: something with ``invoke`` and ``ainvoke``."""

    def invoke(self, inputs: Any, **kwargs: Any) -> Any: ...

    async def ainvoke(self, inputs: Any, **kwargs: Any) -> Any: ...


class MultiturnSimulationResult(TypedDict):
    """What a multiturn simulation returns."""

    evaluator_results: list[EvaluatorResult]
    trajectory: list[ChatCompletionMessage]


ToolArgsMatchMode = Literal["exact", "ignore", "subset", "superset"]
"""How tool-call arguments are compared in trajectory matching."""

TrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset"]
"""How two trajectories are compared."""

ToolArgsMatcher = Callable[[dict[str, Any], dict[str, Any]], bool]

ToolArgsMatchOverrides = dict[str, ToolArgsMatchMode | list[str] | ToolArgsMatcher]
"""Per-tool-name override: a mode, a list of (dotted) argument paths that must be equal, or a
comparator ``(output_args, reference_args) -> bool``."""

Scorer = Callable[..., Any]
AsyncScorer = Callable[..., Any | Awaitable[Any]]

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
