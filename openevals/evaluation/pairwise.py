"""Pairwise comparison of several systems in one batch run: ``evaluate(..., systems=...)``.

``systems=`` names the systems whose outputs each row holds, in one of two layouts:

* a list of names, ``systems=["gpt", "claude", "llama"]``: each row's ``outputs`` is a dict of
  system name -> that system's output;
* a dict of system name -> row field (a dotted path), ``systems={"gpt": "answer_gpt", "claude":
  "answer_claude"}``: one column per system.

Every evaluator is then a *pairwise* evaluator (e.g. :func:`openevals.llm.create_pairwise_llm_as_judge`)
and runs once per row and pair of systems, as its own named evaluator ``"NAME[a vs b]"`` - so the
runner's concurrency, judge cache, resume and progress bar apply to each comparison unchanged. A
comparison's result is recorded under the key ``"KEY[a vs b]"`` with ``a``'s score (1 win, 0.5
tie, 0 loss), so its aggregate mean is ``a``'s score against ``b``.

After the run, :func:`summarize` turns the verdicts into, per evaluator, win/tie/loss rates for
every pair, a Bradley-Terry ranking (both with bootstrap intervals, :mod:`openevals.pairwise.stats`)
and the order-flip rate: the share of comparisons judged in both orders where the judge preferred
the same *position* both times, so the verdict flipped with the order.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from openevals._repr import show
from openevals._stats import Estimate, bootstrap_weights, estimate
from openevals.data.rows import MISSING, field_at
from openevals.evaluation.evaluators import RunEvaluator

__all__ = ["PairwisePlan", "PairwiseSummary", "Systems"]


@dataclass(frozen=True)
class Systems:
    """The systems of a pairwise run and where each row holds their outputs."""

    names: tuple[str, ...]
    columns: Mapping[str, str] | None
    """System name -> dotted row field; ``None`` when ``outputs`` is a dict keyed by name."""

    @classmethod
    def parse(cls, value: Any) -> Systems:
        columns: dict[str, str] | None = None
        if isinstance(value, Mapping):
            columns = {}
            for name, path in value.items():
                if not isinstance(path, str) or not path:
                    raise TypeError(
                        f"systems: the row field of system {show(name)} must be a non-empty dotted "
                        f"path (str); got {show(path)}"
                    )
                columns[name] = path
            names = list(value)
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            names = list(value)
        else:
            raise TypeError(
                "systems must be a list of system names (each row's outputs is a dict keyed by "
                "them) or a dict of system name -> row field; got "
                f"{type(value).__name__} {show(value)}"
            )
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError(f"systems: names must be non-empty strings; got {show(name)}")
        if len(set(names)) != len(names):
            raise ValueError(f"systems: each system must be named once; got {show(names)}")
        if len(names) < 2:
            raise ValueError(
                f"systems: a pairwise comparison needs at least two systems; got {show(names)}. "
                "Pass two or more names (or leave systems out to score one system's outputs)"
            )
        return cls(tuple(names), columns)

    def output(self, fields: Mapping[str, Any], name: str) -> Any:
        """System ``name``'s output in a row (``KeyError`` naming the field if it is missing)."""
        if self.columns is not None:
            value = field_at(fields, self.columns[name])
            if value is MISSING:
                raise KeyError(
                    f"this row has no field {show(self.columns[name])} (the output of system "
                    f"{show(name)}); fields: {show(sorted(fields))}"
                )
            return value
        outputs = fields.get("outputs")
        if not isinstance(outputs, Mapping) or name not in outputs:
            held = sorted(outputs) if isinstance(outputs, Mapping) else type(outputs).__name__
            raise KeyError(
                f"this row's outputs hold no output of system {show(name)} (outputs: {held}); with "
                "systems=[...] each row's outputs must be a dict of system name -> output"
            )
        return outputs[name]


def _comparison(value: Any, a: str, b: str, name: str) -> list[dict[str, Any]]:
    """A comparative result (``{"key", "scores", ...}``) as one result with ``a``'s score."""
    scores = value.get("scores") if isinstance(value, Mapping) else None
    if not isinstance(scores, Mapping) or a not in scores or b not in scores:
        raise TypeError(
            f"evaluator {show(name)} is not a pairwise evaluator: it returned "
            f"{type(value).__name__} {show(value, 200)}, not {{'key', 'scores': {{{show(a)}: ..., "
            f"{show(b)}: ...}}}}. With systems=, every evaluator must compare two outputs "
            "(e.g. create_pairwise_llm_as_judge)"
        )
    sa, sb = float(scores[a]), float(scores[b])
    winner = a if sa > sb else b if sb > sa else None
    metadata = dict(value.get("metadata") or {})
    metadata.update(pair=[a, b], winner=winner, scores={a: sa, b: sb})
    key = str(value.get("key") or name)
    return [
        {
            "key": f"{key}[{a} vs {b}]",
            "score": sa,
            "comment": value.get("comment"),
            "metadata": metadata,
        }
    ]


def _pair_evaluator(ev: RunEvaluator, systems: Systems, a: str, b: str) -> RunEvaluator:
    name = f"{ev.name}[{a} vs {b}]"

    def arguments(fields: dict[str, Any]) -> dict[str, Any]:
        outputs = {a: systems.output(fields, a), b: systems.output(fields, b)}
        return ev.kwargs_for({**fields, "outputs": outputs})

    if ev.is_async:

        async def compare_async(**fields: Any) -> list[dict[str, Any]]:
            return _comparison(await ev.fn(**arguments(fields)), a, b, ev.name)

        fn: Any = compare_async
    else:

        def compare(**fields: Any) -> list[dict[str, Any]]:
            return _comparison(ev.fn(**arguments(fields)), a, b, ev.name)

        fn = compare
    # Its info, fail-fast and fingerprint are the pairwise evaluator's; it reads whole rows.
    return replace(
        ev, name=name, fn=fn, accepts=None, fields={}, inline=False, requires=frozenset()
    )


@dataclass(frozen=True)
class PairwiseSummary:
    """The comparisons of one pairwise evaluator over a run.

    Attributes:
        pairs: per pair of systems that met: wins/ties/losses and their rates with intervals
            (:class:`openevals.pairwise.stats.PairRecord`, from the first system's side).
        ranking: the Bradley-Terry ranking with bootstrap intervals (``None`` with a note when no
            comparison finished, or when the systems that were compared form several groups that
            never met: then strengths across groups are undefined).
        group_rankings: when the compared systems form several groups that never met (every
            comparison between them failed), one ranking per group of two or more systems,
            strengths comparable within a group only; empty otherwise.
        order_flips / judged_twice / order_flip_rate: comparisons judged in both orders whose
            verdict followed the position, out of those judged twice, and the rate with its
            interval (``None`` when no comparison was judged twice).
        inconsistent: comparisons whose two verdicts disagreed in any way (then scored a tie).
    """

    evaluator: str
    systems: tuple[str, ...]
    comparisons: int
    errors: int
    pairs: tuple[Any, ...]
    ranking: Any
    order_flips: int
    judged_twice: int
    order_flip_rate: Estimate | None
    inconsistent: int
    notes: tuple[str, ...] = field(default=())
    group_rankings: tuple[Any, ...] = field(default=())

    def win_rate(self, a: str, b: str) -> Estimate | None:
        """``a``'s win rate against ``b`` (``None`` if they never met)."""
        for record in self.pairs:
            if (record.a, record.b) == (a, b):
                return record.win_rate  # type: ignore[no-any-return]
            if (record.a, record.b) == (b, a):
                return record.loss_rate  # type: ignore[no-any-return]
        return None

    def to_dict(self) -> dict[str, Any]:
        ranking = self.ranking
        return {
            "evaluator": self.evaluator,
            "systems": list(self.systems),
            "comparisons": self.comparisons,
            "errors": self.errors,
            "order_flips": self.order_flips,
            "judged_twice": self.judged_twice,
            "order_flip_rate": self.order_flip_rate.as_dict() if self.order_flip_rate else None,
            "inconsistent": self.inconsistent,
            "pairs": [
                {
                    "a": p.a,
                    "b": p.b,
                    "n": p.n,
                    "wins": p.wins,
                    "ties": p.ties,
                    "losses": p.losses,
                    "win_rate": p.win_rate.as_dict(),
                    "tie_rate": p.tie_rate.as_dict(),
                    "loss_rate": p.loss_rate.as_dict(),
                }
                for p in self.pairs
            ],
            "ranking": None if ranking is None else _ranking_dict(ranking),
            "group_rankings": [_ranking_dict(r) for r in self.group_rankings],
            "notes": list(self.notes),
        }


def _ranking_dict(ranking: Any) -> list[dict[str, Any]]:
    return [
        {
            "system": s.system,
            "rank": s.rank,
            "rank_low": s.rank_low,
            "rank_high": s.rank_high,
            "strength": s.strength.as_dict(),
        }
        for s in ranking.systems
    ]


@dataclass(frozen=True)
class PairwisePlan:
    """How a run with ``systems=`` expands its evaluators, and how it reads them back."""

    systems: Systems
    groups: dict[str, list[tuple[str, str, str]]]
    """Original evaluator name -> ``(expanded name, a, b)`` per pair of systems."""
    evaluators: list[RunEvaluator]

    @classmethod
    def create(cls, systems: Any, evaluators: list[RunEvaluator]) -> PairwisePlan:
        parsed = Systems.parse(systems)
        expanded: list[RunEvaluator] = []
        groups: dict[str, list[tuple[str, str, str]]] = {}
        for ev in evaluators:
            if "outputs" in ev.fields:
                raise ValueError(
                    f"evaluator {show(ev.name)} maps `outputs` to {show(ev.fields['outputs'])}, "
                    "but with systems= the outputs come from the systems; remove that mapping"
                )
            for a, b in itertools.combinations(parsed.names, 2):
                pair = _pair_evaluator(ev, parsed, a, b)
                expanded.append(pair)
                groups.setdefault(ev.name, []).append((pair.name, a, b))
        return cls(parsed, groups, expanded)

    def summarize(
        self, rows: Sequence[Mapping[str, Any]], *, resamples: int = 1000, seed: int = 0
    ) -> dict[str, PairwiseSummary]:
        return {
            name: _summary(name, self.systems.names, pairs, rows, resamples, seed)
            for name, pairs in self.groups.items()
        }


def _summary(
    name: str,
    systems: tuple[str, ...],
    pairs: list[tuple[str, str, str]],
    rows: Sequence[Mapping[str, Any]],
    resamples: int,
    seed: int,
) -> PairwiseSummary:
    from openevals.pairwise.stats import bradley_terry, connected_groups, win_rates

    comparisons: list[tuple[str, str, str | None]] = []
    flips: list[float] = []
    errors = inconsistent = 0
    for row in rows:
        evaluations = row.get("evaluations") or {}
        for expanded, a, b in pairs:
            entry = evaluations.get(expanded)
            if entry is None:
                continue
            if entry.get("status") != "success" or not entry.get("results"):
                errors += 1
                continue
            metadata = entry["results"][0].get("metadata") or {}
            comparisons.append((a, b, metadata.get("winner")))
            if metadata.get("position_consistent") is False:
                inconsistent += 1
            if len(metadata.get("verdicts") or ()) == 2:
                flips.append(1.0 if metadata.get("order_flip") else 0.0)
    notes: list[str] = []
    records: tuple[Any, ...] = ()
    ranking = None
    group_rankings: tuple[Any, ...] = ()
    if comparisons:
        records = tuple(win_rates(comparisons, resamples=resamples, seed=seed))
        # The rows are already recorded: a ranking that cannot be fitted is reported, never raised.
        groups = connected_groups(comparisons)
        if len(groups) == 1:
            ranking = bradley_terry(comparisons, resamples=resamples, seed=seed)
        else:
            shown = " | ".join(str(list(g)) for g in groups)
            notes.append(
                f"the compared systems form {len(groups)} groups that never met (every comparison "
                f"between them failed): {shown}; no ranking across groups, one ranking per group "
                "of two or more systems in `group_rankings`"
            )
            group_rankings = tuple(
                bradley_terry(
                    [c for c in comparisons if c[0] in group], resamples=resamples, seed=seed
                )
                for group in groups
                if len(group) > 1
            )
        met = {s for a, b, _ in comparisons for s in (a, b)}
        if met != set(systems):
            notes.append(f"never compared (every comparison failed): {sorted(set(systems) - met)}")
    else:
        notes.append("no comparison finished, so there is no ranking")
    flip_rate = None
    if flips:
        import numpy as np

        values = np.array(flips)
        weights = bootstrap_weights(len(values), resamples, seed)
        flip_rate = estimate(weights @ values / len(values), 0.95, "")
    return PairwiseSummary(
        evaluator=name,
        systems=systems,
        comparisons=len(comparisons),
        errors=errors,
        pairs=records,
        ranking=ranking,
        order_flips=int(sum(flips)),
        judged_twice=len(flips),
        order_flip_rate=flip_rate,
        inconsistent=inconsistent,
        notes=tuple(notes),
        group_rankings=group_rankings,
    )
