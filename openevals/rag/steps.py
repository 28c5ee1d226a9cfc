"""Step scoring for tool-using agents, after graphrag-eval's ``steps_score``.

The reference is a list of *levels*: each level is a list of steps that may run in any order,
after every step of the previous level. By default (``levels="last"``) the answer is assumed to
come from the outputs of the last level, so the score is::

    steps_score = credit of the LAST reference level's steps / number of steps in that level

With ``levels="all"`` (graphrag-eval 6.x) the score is the mean of every level's share, matched
from the last level backwards: each level only uses steps executed before the earliest step
matched in the level after it, and matching stops at the first level that is not fully matched
(earlier levels score 0).

A reference step matches an actual step when

* the names are equal,
* the actual step did not fail (its ``status`` is absent or ``"success"``),
* the outputs agree, compared according to the reference step's ``output_media_type``:
  ``application/sparql-results+json`` (rows of the reference's ``required_columns``, as a
  sequence when ``ordered`` is true and as a multiset otherwise; ASK results by their boolean),
  ``application/json`` (JSON equality; a list of row objects is compared as a table when the
  reference sets ``ordered`` or ``required_columns``), ``text/csv`` /
  ``text/tab-separated-values`` (tables with a header row), anything else as text;
* a reference step without an ``output`` is matched on its ``args`` instead, and with
  ``compare_args=True`` the ``args`` must be equal in every case.

A matched step earns 1, except a *retrieval* step (named in ``retrieval_steps``, by default
``"retrieval"``), which earns the recall@k of the ids in the actual step's output against the
ids in the reference step's output (``k`` = the actual step's ``args["k"]``); recall 0 is no
match.

Each actual step serves at most one reference step. The pairing is optimal (a maximum matching,
or a maximum-credit assignment when retrieval steps give partial credit), and among optimal
pairings the one using the latest actual steps is chosen.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from openevals._contract import EvaluatorInfo, make_async_evaluator, make_evaluator
from openevals._declare import async_twin
from openevals._repr import show
from openevals.rag._steps_assign import group_by, latest_class_matching, max_weight_pairs
from openevals.rag._steps_compare import (
    CSV,
    JSON,
    SPARQL_RESULTS,
    TSV,
    ActualStep,
    RefStep,
    Unparsable,
    output_key,
    prepare_actual_step,
    prepare_ref_step,
    retrieved_ids,
)
from openevals.rag.ranking import recall_batch
from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator

__all__ = [
    "CSV",
    "JSON",
    "MAX_RECALL_PAIRS",
    "SPARQL_RESULTS",
    "TSV",
    "LevelRule",
    "create_async_steps_evaluator",
    "create_steps_evaluator",
]

LevelRule = Literal["last", "all"]
_LEVEL_RULES = ("last", "all")

MAX_RECALL_PAIRS = 100_000
"""At most this many (reference retrieval step x actual retrieval step) pairs per level.

Retrieval steps earn partial credit, so pairing them is a weighted assignment (cubic in the
worst case) rather than the near-linear matching used for every other step."""

_TIE_BREAK = 1e-9  # total weight of the "prefer later steps" bonus next to recall credits


# --------------------------------------------------------------------------- parsing


def _reference_levels(reference_outputs: Any, retrieval: frozenset[str]) -> list[list[RefStep]]:
    value = reference_outputs
    if isinstance(value, Mapping):
        for name in ("reference_steps", "steps"):
            if name in value:
                value = value[name]
                break
        else:
            raise ValueError(
                "`reference_outputs` is a dict, so it must hold the levels under "
                f"'reference_steps' (or 'steps'); got keys {show(sorted(map(str, value)))}"
            )
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise TypeError(
            "`reference_outputs` must be a non-empty list of levels (lists of step dicts), a flat "
            "list of step dicts (one level), or a dict with 'reference_steps'; got "
            f"{type(value).__name__} {show(value)}"[:300]
        )
    if all(isinstance(item, Mapping) for item in value):
        raw_levels: list[Any] = [value]
    elif all(isinstance(item, (list, tuple)) for item in value):
        raw_levels = list(value)
    else:
        raise TypeError(
            "`reference_outputs` mixes step dicts and levels; give either a list of levels "
            "(lists of step dicts) or one flat list of step dicts"
        )
    levels: list[list[RefStep]] = []
    for level, raw_level in enumerate(raw_levels):
        if not raw_level:
            raise ValueError(
                f"reference_outputs[{level}] is an empty level; every level needs steps"
            )
        levels.append([prepare_ref_step(s, level, i, retrieval) for i, s in enumerate(raw_level)])
    return levels


def _actual_steps(outputs: Any, retrieval: frozenset[str]) -> tuple[list[ActualStep], str | None]:
    """The actual steps, and the target's error message when it reported a failure."""
    value, where = outputs, "`outputs`"
    if isinstance(value, Mapping):
        for name in ("actual_steps", "steps"):
            if name in value:
                value, where = value[name], f"`outputs[{name!r}]`"
                break
        else:
            if value.get("status") == "error":
                return [], str(value.get("error") or "the target reported status 'error'")
            raise ValueError(
                "`outputs` is a dict, so it must hold the steps under 'actual_steps' (or 'steps'), "
                f"or report status 'error'; got keys {show(sorted(map(str, value)))}"
            )
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{where} must be a list of step dicts (name, args, output, status, id) or a dict "
            f"with 'actual_steps'; got {type(value).__name__}. Pass [] when the agent ran no "
            "step."
        )
    return [prepare_actual_step(s, i, retrieval) for i, s in enumerate(value)], None


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class _Pair:
    ref: RefStep
    actual: ActualStep
    score: float
    partial: bool  # scored by recall (retrieval step) rather than earning 1


def _signature(ref: RefStep, compare_args: bool) -> tuple[Any, Any]:
    """(selector, expected): an actual step fits ``ref`` iff ``_read(selector, actual)`` equals
    ``expected``. The selector says what is read; refs with equal selectors share one read."""
    args_required = (compare_args or not ref.has_output) and ref.args is not None
    selector = (args_required, ref.spec)
    return selector, (ref.args if args_required else None, ref.expected)


def _read(selector: tuple[Any, Any], actual: ActualStep) -> tuple[Any, Any] | None:
    args_required, spec = selector
    if spec is None:
        return (actual.args if args_required else None, None)
    if actual.output is None:
        return None
    try:
        return (actual.args if args_required else None, output_key(spec, actual.output))
    except Unparsable:
        return None


def _match_unit(refs: list[RefStep], actual: list[ActualStep], compare_args: bool) -> list[_Pair]:
    classes = group_by([_signature(r, compare_args) for r in refs])
    keys = list(classes)
    by_selector: dict[Any, dict[Any, int]] = {}
    for position, (selector, expected) in enumerate(keys):
        by_selector.setdefault(selector, {})[expected] = position
    fits: list[list[int]] = []
    for step in actual:
        options: list[int] = []
        for selector, table in by_selector.items():
            read = _read(selector, step)
            found = None if read is None else table.get(read)
            if found is not None:
                options.append(found)
        fits.append(options)
    assigned = latest_class_matching([len(classes[key]) for key in keys], fits)
    taken: dict[int, list[int]] = {}
    for j, chosen in enumerate(assigned):
        if chosen is not None:
            taken.setdefault(chosen, []).append(j)
    pairs = []
    for c, steps in taken.items():
        for r, j in zip(classes[keys[c]], steps, strict=False):  # earliest refs take earliest
            pairs.append(_Pair(refs[r], actual[j], 1.0, False))
    return pairs


def _recalls(refs: list[RefStep], actual: list[ActualStep]) -> dict[tuple[Any, ...], float]:
    """Recall@k of every (reference ids, retrieved ids, k) combination that shares an id."""
    wanted: dict[int | None, set[tuple[Any, ...]]] = {}
    for step in actual:
        ids = _ids(step)
        if ids is None:
            continue
        top = set(ids[: step.k])
        for ref in refs:
            if ref.relevant is not None and not top.isdisjoint(ref.relevant):
                wanted.setdefault(step.k, set()).add((ref.relevant, tuple(ids)))
    found: dict[tuple[Any, ...], float] = {}
    for k, combos in wanted.items():
        ordered = list(combos)
        batch = recall_batch([list(c[1]) for c in ordered], [list(c[0]) for c in ordered], k=k)
        for combo, score in zip(ordered, batch.scores, strict=True):
            relevant, retrieved = combo
            found[relevant, retrieved, k] = float(score or 0.0)
    return found


def _ids(step: ActualStep) -> list[Any] | None:
    if step.output is None:
        return None
    try:
        ids: list[Any] = step.output.parsed("ids", retrieved_ids)
    except Unparsable:
        return None
    return ids


def _match_weighted(
    refs: list[RefStep], actual: list[ActualStep], compare_args: bool, level: int
) -> list[_Pair]:
    n, m = len(refs), len(actual)
    if n * m > MAX_RECALL_PAIRS:
        raise ValueError(
            f"reference_outputs[{level}] has {n} reference '{refs[0].name}' steps scored by "
            f"recall and `outputs` has {m} executed ones: {n * m} pairs, more than the "
            f"{MAX_RECALL_PAIRS} that step scoring pairs optimally. Split the level, or pass "
            "retrieval_steps=() to compare these steps by equality (which scales to any size)."
        )
    recalls = _recalls(refs, actual)
    signatures = [_signature(r, compare_args) for r in refs]
    credit = [[0.0] * m for _ in range(n)]
    for i, ref in enumerate(refs):
        selector, expected = signatures[i]
        for j, step in enumerate(actual):
            if ref.relevant is None:
                credit[i][j] = 1.0 if _read(selector, step) == expected else 0.0
            elif not (selector[0] and step.args != ref.args) and (ids := _ids(step)) is not None:
                credit[i][j] = recalls.get((ref.relevant, tuple(ids), step.k), 0.0)
    # A bonus far below any difference in credit prefers the later of equally good steps.
    unit = _TIE_BREAK / ((n + 1) * (m + 1))
    weights = [[c + (j + 1) * unit if c > 0 else 0.0 for j, c in enumerate(row)] for row in credit]
    return [
        _Pair(refs[i], actual[j], credit[i][j], refs[i].relevant is not None)
        for i, j in max_weight_pairs(weights)
    ]


def _match_level(
    refs: list[RefStep], actual: list[ActualStep], compare_args: bool, level: int
) -> list[_Pair]:
    """Optimal pairing of one level's reference steps with actual steps; names must agree, so
    every name is its own independent problem."""
    pairs: list[_Pair] = []
    steps_by_name = group_by([a.name if a.usable else None for a in actual])
    for name, positions in group_by([r.name for r in refs]).items():
        group = [refs[i] for i in positions]
        candidates = [actual[j] for j in steps_by_name.get(name, [])]
        if not candidates:
            continue
        if any(r.relevant is not None for r in group):
            pairs += _match_weighted(group, candidates, compare_args, level)
        else:
            pairs += _match_unit(group, candidates, compare_args)
    return sorted(pairs, key=lambda p: p.ref.index)


# --------------------------------------------------------------------------- scoring


def _match_record(pair: _Pair, with_level: bool) -> dict[str, Any]:
    record: dict[str, Any] = {}
    if with_level:
        record["reference_level"] = pair.ref.level
    record.update(
        reference_index=pair.ref.index,
        reference_name=pair.ref.name,
        actual_index=pair.actual.index,
        actual_id=pair.actual.step_id,
    )
    if pair.partial:
        record["score"] = pair.score
    return record


def _too_deep(param: str) -> str:
    return (
        f"`{param}` holds a value nested too deeply to compare (or one that contains itself, "
        "or JSON text nested that deep); give steps plain JSON data of reasonable depth"
    )


@dataclass(frozen=True)
class _StepsScorer:
    compare_args: bool
    levels: LevelRule
    retrieval: frozenset[str]

    def score(
        self, *, outputs: Any = None, reference_outputs: Any = None
    ) -> tuple[float, str, dict[str, Any]]:
        try:
            levels = _reference_levels(reference_outputs, self.retrieval)
        except RecursionError:
            raise ValueError(_too_deep("reference_outputs")) from None
        try:
            actual, target_error = _actual_steps(outputs, self.retrieval)
            if self.levels == "all":
                score, comment, metadata = self._all_levels(levels, actual)
            else:
                score, comment, metadata = self._last_level(levels, actual)
        except RecursionError:
            raise ValueError(_too_deep("outputs")) from None
        if target_error is not None:
            metadata["target_error"] = target_error
            comment = f"the target reported an error, so no step matched: {target_error}"
        return score, comment, metadata

    def _last_level(
        self, levels: list[list[RefStep]], actual: list[ActualStep]
    ) -> tuple[float, str, dict[str, Any]]:
        last = levels[-1]
        pairs = _match_level(last, actual, self.compare_args, len(levels) - 1)
        matched_refs = {p.ref.index for p in pairs}
        metadata: dict[str, Any] = {
            "matches": [_match_record(p, False) for p in pairs],
            "matched": len(pairs),
            "reference_level": len(levels) - 1,
            "reference_steps": len(last),
            "actual_steps": len(actual),
            "unmatched_reference": [r.index for r in last if r.index not in matched_refs],
        }
        credit = sum(p.score for p in pairs)
        comment = (
            f"{len(pairs)} of {len(last)} step(s) of the last reference level matched an "
            "actual step"
        )
        if any(p.partial for p in pairs):
            comment += f"; with retrieval steps credited by recall, they earn {credit:.4g}"
        return credit / len(last), comment, metadata

    def _all_levels(
        self, levels: list[list[RefStep]], actual: list[ActualStep]
    ) -> tuple[float, str, dict[str, Any]]:
        level_scores = [0.0] * len(levels)
        pairs: list[_Pair] = []
        cut = len(actual)
        stopped_at = None
        for level in range(len(levels) - 1, -1, -1):
            found = _match_level(levels[level], actual[:cut], self.compare_args, level)
            level_scores[level] = sum(p.score for p in found) / len(levels[level])
            pairs = found + pairs
            if len(found) < len(levels[level]):
                stopped_at = level
                break
            cut = min(p.actual.index for p in found)
        matched_refs = {(p.ref.level, p.ref.index) for p in pairs}
        metadata: dict[str, Any] = {
            "matches": [_match_record(p, True) for p in pairs],
            "matched": len(pairs),
            "level_scores": level_scores,
            "reference_steps": sum(len(level) for level in levels),
            "actual_steps": len(actual),
            "unmatched_reference": [
                [r.level, r.index]
                for level in levels
                for r in level
                if (r.level, r.index) not in matched_refs
            ],
        }
        shares = ", ".join(f"level {i}: {s:.4g}" for i, s in enumerate(level_scores))
        comment = f"mean over {len(levels)} reference level(s) of the matched share ({shares})"
        if stopped_at is not None and stopped_at > 0:
            comment += (
                f"; level {stopped_at} is not fully matched, so earlier levels were not searched"
            )
        return sum(level_scores) / len(levels), comment, metadata


# --------------------------------------------------------------------------- factories


def _make_scorer(
    compare_args: Any, feedback_key: Any, levels: Any, retrieval_steps: Any
) -> tuple[_StepsScorer, str]:
    if not isinstance(compare_args, bool):
        raise TypeError(f"`compare_args` must be True or False; got {show(compare_args)}")
    if not isinstance(feedback_key, str) or not feedback_key:
        raise TypeError(f"`feedback_key` must be a non-empty string; got {show(feedback_key)}")
    if not isinstance(levels, str) or levels not in _LEVEL_RULES:
        raise ValueError(
            f"`levels` must be 'last' (score the last reference level) or 'all' (mean over every "
            f"level, as graphrag-eval 6.x); got {show(levels)}"
        )
    if (
        isinstance(retrieval_steps, (str, bytes, Mapping))
        or not isinstance(retrieval_steps, Collection)
        or not all(isinstance(n, str) and n for n in retrieval_steps)
    ):
        raise TypeError(
            "`retrieval_steps` must be a list/tuple/set of step names scored by recall@k (e.g. "
            f"['retrieval']; [] turns the rule off); got {show(retrieval_steps)}"[:300]
        )
    rule = cast("LevelRule", levels)
    return _StepsScorer(compare_args, rule, frozenset(retrieval_steps)), feedback_key


def _info(feedback_key: str) -> EvaluatorInfo:
    """Deterministic, but pairing steps level by level is not cheap on long runs (not pure)."""
    return EvaluatorInfo(run_name="steps_score", feedback_keys=(feedback_key,))


_SHELL: dict[str, Any] = {
    "passes": ("outputs", "reference_outputs"),
    "returns": "EvaluatorResult",
    "module": __name__,
}


def create_steps_evaluator(
    *,
    compare_args: bool = False,
    feedback_key: str = "steps_score",
    levels: LevelRule = "last",
    retrieval_steps: Sequence[str] | frozenset[str] = ("retrieval",),
) -> SimpleEvaluator:
    """Score an agent's executed steps against reference steps grouped in levels.

    ``outputs``: the actual steps (dicts with ``name``, ``args``, ``output``, ``status``, ``id``)
    or a target record ``{"actual_steps": [...], ...}``. ``reference_outputs``: a list of levels
    (lists of reference steps), a flat list of steps (one level) or ``{"reference_steps": ...}``.

    ``levels="last"`` (default) scores the share of the last level's steps matched by some actual
    step; ``levels="all"`` averages the share of every level (graphrag-eval 6.x). Steps named in
    ``retrieval_steps`` earn the recall@k of their retrieved ids instead of 1. The pairs are in
    ``metadata["matches"]``.
    """
    scorer, key = _make_scorer(compare_args, feedback_key, levels, retrieval_steps)
    return make_evaluator(scorer.score, _info(key), **_SHELL)


def _async_evaluator(options: dict[str, Any]) -> SimpleAsyncEvaluator:
    scorer, key = _make_scorer(**options)
    return make_async_evaluator(scorer.score, _info(key).as_async(), **_SHELL)


create_async_steps_evaluator = async_twin(
    create_steps_evaluator, _async_evaluator, returns="SimpleAsyncEvaluator"
)
