"""Exact match: outputs equal reference_outputs by value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openevals._contract import EvaluatorInfo, make_async_evaluator, make_evaluator
from openevals._structure import encode_json

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


_INFO = EvaluatorInfo(run_name="exact_match", feedback_keys=("exact_match",), pure=True)

exact_match = make_evaluator(
    _score,
    _INFO,
    passes=("outputs", "reference_outputs"),
    paired=True,
    name="exact_match",
    module=__name__,
    doc="""Score True when ``outputs`` and ``reference_outputs`` serialise to the same JSON.

    Dict key order is irrelevant; ``1`` and ``1.0`` (or ``True`` and ``1``) differ, as in the
    public release. Values of any nesting depth are compared; a value that contains itself
    raises ``ValueError`` naming the parameter. Extra keyword arguments such as ``inputs`` are
    accepted and ignored.
    """,
)


def _batch(outputs: Sequence[Any], reference_outputs: Sequence[Any]) -> list[dict[str, Any]]:
    """``exact_match`` over many rows at once (the batch runner's columnar path): one result per
    row, equal to a per-row call's, in order. One bad row raises for the whole call."""
    if len(outputs) != len(reference_outputs):
        raise ValueError(
            f"exact_match.batch needs as many outputs as reference_outputs; got {len(outputs)} "
            f"and {len(reference_outputs)}"
        )
    return [
        {
            "key": "exact_match",
            "score": _score(outputs=o, reference_outputs=r),
            "comment": None,
            "metadata": None,
        }
        for o, r in zip(outputs, reference_outputs, strict=True)
    ]


setattr(exact_match, "batch", _batch)  # noqa: B010 (an attribute of a function object)


exact_match_async = make_async_evaluator(
    _score,
    _INFO.as_async(),
    passes=("outputs", "reference_outputs"),
    paired=True,
    name="exact_match_async",
    module=__name__,
    doc="Async twin of :func:`exact_match`.",
)
