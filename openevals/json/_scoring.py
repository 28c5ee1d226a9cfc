"""The pure core of JSON match: validated options, element pairing and scoring, aggregation.

Shared by the sync and async evaluators of :mod:`openevals.json.match`; see that module for the
scoring rules.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from openevals._repr import show
from openevals.json._assign import pair_records
from openevals.json._pairing import equal_values
from openevals.json._types import EMPTY_RECORD_KEY, RubricRequest, RubricVerdict, Score

_KEY_PREFIX = "json_match"
_AGGREGATORS: tuple[str, ...] = ("average", "all")
_LIST_MODES: tuple[str, ...] = ("same_elements", "subset", "superset", "ordered")


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


def _combine(how: str, scores: Sequence[Score]) -> Score:
    """``"all"`` -> int 1 iff every score is 1 (vacuously 1); ``"average"`` -> float mean (1.0
    when empty)."""
    if how == "all":
        return 1 if all(s == 1 for s in scores) else 0
    return math.fsum(float(s) for s in scores) / len(scores) if scores else 1.0


def _check_verdict(request: RubricRequest, verdicts: Any) -> dict[str, tuple[Score, str | None]]:
    if not isinstance(verdicts, Mapping):
        raise TypeError(
            f"the rubric scorer must return a mapping of key -> verdict; got "
            f"{type(verdicts).__name__}"
        )
    expected = set(request.keys)
    if set(verdicts) != expected:
        missing = sorted(expected - set(verdicts))
        extra = [k for k in verdicts if k not in expected]
        raise ValueError(
            "the rubric scorer must grade exactly the keys of the rubric; missing "
            f"{show(missing)}, not in the rubric {show(extra)}"
        )
    checked: dict[str, tuple[Score, str | None]] = {}
    for key in request.keys:
        verdict = verdicts[key]
        reasoning: str | None = None
        if isinstance(verdict, Mapping):
            if "score" not in verdict:
                raise ValueError(f"the rubric verdict for key {show(key)} has no 'score'")
            reasoning = verdict.get("reasoning")
            verdict = verdict["score"]
        if not isinstance(verdict, bool) and not (
            isinstance(verdict, numbers.Real) and 0 <= float(verdict) <= 1
        ):
            raise ValueError(
                f"the rubric score for key {show(key)} must be a bool or a number in [0, 1]; got "
                f"{show(verdict)}"
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
                        f"got {type(item).__name__}: {show(item)}"
                    )
            return "list"
        hint = " (parse JSON text with json.loads first)" if isinstance(value, str) else ""
        raise TypeError(
            f"`{name}` must be a dict or a list of dicts; got {type(value).__name__}{hint}"
        )

    # ----------------------------------------------------------------- pairing

    def _pair_indices(
        self, outs: Sequence[Mapping[Any, Any]], refs: Sequence[Mapping[Any, Any]]
    ) -> list[tuple[int, int]]:
        """Optimal (output index, reference index) pairs, independent of the list orders."""
        if self.list_match_mode == "ordered":
            return [(i, i) for i in range(min(len(outs), len(refs)))]
        return pair_records(outs, refs, exclude_keys=self.exclude_keys, rubric=self.rubric)

    # ----------------------------------------------------------------- scoring

    def _score_pair(
        self,
        index: int,
        out: Mapping[Any, Any],
        ref: Mapping[Any, Any],
        names: tuple[str, str] = ("outputs", "reference_outputs"),
    ) -> _Pair:
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
                pair.scores[key] = equal_values(key, out[key], ref[key], names)
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
        pairs = [
            self._score_pair(n, outs[i], refs[j], (f"outputs[{i}]", f"reference_outputs[{j}]"))
            for n, (i, j) in enumerate(matched)
        ]
        mode = self.list_match_mode
        if mode != "superset":  # unpaired outputs count
            paired_outs = {i for i, _ in matched}
            pairs += [self._unpaired(o) for i, o in enumerate(outs) if i not in paired_outs]
        if mode != "subset":  # unpaired references count
            paired_refs = {j for _, j in matched}
            pairs += [self._unpaired(r) for j, r in enumerate(refs) if j not in paired_refs]
        return _Plan(is_list=True, pairs=pairs)

    def finish(
        self,
        plan: _Plan,
        verdicts: Sequence[Mapping[str, RubricVerdict | Score]],
        source_run_id: Any = None,
    ) -> dict[str, Any]:
        """Merge the judge's verdicts and aggregate into feedback key -> score (or verdict).

        ``source_run_id`` (the traced run, when LangSmith tracing is on) goes on the results of
        a single raw key, as 0.2.2 links them; aggregated results carry none.
        """
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
                    f"two different keys both render as feedback key {show(name)}; use distinct "
                    "key names (e.g. only strings)"
                )
            combined = (
                _combine(self.list_aggregator, [s for s, _ in entries])
                if plan.is_list
                else entries[0][0]
            )
            comment = entries[0][1] if len(entries) == 1 else None
            value: dict[str, Any] = {"score": combined}
            if comment is not None:
                value["reasoning"] = comment
            if source_run_id is not None and len(entries) == 1:
                value["source_run_id"] = source_run_id
            named[name] = combined if len(value) == 1 else value
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
        raise ValueError(f"`aggregator` must be None, 'average' or 'all'; got {show(aggregator)}")
    if list_aggregator not in _AGGREGATORS:
        raise ValueError(
            f"`list_aggregator` must be 'average' or 'all'; got {show(list_aggregator)}"
        )
    if list_match_mode not in _LIST_MODES:
        raise ValueError(
            "`list_match_mode` must be one of 'same_elements', 'subset', 'superset', "
            f"'ordered'; got {show(list_match_mode)}"
        )
    if rubric is None:
        rubric = {}
    if not isinstance(rubric, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rubric.items()
    ):
        raise TypeError(
            "`rubric` must be a dict mapping key names to criteria text (str -> str); got "
            f"{show(rubric)}"
        )
    if exclude_keys is None:
        exclude_keys = ()
    if not isinstance(exclude_keys, (list, tuple)) or not all(
        isinstance(k, str) for k in exclude_keys
    ):
        raise TypeError(
            f"`exclude_keys` must be a list of key names (str); got {show(exclude_keys)}"
        )
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
        raise ValueError(f"keys {show(both)} are both in `rubric` and in `exclude_keys`; pick one")
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
