"""Public types of the JSON match evaluator (re-exported by :mod:`openevals.json.match`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from typing_extensions import TypedDict

from openevals.types import EvaluatorResult

Aggregator = Literal["average", "all"]
ListMatchMode = Literal["same_elements", "subset", "superset", "ordered"]

EMPTY_RECORD_KEY = "__openevals_empty_record"
"""Key under which an unpaired element without keys is reported (score 0)."""

Score = int | float | bool


class RubricVerdict(TypedDict):
    """What a rubric scorer returns for one key: a score in [0, 1] (or a bool) and reasoning."""

    score: Score
    reasoning: str | None


@dataclass(frozen=True)
class RubricRequest:
    """All rubric keys of one element pair, to be graded by the judge in one batch.

    ``outputs`` holds the output values of the rubric keys to grade (only keys present in the
    output element), ``reference_outputs`` the reference values of those keys where the
    reference element has them, and ``criteria`` the rubric text of each key. ``index`` is the
    position of the pair among the pairs of one evaluation (0 for a dict input).
    """

    index: int
    outputs: dict[str, Any]
    reference_outputs: dict[str, Any]
    criteria: dict[str, str]

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys to grade, in a stable order."""
        return tuple(self.outputs)


RubricScorer = Callable[[RubricRequest], Mapping[str, RubricVerdict | Score]]
"""Grades every key of one :class:`RubricRequest`; returns key -> verdict (or bare score)."""

AsyncRubricScorer = Callable[[RubricRequest], Awaitable[Mapping[str, RubricVerdict | Score]]]
"""Async twin of :data:`RubricScorer`."""


class JsonMatchEvaluator(Protocol):
    """The evaluator returned by :func:`create_json_match_evaluator`."""

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> list[EvaluatorResult]: ...


class AsyncJsonMatchEvaluator(Protocol):
    """The evaluator returned by :func:`create_async_json_match_evaluator`."""

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> list[EvaluatorResult]: ...
