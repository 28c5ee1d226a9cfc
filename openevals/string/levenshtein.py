"""Normalised Levenshtein similarity (rapidfuzz's C implementation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

from openevals._contract import EvaluatorInfo, attach_pair_batch, pair_evaluators
from openevals._structure import encode_json

__all__ = ["levenshtein_distance", "levenshtein_distance_async", "levenshtein_similarity"]


def _as_text(value: Any, name: str) -> str:
    if value is None:
        raise ValueError(f"levenshtein_distance needs `{name}`; got None")
    if isinstance(value, str):
        return value
    try:
        return encode_json(value, name)
    except TypeError as exc:
        raise TypeError(f"`{name}` must be a string or JSON-serialisable value ({exc})") from None


def levenshtein_similarity(a: str, b: str) -> float:
    """``1 - distance / max(len(a), len(b))``; two empty strings are identical (1.0)."""
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1.0 - Levenshtein.distance(a, b) / longest


def _score(*, outputs: Any, reference_outputs: Any) -> float:
    return levenshtein_similarity(
        _as_text(outputs, "outputs"), _as_text(reference_outputs, "reference_outputs")
    )


_INFO = EvaluatorInfo(
    run_name="levenshtein_distance", feedback_keys=("levenshtein_distance",), pure=True
)

levenshtein_distance, levenshtein_distance_async = pair_evaluators(
    _score,
    _INFO,
    name="levenshtein_distance",
    module=__name__,
    doc="""Normalised edit similarity in [0, 1] (1.0 = identical), key ``levenshtein_distance``.

    Non-strings are JSON-serialised with sorted keys first (at any nesting depth); a value that
    contains itself raises ``ValueError`` naming the parameter.
    """,
)
attach_pair_batch(levenshtein_distance, _score, "levenshtein_distance")

if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
