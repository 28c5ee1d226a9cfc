"""Judge panels: several judges (of any family) score the same call; one verdict, every vote kept.

    panel = create_judge_panel([judge_a, judge_b, judge_c], aggregate="majority")
    panel(inputs=..., outputs=...)
    # {'key': 'panel', 'score': True, 'comment': '2 of 3 judges: True (majority)',
    #  'metadata': {'votes': [{'judge': ..., 'score': ..., 'comment': ...}, ...], ...}}

The judges run concurrently: the sync panel on a thread pool of its own (each call in a copy of
the caller's context, so the batch runner's judge cache and usage hooks reach every judge), the
async panel with ``asyncio.gather`` (sync members in worker threads). A judge that fails makes
the panel fail (the runner records the error on the row): a verdict is never made up from the
votes that arrived.

How the votes become one score (the pure core, :func:`panel_verdict`):

* ``"majority"``: the most common vote; a tie between booleans is ``False`` (a panel that cannot
  agree does not pass), between other values the value the earliest judge gave;
* ``"mean"``: the mean of the votes (booleans as 0/1), a continuous score;
* ``"weighted"``: the mean with ``weights`` (one positive number per judge).

:func:`panel_agreement_of` reads the votes of a batch run back and measures how much the judges
agree (Krippendorff's alpha with its interval, the effective number of judges;
:mod:`openevals.trust.reliability`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import math
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from openevals._contract import (
    EvaluatorInfo,
    async_twin_of,
    display_name,
    info_of,
    is_async_callable,
    make_async_evaluator,
    make_evaluator,
)
from openevals._repr import show

if TYPE_CHECKING:
    from openevals.trust.reliability import Level, PanelAgreement
    from openevals.types import SimpleAsyncEvaluator, SimpleEvaluator

__all__ = [
    "create_async_judge_panel",
    "create_judge_panel",
    "panel_agreement_of",
    "panel_verdict",
]

Aggregate = Literal["majority", "mean", "weighted"]
_AGGREGATES = ("majority", "mean", "weighted")


@dataclass(frozen=True)
class Vote:
    """One judge's answer: its name, the feedback key read, the score and comment."""

    judge: str
    key: str
    score: Any
    comment: Any

    def as_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "key": self.key, "score": self.score, "comment": self.comment}


@dataclass(frozen=True)
class Panel:
    """The checked options of a panel (built once, at creation)."""

    judges: tuple[Any, ...]
    names: tuple[str, ...]
    keys: tuple[str | None, ...]
    aggregate: str
    weights: tuple[float, ...] | None
    feedback_key: str
    info: EvaluatorInfo = field(repr=False)


def _number(value: Any, judge: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    raise ValueError(
        f"judge {show(judge)} scored {show(value)}: the panel's mean needs numbers or booleans"
    )


def panel_verdict(
    votes: Sequence[Vote], aggregate: str, weights: Sequence[float] | None = None
) -> tuple[Any, str, dict[str, Any]]:
    """``(score, comment, metadata)`` of a panel from its ``votes`` (see the module docstring)."""
    metadata: dict[str, Any] = {
        "aggregate": aggregate,
        "votes": [v.as_dict() for v in votes],
    }
    if aggregate == "majority":
        tally = Counter(_hashable(v.score) for v in votes)
        top = max(tally.values())
        tied = [value for value, count in tally.items() if count == top]
        if len(tied) > 1 and all(isinstance(v, bool) for v in tied):
            score: Any = False
        else:
            score = next(v.score for v in votes if _hashable(v.score) in tied)
        agreeing = sum(1 for v in votes if _hashable(v.score) == _hashable(score))
        metadata["agreement"] = agreeing / len(votes)
        tie = " (a tie)" if len(tied) > 1 else ""
        return score, f"{agreeing} of {len(votes)} judges: {score}{tie} (majority)", metadata
    numbers = [_number(v.score, v.judge) for v in votes]
    w = list(weights) if aggregate == "weighted" and weights is not None else [1.0] * len(votes)
    value = sum(x * wi for x, wi in zip(numbers, w, strict=True)) / sum(w)
    spread = max(numbers) - min(numbers)
    metadata["spread"] = spread
    return value, f"{aggregate} of {len(votes)} judges: {value:.4g} (spread {spread:.4g})", metadata


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _read_vote(result: Any, key: str | None, name: str) -> Vote:
    """The vote in a judge's return value: its only result, or the one under ``key``."""
    results = result if isinstance(result, list) else [result]
    found = [r for r in results if isinstance(r, Mapping) and (key is None or r.get("key") == key)]
    if len(found) != 1:
        keys = [r.get("key") for r in results if isinstance(r, Mapping)]
        raise ValueError(
            f"panel judge {show(name)} returned {len(results)} result(s) with keys {show(keys)}; "
            + (
                f"none has the key {show(key)}"
                if key is not None
                else "pass `judge_keys=` to say which one is its vote"
            )
        )
    return Vote(name, str(found[0].get("key")), found[0].get("score"), found[0].get("comment"))


def _score_type(judges: Sequence[Any], aggregate: str) -> dict[str, Any]:
    if aggregate != "majority":
        return {"score_type": "continuous"}
    infos = [info_of(j) for j in judges]
    kinds = {(i.score_type, i.choices) if i is not None else (None, ()) for i in infos}
    if len(kinds) == 1:
        kind, choices = kinds.pop()
        if kind is not None:
            return {"score_type": kind, "choices": choices}
    return {}


def _panel(
    judges: Any,
    aggregate: Any,
    weights: Any,
    judge_keys: Any,
    feedback_key: Any,
    is_async: bool,
) -> Panel:
    if isinstance(judges, (str, bytes)) or not isinstance(judges, Sequence) or len(judges) < 2:
        raise TypeError(f"`judges` must be a list of at least 2 evaluators; got {show(judges)}")
    for index, judge in enumerate(judges):
        if not callable(judge):
            raise TypeError(f"`judges[{index}]` must be an evaluator; got {show(judge)}")
        if not is_async and is_async_callable(judge):
            raise TypeError(
                f"`judges[{index}]` ({display_name(judge)}) is async; a sync panel needs sync "
                "judges (use create_async_judge_panel for async ones)"
            )
    if aggregate not in _AGGREGATES:
        raise ValueError(f"`aggregate` must be one of {_AGGREGATES}; got {show(aggregate)}")
    if (aggregate == "weighted") != (weights is not None):
        raise ValueError("`weights` are given exactly when `aggregate` is 'weighted'")
    if weights is not None:
        if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
            raise TypeError(f"`weights` must be a list of numbers; got {show(weights)}")
        if len(weights) != len(judges) or not all(
            not isinstance(w, bool) and isinstance(w, (int, float)) and w > 0 and math.isfinite(w)
            for w in weights
        ):
            raise ValueError(
                f"`weights` must be {len(judges)} positive numbers, one per judge; got "
                f"{show(weights)}"
            )
    if judge_keys is None or isinstance(judge_keys, str):
        keys: tuple[str | None, ...] = (judge_keys,) * len(judges)
    elif isinstance(judge_keys, Sequence) and len(judge_keys) == len(judges):
        keys = tuple(judge_keys)
    else:
        raise TypeError(
            f"`judge_keys` must be a feedback key, or one per judge; got {show(judge_keys)}"
        )
    if not isinstance(feedback_key, str) or not feedback_key:
        raise TypeError(f"`feedback_key` must be a non-empty str; got {show(feedback_key)}")
    names = [display_name(j) for j in judges]
    seen: Counter[str] = Counter()
    unique = []
    for name in names:
        seen[name] += 1
        unique.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    infos = [info_of(j) for j in judges]
    models = [i.model for i in infos if i is not None and i.model]
    info = EvaluatorInfo(
        run_name="judge_panel",
        feedback_keys=(feedback_key,),
        model=", ".join(dict.fromkeys(models)) or None,
        judge=any(i is not None and i.judge for i in infos),
        is_async=is_async,
        **_score_type(judges, aggregate),
    )
    return Panel(
        judges=tuple(judges),
        names=tuple(unique),
        keys=keys,
        aggregate=aggregate,
        weights=None if weights is None else tuple(float(w) for w in weights),
        feedback_key=feedback_key,
        info=info,
    )


def _verdict(panel: Panel, answers: Sequence[Any]) -> tuple[Any, str, dict[str, Any]]:
    """The panel's verdict from its judges' answers (in the order of ``panel.judges``)."""
    votes = map(_read_vote, answers, panel.keys, panel.names)
    return panel_verdict(list(votes), panel.aggregate, panel.weights)


def _sync_scorer(panel: Panel, max_workers: int | None) -> Any:
    pool: list[ThreadPoolExecutor] = []

    lock = threading.Lock()

    def score(**call: Any) -> tuple[Any, str, dict[str, Any]]:
        with lock:  # one pool per panel, made at its first call
            if not pool:
                workers = max_workers or len(panel.judges)
                pool.append(ThreadPoolExecutor(workers, thread_name_prefix="judge-panel"))
        futures = [
            pool[0].submit(contextvars.copy_context().run, functools.partial(judge, **call))
            for judge in panel.judges
        ]
        wait(futures)  # every judge finishes before the first failure is raised
        return _verdict(panel, [f.result() for f in futures])

    return score


def _async_scorer(panel: Panel) -> Any:
    async def ask(judge: Any, call: dict[str, Any]) -> Any:
        if is_async_callable(judge):
            return await judge(**call)
        return await asyncio.to_thread(judge, **call)

    async def score(**call: Any) -> tuple[Any, str, dict[str, Any]]:
        return _verdict(panel, await asyncio.gather(*(ask(j, call) for j in panel.judges)))

    return score


def create_judge_panel(
    judges: Sequence[Any],
    *,
    aggregate: Aggregate = "majority",
    weights: Sequence[float] | None = None,
    judge_keys: str | Sequence[str | None] | None = None,
    feedback_key: str = "panel",
    max_workers: int | None = None,
) -> SimpleEvaluator:
    """A panel of sync ``judges`` (any evaluators: LLM judges, rubric judges, plain functions).

    Args:
        judges: at least 2 evaluators, called with the panel's own arguments.
        aggregate: ``"majority"``, ``"mean"`` or ``"weighted"`` (module docstring).
        weights: one positive number per judge, for ``aggregate="weighted"``.
        judge_keys: which result of each judge is its vote (one key for all, or one per judge;
            default: each judge's only result).
        feedback_key: the panel's result key.
        max_workers: threads for the judges' calls (default: one per judge).

    The result's ``metadata["votes"]`` holds every judge's score and comment. When every judge
    has an async twin, so does the panel, and the batch runner awaits it on its event loop.
    """
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise ValueError(f"`max_workers` must be an int >= 1 or None; got {show(max_workers)}")
    panel = _panel(judges, aggregate, weights, judge_keys, feedback_key, is_async=False)
    twins = [async_twin_of(j) for j in judges]
    info = panel.info
    if all(t is not None for t in twins):
        twin_panel = _panel(twins, aggregate, weights, judge_keys, feedback_key, is_async=True)
        twin = make_async_evaluator(
            _async_scorer(twin_panel), twin_panel.info, name="judge_panel", module=__name__
        )
        info = replace(info, twin=twin)
    return make_evaluator(
        _sync_scorer(panel, max_workers), info, name="judge_panel", module=__name__
    )


def create_async_judge_panel(
    judges: Sequence[Any],
    *,
    aggregate: Aggregate = "majority",
    weights: Sequence[float] | None = None,
    judge_keys: str | Sequence[str | None] | None = None,
    feedback_key: str = "panel",
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_judge_panel`: async judges are awaited together, sync ones
    run in worker threads."""
    panel = _panel(judges, aggregate, weights, judge_keys, feedback_key, is_async=True)
    return make_async_evaluator(
        _async_scorer(panel), panel.info, name="judge_panel", module=__name__
    )


def panel_agreement_of(
    result: Any,
    *,
    evaluator: str | None = None,
    level: Level | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelAgreement:
    """How much the judges of a panel agreed over a batch run (``evaluate(..., [panel])``).

    Reads every row's ``metadata["votes"]`` of the panel evaluator ``evaluator`` (default: the
    run's only panel) and returns :class:`~openevals.trust.reliability.PanelAgreement`. ``level``
    defaults to ``"nominal"`` when every vote is a boolean, else ``"interval"``.
    """
    from openevals.trust.reliability import panel_agreement

    ballots: dict[str, list[list[dict[str, Any]]]] = {}
    for row in result.rows:
        for name, entry in (row.get("evaluations") or {}).items():
            for item in entry.get("results") or ():
                votes = (item.get("metadata") or {}).get("votes")
                if isinstance(votes, list) and (evaluator is None or name == evaluator):
                    ballots.setdefault(name, []).append(votes)
    if len(ballots) != 1:
        raise ValueError(
            f"the run has panel votes from {show(sorted(ballots))}; pass `evaluator=` with one of them"
            if ballots
            else "the run has no panel votes"
            + (f" from evaluator {show(evaluator)}" if evaluator else "")
            + "; score it with create_judge_panel(...)"
        )
    rows = next(iter(ballots.values()))
    judges = list(dict.fromkeys(v["judge"] for votes in rows for v in votes))
    data = [
        [next((v["score"] for v in votes if v["judge"] == judge), None) for votes in rows]
        for judge in judges
    ]
    if level is None:
        flat = [v for column in data for v in column if v is not None]
        level = "nominal" if all(isinstance(v, bool) for v in flat) else "interval"
    return panel_agreement(data, level=level, resamples=resamples, seed=seed, confidence=confidence)
