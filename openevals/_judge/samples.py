"""Turning several judge answers into one score (``samples=n``) and weighting a score by the
probabilities of its tokens (``score_weighting="logprobs"``). Pure functions.

Aggregation of ``n`` answers:

* boolean scores: majority vote. A tied vote (as many ``true`` as ``false``, possible when ``n``
  is even) gives ``False``: the judge has not confirmed that the output passes.
  ``metadata["tie"]`` is then ``True``.
* ``choices`` scores: the most frequent choice; among tied choices, the lowest.
* continuous scores (and every logprob-weighted score): the mean.

``metadata`` then holds ``samples`` (every sample's score, in order) and, for votes, ``agreement``
(the share of samples equal to the voted score) or, for means, ``std`` (the population standard
deviation of the samples). The comment is the reasoning of the first sample that agrees with the
voted score (for means: of the first sample).

Logprob weighting (G-Eval): the answer's JSON is located in the token stream the provider returned;
at the token where the ``score`` value starts, the alternatives in ``top_logprobs`` that spell a
valid score (``true``/``false``, or one of the ``choices``) are kept, their probabilities
normalised to sum to 1, and the score becomes ``P(true)`` for booleans or the probability-weighted
mean of the choices. ``metadata["score_probabilities"]`` holds those normalised probabilities.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from openevals._judge.backends import _get
from openevals._judge.errors import JudgeLogprobsError
from openevals._judge.schema import SchemaSpec
from openevals._judge.steps import Outcome
from openevals._repr import show

_SCORE_KEY = re.compile(r'"score"\s*:\s*')


def _value_token(content: Sequence[Any], key: str) -> Any:
    """The log-probability entry of the token where the answer's ``key`` value starts."""
    tokens = [str(_get(entry, "token") or "") for entry in content]
    text = "".join(tokens)
    pattern = _SCORE_KEY if key == "score" else re.compile(rf'"{re.escape(key)}"\s*:\s*')
    starts = list(pattern.finditer(text))
    if not starts:
        return None
    value_start = starts[-1].end()
    ends = itertools.accumulate(len(token) for token in tokens)  # where each token's text ends
    return next(
        (entry for entry, end in zip(content, ends, strict=True) if end > value_start), None
    )


def _spelled_score(token: str, spec: SchemaSpec) -> float | None:
    word = token.strip().strip('"').lower()
    if spec.score_type == "boolean":
        return {"true": 1.0, "false": 0.0}.get(word)
    try:
        number = float(word)
    except ValueError:
        return None
    return number if number in spec.choices else None


def weighted_score(
    spec: SchemaSpec, logprobs: Any, key: str = "score"
) -> tuple[float, dict[str, float]]:
    """The probability-weighted score of one answer and the normalised score probabilities;
    ``key`` names the answer's field that holds the score (the rubric judge weights one field
    per criterion).

    Raises :class:`JudgeLogprobsError` when ``logprobs`` is missing or has no alternative that
    spells a valid score at the score's position.
    """
    content = _get(logprobs, "content") if not isinstance(logprobs, list) else logprobs
    if not content:
        raise JudgeLogprobsError(
            "score_weighting='logprobs' needs token log-probabilities, but the reply carries "
            "none: this server or model does not return `logprobs`. Use a provider that does "
            "(the OpenAI API) or score_weighting=None"
        )
    entry = _value_token(content, key)
    if entry is None:
        raise JudgeLogprobsError(
            f"score_weighting='logprobs': the tokens of the reply do not spell a JSON {show(key)} "
            "field, so there is no score token to weight"
        )
    candidates = list(_get(entry, "top_logprobs") or [])
    probabilities: dict[float, float] = {}
    seen: set[str] = set()
    for candidate in [entry, *candidates]:
        token = str(_get(candidate, "token") or "")
        logprob = _get(candidate, "logprob")
        if token in seen or not isinstance(logprob, (int, float)):
            continue
        seen.add(token)
        value = _spelled_score(token, spec)
        if value is not None:
            probabilities[value] = probabilities.get(value, 0.0) + math.exp(logprob)
    total = sum(probabilities.values())
    if total <= 0.0:
        raise JudgeLogprobsError(
            "score_weighting='logprobs': none of the alternatives at the score token "
            f"({show([str(_get(c, 'token')) for c in candidates])}) spells a valid score"
        )
    if spec.score_type == "boolean":
        named = {
            "true": probabilities.get(1.0, 0.0) / total,
            "false": probabilities.get(0.0, 0.0) / total,
        }
        return named["true"], named
    score = sum(value * p for value, p in probabilities.items()) / total
    return score, {_label(v): p / total for v, p in sorted(probabilities.items())}


def _label(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def majority(scores: Sequence[Any], score_type: str | None) -> tuple[Any, bool]:
    """The majority score and whether the vote was tied (a tied vote: ``False`` for booleans,
    else the lowest of the tied scores)."""
    counts = Counter(scores)
    top = max(counts.values())
    leaders = [s for s in counts if counts[s] == top]
    if len(leaders) == 1:
        return leaders[0], False
    if score_type == "boolean":
        return False, True
    return min(leaders), True


def aggregate_scores(
    spec: SchemaSpec, scores: Sequence[Any], reasonings: Sequence[str | None], *, mean: bool
) -> tuple[Any, str | None, dict[str, Any]]:
    """``(score, comment, metadata)`` of ``n`` samples (see the module documentation)."""
    metadata: dict[str, Any] = {"samples": list(scores)}
    if mean or spec.score_type == "continuous":
        score: Any = statistics.fmean(scores)
        metadata["std"] = statistics.pstdev(scores) if len(scores) > 1 else 0.0
        return score, reasonings[0], metadata
    score, tied = majority(scores, spec.score_type)
    agreeing = [i for i, s in enumerate(scores) if s == score]
    metadata["agreement"] = len(agreeing) / len(scores)
    if tied:
        metadata["tie"] = True
    comment = reasonings[agreeing[0]] if agreeing else reasonings[0]
    return score, comment, metadata


def read_scores(
    spec: SchemaSpec,
    outcome: Outcome,
    scores: Sequence[Any],
    reasonings: Sequence[str | None],
    *,
    weighted: bool,
    key: str = "score",
) -> tuple[Any, str | None, dict[str, Any]]:
    """``(score, comment, metadata)`` of the answers' ``key`` field (``scores``, one per sample):
    with ``weighted``, each score read from the probabilities of its tokens
    (:func:`weighted_score`); several samples aggregated (:func:`aggregate_scores`, means when
    weighted); the call's usage under ``metadata["usage"]``."""
    extra: dict[str, Any] = {}
    if weighted:
        read = [weighted_score(spec, a.logprobs, key=key) for a in outcome.answers]
        scores = [w for w, _ in read]
        extra = {"score_weighting": "logprobs", "score_probabilities": read[0][1]}
        if len(read) > 1:
            extra["score_probabilities"] = [p for _, p in read]
    score, reasoning, metadata = (
        (scores[0], reasonings[0], {})
        if len(scores) == 1
        else aggregate_scores(spec, scores, reasonings, mean=weighted)
    )
    metadata.update(extra)
    if outcome.usage:
        metadata["usage"] = outcome.usage
    return score, reasoning, metadata
