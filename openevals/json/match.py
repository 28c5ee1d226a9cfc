"""Compare structured outputs (a dict, or a list of dicts) with reference outputs key by key.

Scoring
-------
* **dict vs dict** — every key of either side (minus ``exclude_keys``) gets a score: ``0`` when
  the key is present on one side only, otherwise ``1`` if the values are equal under Python
  equality (``1 == 1.0`` counts as equal, nested values are compared whole) and ``0`` if not.
  Keys listed in ``rubric`` are graded by an LLM judge instead (``0`` without a call when the
  key is missing from ``outputs``).
* **list vs list** — the elements are first paired, then each pair is scored as above:

  ============== ===================================================================
  mode           pairing / what counts
  ============== ===================================================================
  same_elements  optimal pairing; unpaired elements on both sides score 0
  subset         optimal pairing; unpaired outputs score 0, unpaired references are
                 ignored (the outputs must be a subset of the references)
  superset       optimal pairing; unpaired references score 0, unpaired outputs are
                 ignored (the outputs must be a superset of the references)
  ordered        element ``i`` pairs with element ``i``; extras on either side score 0
  ============== ===================================================================

  The optimal pairing is a maximum-weight assignment: it maximises the number of equal
  values over all pairs (excluded and rubric keys do not count) and, among pairings that tie,
  minimises the number of keys that differ. Ties that remain are broken on a canonical ordering
  of the elements, so the scores never depend on the order of either list. Every key of an
  unpaired element that counts scores 0; an unpaired element without keys (``{}``, or only
  excluded keys) is reported under the key ``__openevals_empty_record`` with score 0.

Aggregation and result keys
---------------------------
The evaluator always returns a **list** of results (run name ``json_match_evaluator``).

* ``aggregator=None`` — one result per key, ``json_match:{key}``, sorted by key. For lists, a
  key's scores over the element pairs are combined with ``list_aggregator``: ``"all"`` gives 1
  when every pair scores 1 for that key, else 0; ``"average"`` gives their mean. A pair in
  which the key appears on neither side does not count for that key.
* ``aggregator="average"`` / ``"all"`` — one result, ``json_match:average`` /
  ``json_match:all``: the aggregator combines the keys of each element pair, then (for lists)
  ``list_aggregator`` combines the element scores.

Score types: an exact per-key score is the int ``0`` or ``1``; an ``"all"`` aggregate is the int
``0`` or ``1``; an ``"average"`` aggregate is a float. Rubric scores from the judge are kept as
returned (booleans count as 0/1 in aggregates).

Empty inputs
------------
``{}`` vs ``{}`` and ``[]`` vs ``[]`` are identical values: with an aggregator they score 1
(``json_match:average`` = 1.0, ``json_match:all`` = 1), and without one there are no keys, so
the result list is empty. The same holds for a pair of elements with no (non-excluded) keys and
for a list mode in which no element counts (``[]`` outputs in ``subset`` mode: an empty list is a
subset of anything).

Errors
------
``None`` for ``outputs`` or ``reference_outputs`` and a list compared with a dict raise
``ValueError``; anything that is neither a dict nor a list of dicts raises ``TypeError`` naming
the parameter. Invalid factory options raise ``ValueError`` at creation time. The inputs are
never modified.
"""

from __future__ import annotations

import asyncio
import math
import numbers
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from typing_extensions import TypedDict

from openevals._judge.backends import _is_async_client
from openevals._judge.core import JudgeCore
from openevals._judge.schema import SchemaSpec
from openevals._matching import max_weight_assignment
from openevals._messages import to_json_text
from openevals.prompts.json import SYSTEM_PROMPT, USER_PROMPT
from openevals.types import EvaluatorResult
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = [
    "EMPTY_RECORD_KEY",
    "SYSTEM_PROMPT",
    "USER_PROMPT",
    "AsyncJsonMatchEvaluator",
    "AsyncRubricScorer",
    "JsonMatchEvaluator",
    "RubricRequest",
    "RubricScorer",
    "RubricVerdict",
    "create_async_json_match_evaluator",
    "create_json_match_evaluator",
]

Aggregator = Literal["average", "all"]
ListMatchMode = Literal["same_elements", "subset", "superset", "ordered"]

EMPTY_RECORD_KEY = "__openevals_empty_record"
"""Key under which an unpaired element without keys is reported (score 0)."""

_RUN_NAME = "json_match_evaluator"
_KEY_PREFIX = "json_match"
_AGGREGATORS: tuple[str, ...] = ("average", "all")
_LIST_MODES: tuple[str, ...] = ("same_elements", "subset", "superset", "ordered")

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


# --------------------------------------------------------------------------- plan / finish


@dataclass
class _Pair:
    """The scores of one element pair (or of one unpaired element that counts)."""

    scores: dict[Hashable, Score] = field(default_factory=dict)
    comments: dict[Hashable, str | None] = field(default_factory=dict)
    request: RubricRequest | None = None


@dataclass
class _Plan:
    """Everything computable without the judge: pairing, exact scores, pending rubric batches."""

    is_list: bool
    pairs: list[_Pair]

    @property
    def requests(self) -> list[RubricRequest]:
        return [p.request for p in self.pairs if p.request is not None]


def _equal(key: Hashable, out_value: Any, ref_value: Any) -> int:
    try:
        return 1 if bool(out_value == ref_value) else 0
    except Exception as exc:
        raise TypeError(
            f"cannot compare the values of key {key!r}: `outputs` has {out_value!r}, "
            f"`reference_outputs` has {ref_value!r} ({type(exc).__name__}: {exc})"
        ) from exc


def _canonical(value: Any) -> str:
    """A text form that is identical for identical values, whatever their construction order."""
    if isinstance(value, Mapping):
        items = sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "<" + ",".join(sorted(_canonical(v) for v in value)) + ">"
    return f"{type(value).__name__}:{value!r}"


def _similarity_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return _canonical(value)
    return repr(value)


def _is_full(score: Score) -> bool:
    return bool(score == 1)


def _mean(scores: Sequence[Score]) -> float:
    return math.fsum(float(s) for s in scores) / len(scores) if scores else 1.0


def _combine(how: str, scores: Sequence[Score]) -> Score:
    """``"all"`` -> int 1 iff every score is 1 (vacuously 1); ``"average"`` -> float mean."""
    if how == "all":
        return 1 if all(_is_full(s) for s in scores) else 0
    return _mean(scores)


def _check_verdict(request: RubricRequest, verdicts: Any) -> dict[str, tuple[Score, str | None]]:
    if not isinstance(verdicts, Mapping):
        raise TypeError(
            f"the rubric scorer must return a mapping of key -> verdict; got "
            f"{type(verdicts).__name__}"
        )
    expected = set(request.keys)
    if set(verdicts) != expected:
        raise ValueError(
            f"the rubric scorer must grade exactly the keys {sorted(expected)!r}; got "
            f"{sorted(map(str, verdicts))!r}"
        )
    checked: dict[str, tuple[Score, str | None]] = {}
    for key in request.keys:
        verdict = verdicts[key]
        reasoning: str | None = None
        if isinstance(verdict, Mapping):
            if "score" not in verdict:
                raise ValueError(f"the rubric verdict for key {key!r} has no 'score'")
            reasoning = verdict.get("reasoning")
            verdict = verdict["score"]
        if not isinstance(verdict, bool) and not (
            isinstance(verdict, numbers.Real) and 0 <= float(verdict) <= 1
        ):
            raise ValueError(
                f"the rubric score for key {key!r} must be a bool or a number in [0, 1]; got "
                f"{verdict!r}"
            )
        checked[key] = (cast(Score, verdict), reasoning)
    return checked


@dataclass(frozen=True)
class _JsonMatchCore:
    """Validated options plus the pure parts of an evaluation (shared by both shells)."""

    aggregator: str | None
    list_aggregator: str
    rubric: dict[str, str]
    exclude_keys: frozenset[str]
    list_match_mode: str
    use_reasoning: bool
    judge: Any
    model: str | None

    # ----------------------------------------------------------------- inputs

    def _kind(self, value: Any, name: str) -> str:
        if value is None:
            raise ValueError(f"json match needs `{name}`: a dict or a list of dicts; got None")
        if isinstance(value, Mapping):
            return "dict"
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if not isinstance(item, Mapping):
                    raise TypeError(
                        f"`{name}[{i}]` must be a dict (json match compares lists of dicts); "
                        f"got {type(item).__name__}: {item!r}"
                    )
            return "list"
        hint = " (parse JSON text with json.loads first)" if isinstance(value, str) else ""
        raise TypeError(
            f"`{name}` must be a dict or a list of dicts; got {type(value).__name__}{hint}"
        )

    # ----------------------------------------------------------------- pairing

    def _weights(
        self, outs: Sequence[Mapping[Any, Any]], refs: Sequence[Mapping[Any, Any]]
    ) -> list[list[float]]:
        """Pair weights ranking pairings lexicographically by three criteria.

        1. more equal values (excluded and rubric keys never count);
        2. fewer differing keys: present on one side only, or unequal (rubric keys present on
           both sides are unknown, not differing);
        3. more similar text for the values that are not known to be equal (rubric keys and
           unequal values), so rubric-graded records still pair with their look-alikes.
        """
        from rapidfuzz.distance import Indel

        similar = Indel.normalized_similarity
        excluded = self.exclude_keys
        rubric = self.rubric

        def profile(record: Mapping[Any, Any]) -> dict[Hashable, tuple[Any, str, bool]]:
            return {
                k: (v, _similarity_text(v), k in rubric)
                for k, v in record.items()
                if k not in excluded
            }

        out_profiles = [profile(o) for o in outs]
        ref_profiles = [profile(r) for r in refs]
        # Any assignment has at most `bound` differing keys and similarity below `bound`.
        bound = 1 + sum(map(len, out_profiles)) + sum(map(len, ref_profiles))
        equal_unit = float(bound * bound)
        weights: list[list[float]] = []
        for o in out_profiles:
            row: list[float] = []
            for r in ref_profiles:
                equal = shared = unequal = 0
                similarity = 0.0
                for k, (value, value_text, graded) in o.items():
                    other = r.get(k)
                    if other is None:
                        continue
                    shared += 1
                    if graded:
                        similarity += similar(value_text, other[1])
                    elif _equal(k, value, other[0]):
                        equal += 1
                    else:
                        unequal += 1
                        similarity += similar(value_text, other[1])
                differ = len(o) + len(r) - 2 * shared + unequal
                row.append(equal * equal_unit - differ * bound + similarity)
            weights.append(row)
        return weights

    def _pair_indices(
        self, outs: Sequence[Mapping[Any, Any]], refs: Sequence[Mapping[Any, Any]]
    ) -> list[tuple[int, int]]:
        """Optimal (output index, reference index) pairs, independent of the list orders."""
        if self.list_match_mode == "ordered":
            return [(i, i) for i in range(min(len(outs), len(refs)))]

        def canonical_order(records: Sequence[Mapping[Any, Any]]) -> list[int]:
            keys = [
                _canonical({k: v for k, v in r.items() if k not in self.exclude_keys})
                for r in records
            ]
            return sorted(range(len(records)), key=keys.__getitem__)

        out_order = canonical_order(outs)
        ref_order = canonical_order(refs)
        weights = self._weights([outs[i] for i in out_order], [refs[j] for j in ref_order])
        return [(out_order[r], ref_order[c]) for r, c in max_weight_assignment(weights)]

    # ----------------------------------------------------------------- scoring

    def _score_pair(self, index: int, out: Mapping[Any, Any], ref: Mapping[Any, Any]) -> _Pair:
        pair = _Pair()
        to_grade: dict[str, Any] = {}
        keys = [*out, *(k for k in ref if k not in out)]
        for key in keys:
            if key in self.exclude_keys:
                continue
            if key in self.rubric:
                if key in out:
                    to_grade[key] = out[key]
                    pair.scores[key] = 0  # replaced by the judge's verdict in finish()
                else:
                    pair.scores[key] = 0
            elif key in out and key in ref:
                pair.scores[key] = _equal(key, out[key], ref[key])
            else:
                pair.scores[key] = 0
        if to_grade:
            pair.request = RubricRequest(
                index=index,
                outputs=to_grade,
                reference_outputs={k: ref[k] for k in to_grade if k in ref},
                criteria={k: self.rubric[k] for k in to_grade},
            )
        return pair

    def _unpaired(self, record: Mapping[Any, Any]) -> _Pair:
        keys = [k for k in record if k not in self.exclude_keys]
        return _Pair(scores={k: 0 for k in keys} if keys else {EMPTY_RECORD_KEY: 0})

    def plan(self, outputs: Any, reference_outputs: Any) -> _Plan:
        """Validate the inputs, pair list elements and score every non-rubric key."""
        out_kind = self._kind(outputs, "outputs")
        ref_kind = self._kind(reference_outputs, "reference_outputs")
        if out_kind != ref_kind:
            raise ValueError(
                f"`outputs` is a {out_kind} but `reference_outputs` is a {ref_kind}; json "
                "match compares a dict with a dict or a list of dicts with a list of dicts"
            )
        if out_kind == "dict":
            return _Plan(is_list=False, pairs=[self._score_pair(0, outputs, reference_outputs)])
        outs: Sequence[Mapping[Any, Any]] = outputs
        refs: Sequence[Mapping[Any, Any]] = reference_outputs
        matched = sorted(self._pair_indices(outs, refs))
        pairs = [self._score_pair(n, outs[i], refs[j]) for n, (i, j) in enumerate(matched)]
        mode = self.list_match_mode
        if mode != "superset":  # unpaired outputs count
            paired_outs = {i for i, _ in matched}
            pairs += [self._unpaired(o) for i, o in enumerate(outs) if i not in paired_outs]
        if mode != "subset":  # unpaired references count
            paired_refs = {j for _, j in matched}
            pairs += [self._unpaired(r) for j, r in enumerate(refs) if j not in paired_refs]
        return _Plan(is_list=True, pairs=pairs)

    def finish(
        self, plan: _Plan, verdicts: Sequence[Mapping[str, RubricVerdict | Score]]
    ) -> dict[str, Any]:
        """Merge the judge's verdicts and aggregate into feedback key -> score (or verdict)."""
        graded = [p for p in plan.pairs if p.request is not None]
        if len(verdicts) != len(graded):
            raise ValueError(f"expected {len(graded)} rubric verdicts, got {len(verdicts)}")
        for pair, verdict in zip(graded, verdicts, strict=True):
            assert pair.request is not None
            for graded_key, (verdict_score, reasoning) in _check_verdict(
                pair.request, verdict
            ).items():
                pair.scores[graded_key] = verdict_score
                pair.comments[graded_key] = reasoning

        if self.aggregator is not None:
            per_pair = [_combine(self.aggregator, list(p.scores.values())) for p in plan.pairs]
            final = _combine(self.list_aggregator, per_pair) if plan.is_list else per_pair[0]
            return {f"{_KEY_PREFIX}:{self.aggregator}": final}

        collected: dict[Hashable, list[tuple[Score, str | None]]] = {}
        for pair in plan.pairs:
            for key, score in pair.scores.items():
                collected.setdefault(key, []).append((score, pair.comments.get(key)))
        named: dict[str, Any] = {}
        for key, entries in collected.items():
            name = f"{_KEY_PREFIX}:{key}"
            if name in named:
                raise ValueError(
                    f"two different keys both render as feedback key {name!r}; use distinct "
                    "key names (e.g. only strings)"
                )
            combined = (
                _combine(self.list_aggregator, [s for s, _ in entries])
                if plan.is_list
                else entries[0][0]
            )
            comment = entries[0][1] if len(entries) == 1 else None
            named[name] = combined if comment is None else {"score": combined, "reasoning": comment}
        return {name: named[name] for name in sorted(named)}


# --------------------------------------------------------------------------- options


def _build_core(
    *,
    aggregator: Any,
    list_aggregator: Any,
    rubric: Any,
    exclude_keys: Any,
    judge: Any,
    model: Any,
    use_reasoning: Any,
    list_match_mode: Any,
) -> _JsonMatchCore:
    if aggregator is not None and aggregator not in _AGGREGATORS:
        raise ValueError(f"`aggregator` must be None, 'average' or 'all'; got {aggregator!r}")
    if list_aggregator not in _AGGREGATORS:
        raise ValueError(f"`list_aggregator` must be 'average' or 'all'; got {list_aggregator!r}")
    if list_match_mode not in _LIST_MODES:
        raise ValueError(
            "`list_match_mode` must be one of 'same_elements', 'subset', 'superset', "
            f"'ordered'; got {list_match_mode!r}"
        )
    if rubric is None:
        rubric = {}
    if not isinstance(rubric, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rubric.items()
    ):
        raise TypeError(
            "`rubric` must be a dict mapping key names to criteria text (str -> str); got "
            f"{rubric!r}"
        )
    if exclude_keys is None:
        exclude_keys = ()
    if not isinstance(exclude_keys, (list, tuple)) or not all(
        isinstance(k, str) for k in exclude_keys
    ):
        raise TypeError(f"`exclude_keys` must be a list of key names (str); got {exclude_keys!r}")
    if rubric and judge is None and model is None:
        raise ValueError(
            "a `rubric` is graded by an LLM judge: pass `judge` (a chat model or OpenAI client) "
            "or `model` (e.g. 'openai:gpt-4o-mini')"
        )
    if not rubric and (judge is not None or model is not None):
        raise ValueError(
            "`judge` / `model` are only used to grade `rubric` keys; pass a non-empty `rubric` "
            "or drop `judge` and `model`"
        )
    both = sorted(set(rubric) & set(exclude_keys))
    if both:
        raise ValueError(f"keys {both!r} are both in `rubric` and in `exclude_keys`; pick one")
    return _JsonMatchCore(
        aggregator=aggregator,
        list_aggregator=list_aggregator,
        rubric=dict(rubric),
        exclude_keys=frozenset(exclude_keys),
        list_match_mode=list_match_mode,
        use_reasoning=bool(use_reasoning),
        judge=judge,
        model=model,
    )


def _rubric_spec(keys: Sequence[str], use_reasoning: bool) -> SchemaSpec:
    """The structured answer for one element: a verdict per rubric key."""
    verdict: dict[str, Any] = (
        {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "score": {"type": "boolean"}},
            "required": ["reasoning", "score"],
            "additionalProperties": False,
        }
        if use_reasoning
        else {"type": "boolean"}
    )
    return SchemaSpec(
        name="structured_match_score",
        schema={
            "type": "object",
            "properties": {key: verdict for key in keys},
            "required": list(keys),
            "additionalProperties": False,
        },
        description="A verdict for every graded key.",
    )


def _value_lines(values: Mapping[str, Any]) -> str:
    return "\n".join(f"{key}: {to_json_text(value)}" for key, value in values.items())


def _rubric_messages(
    *, outputs: Any = None, reference_outputs: Any = None, criteria: Any = None, **_: Any
) -> list[dict[str, Any]]:
    from openevals.prompts.json import JSON_MATCH_SYSTEM_PROMPT, JSON_MATCH_USER_PROMPT

    rubric = "\n".join(f"Key: {key}, Criteria: {text}" for key, text in criteria.items())
    user = JSON_MATCH_USER_PROMPT.format(
        rubric=rubric,
        outputs=_value_lines(outputs),
        reference_outputs=_value_lines(reference_outputs) or "(no reference values)",
    )
    return [
        {"role": "system", "content": JSON_MATCH_SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


def _verdicts(answer: Mapping[str, Any], use_reasoning: bool) -> dict[str, RubricVerdict | Score]:
    out: dict[str, RubricVerdict | Score] = {}
    for key, value in answer.items():
        if use_reasoning and isinstance(value, Mapping):
            out[key] = cast(
                RubricVerdict, {"score": value.get("score"), "reasoning": value.get("reasoning")}
            )
        else:
            out[key] = value
    return out


def _rubric_scorers(core: _JsonMatchCore) -> tuple[RubricScorer, AsyncRubricScorer]:
    """The judge that grades rubric keys: one structured call per :class:`RubricRequest`.

    Each call covers all rubric keys of one element pair, with a schema built for those keys.
    Without a rubric the returned scorers are never called.
    """
    if not core.rubric:

        def unused(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
            raise AssertionError("no rubric keys to grade")

        async def aunused(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
            raise AssertionError("no rubric keys to grade")

        return unused, aunused

    judge = JudgeCore(
        prompt=_rubric_messages,
        judge=core.judge,
        model=core.model,
        feedback_key="json_match",
        output_schema=_rubric_spec(["__placeholder__"], core.use_reasoning).schema,
    )

    def call_args(request: RubricRequest) -> tuple[Any, ...]:
        extra = {"criteria": dict(request.criteria)}
        spec = _rubric_spec(request.keys, core.use_reasoning)
        return (None, dict(request.outputs), dict(request.reference_outputs), extra, spec)

    def grade(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
        outcome = judge.ask_sync(*call_args(request))
        return _verdicts(outcome.value, core.use_reasoning)

    async def agrade(request: RubricRequest) -> Mapping[str, RubricVerdict | Score]:
        outcome = await judge.ask_async(*call_args(request))
        return _verdicts(outcome.value, core.use_reasoning)

    return grade, agrade


# --------------------------------------------------------------------------- shells


def _sync_evaluator(core: _JsonMatchCore, grade: RubricScorer) -> JsonMatchEvaluator:
    def scorer(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
        plan = core.plan(outputs, reference_outputs)
        return core.finish(plan, [grade(request) for request in plan.requests])

    def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> list[EvaluatorResult]:
        results = _run_evaluator(
            run_name=_RUN_NAME,
            scorer=scorer,
            feedback_key=_KEY_PREFIX,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )
        return cast(list[EvaluatorResult], results)

    return evaluator


def _async_evaluator(core: _JsonMatchCore, agrade: AsyncRubricScorer) -> AsyncJsonMatchEvaluator:
    async def scorer(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
        plan = core.plan(outputs, reference_outputs)
        return core.finish(plan, await asyncio.gather(*map(agrade, plan.requests)))

    async def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> list[EvaluatorResult]:
        results = await _arun_evaluator(
            run_name=_RUN_NAME,
            scorer=scorer,
            feedback_key=_KEY_PREFIX,
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )
        return cast(list[EvaluatorResult], results)

    return evaluator


def create_json_match_evaluator(
    *,
    aggregator: Aggregator | None = None,
    list_aggregator: Aggregator = "all",
    rubric: dict[str, str] | None = None,
    exclude_keys: list[str] | None = None,
    judge: Any = None,
    model: str | None = None,
    use_reasoning: bool = True,
    list_match_mode: ListMatchMode = "same_elements",
) -> JsonMatchEvaluator:
    """Create an evaluator comparing a dict (or list of dicts) with the reference key by key.

    Args:
        aggregator: ``None`` for one result per key, ``"average"`` for the mean of the key
            scores, ``"all"`` for 1 only when every key scores 1.
        list_aggregator: how per-element scores of list inputs are combined: ``"all"`` (1 only
            when every element scores 1) or ``"average"``.
        rubric: key -> criteria; these keys are graded by an LLM judge instead of equality.
        exclude_keys: keys ignored everywhere (scoring and list pairing).
        judge: a chat model or OpenAI-style client grading ``rubric`` keys.
        model: a ``"provider:model"`` string used when no ``judge`` is given.
        use_reasoning: ask the judge for reasoning on rubric keys (kept as the comment).
        list_match_mode: ``"same_elements"``, ``"subset"``, ``"superset"`` or ``"ordered"``;
            see the module documentation.

    Returns:
        ``evaluator(*, outputs, reference_outputs, **kwargs) -> list[EvaluatorResult]``.

    Raises:
        ValueError: unknown option values, a rubric without judge/model, or judge/model
            without a rubric.
        TypeError: ``rubric`` or ``exclude_keys`` of the wrong shape.
    """
    core = _build_core(
        aggregator=aggregator,
        list_aggregator=list_aggregator,
        rubric=rubric,
        exclude_keys=exclude_keys,
        judge=judge,
        model=model,
        use_reasoning=use_reasoning,
        list_match_mode=list_match_mode,
    )
    if judge is not None and hasattr(judge, "chat") and _is_async_client(judge):
        raise TypeError(
            "`judge` is an async OpenAI client (AsyncOpenAI); use "
            "create_async_json_match_evaluator, or pass openai.OpenAI()"
        )
    grade, _ = _rubric_scorers(core)
    return _sync_evaluator(core, grade)


def create_async_json_match_evaluator(
    *,
    aggregator: Aggregator | None = None,
    list_aggregator: Aggregator = "all",
    rubric: dict[str, str] | None = None,
    exclude_keys: list[str] | None = None,
    judge: Any = None,
    model: str | None = None,
    use_reasoning: bool = True,
    list_match_mode: ListMatchMode = "same_elements",
) -> AsyncJsonMatchEvaluator:
    """Async twin of :func:`create_json_match_evaluator` (rubric batches are graded
    concurrently)."""
    core = _build_core(
        aggregator=aggregator,
        list_aggregator=list_aggregator,
        rubric=rubric,
        exclude_keys=exclude_keys,
        judge=judge,
        model=model,
        use_reasoning=use_reasoning,
        list_match_mode=list_match_mode,
    )
    _, agrade = _rubric_scorers(core)
    return _async_evaluator(core, agrade)
