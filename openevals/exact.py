"""Exact match: outputs equal reference_outputs by value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openevals._contract import EvaluatorInfo, attach_pair_batch, pair_evaluators
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


_INFO = EvaluatorInfo(
    run_name="exact_match", feedback_keys=("exact_match",), pure=True, linear=True
)

exact_match, exact_match_async = pair_evaluators(
    _score,
    _INFO,
    name="exact_match",
    module=__name__,
    doc="""Score True when ``outputs`` and ``reference_outputs`` serialise to the same JSON.

    Dict key order is irrelevant; ``1`` and ``1.0`` (or ``True`` and ``1``) differ, as in the
    public release. Values of any nesting depth are compared; a value that contains itself
    raises ``ValueError`` naming the parameter. Extra keyword arguments such as ``inputs`` are
    accepted and ignored.
    """,
)
attach_pair_batch(exact_match, _score, "exact_match")

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
