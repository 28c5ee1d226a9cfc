"""The pieces of the judge's sans-IO flow: the steps it yields, its retry policy and its outcome."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from openevals._judge.backends import Answer
from openevals._judge.errors import retry_after_seconds
from openevals._judge.schema import SchemaSpec


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter; ``Retry-After`` from the server wins when present."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, exc: BaseException) -> float:
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            return min(hinted, self.max_delay)
        ceiling = min(self.max_delay, self.initial_delay * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class JudgeCall:
    """One question to the judge: the call's arguments as the prompt sees them, and the output
    schema when it differs from the core's own."""

    inputs: Any = None
    outputs: Any = None
    reference_outputs: Any = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    spec: SchemaSpec | None = None


@dataclass(frozen=True)
class Send:
    """Perform this prepared request with the backend; the flow receives the response."""

    payload: Any


@dataclass(frozen=True)
class Sleep:
    """Wait this many seconds (backoff)."""

    seconds: float


@dataclass(frozen=True)
class Resolve:
    """Await this awaitable (an async prompt function's messages); the flow receives its value."""

    awaitable: Awaitable[Any]


@dataclass(frozen=True)
class Fanout:
    """Run these independent flows (one judge sample each); the flow receives their results."""

    flows: tuple[Generator[Any, Any, Any], ...]


Step = Send | Sleep | Resolve | Fanout


@dataclass
class Outcome:
    """A judge call's validated answer(s).

    ``value`` is the first sample's validated value; ``values``/``answers`` hold every sample's
    (one unless ``samples`` > 1).
    """

    value: Any
    usage: dict[str, int] | None
    rung: str
    values: list[Any] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)


Conversation = Generator[Step, Any, Outcome]


def add_usage(total: dict[str, int] | None, more: dict[str, int] | None) -> dict[str, int] | None:
    if more is None:
        return total
    if total is None:
        return dict(more)
    return {k: total.get(k, 0) + more.get(k, 0) for k in set(total) | set(more)}


def merge_outcomes(outcomes: list[Outcome]) -> Outcome:
    usage: dict[str, int] | None = None
    for outcome in outcomes:
        usage = add_usage(usage, outcome.usage)
    values = [v for o in outcomes for v in o.values]
    answers = [a for o in outcomes for a in o.answers]
    return Outcome(values[0], usage, outcomes[0].rung, values, answers)
