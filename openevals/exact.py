"""Exact match: outputs equal reference_outputs by value."""

from __future__ import annotations

from typing import Any

from openevals._structure import encode_json
from openevals.types import EvaluatorResult
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = ["exact_match", "exact_match_async"]


def _canonical(value: Any, name: str) -> str:
    if value is None:
        raise ValueError(f"exact_match needs `{name}`; got None")
    try:
        return encode_json(value, name)
    except TypeError as exc:
        raise TypeError(
            f"exact_match compares JSON-serialisable values; `{name}` is not ({exc}). Convert it "
            "to dicts, lists, strings, numbers or booleans first."
        ) from None


def _score(*, outputs: Any, reference_outputs: Any) -> bool:
    return _canonical(outputs, "outputs") == _canonical(reference_outputs, "reference_outputs")


def exact_match(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
    """Score True when ``outputs`` and ``reference_outputs`` serialise to the same JSON.

    Dict key order is irrelevant; ``1`` and ``1.0`` (or ``True`` and ``1``) differ, as in the
    public release. Values of any nesting depth are compared; a value that contains itself
    raises ``ValueError`` naming the parameter. Extra keyword arguments such as ``inputs`` are
    accepted and ignored.
    """
    result = _run_evaluator(
        run_name="exact_match",
        scorer=_score,
        feedback_key="exact_match",
        outputs=outputs,
        reference_outputs=reference_outputs,
    )
    return result  # type: ignore[return-value]


async def exact_match_async(
    *, outputs: Any, reference_outputs: Any, **kwargs: Any
) -> EvaluatorResult:
    """Async twin of :func:`exact_match`."""
    result = await _arun_evaluator(
        run_name="exact_match",
        scorer=_score,
        feedback_key="exact_match",
        outputs=outputs,
        reference_outputs=reference_outputs,
    )
    return result  # type: ignore[return-value]
