"""Pairing two runs' scores by row id and building the :class:`Comparison` from them."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.comparison import stats
from openevals.comparison._runs import ERROR, NAN, VALUE, KeyScores, RunScores, row_details
from openevals.comparison._unpaired import same_inputs, unpaired_notes
from openevals.comparison.corrected import PairCalibration, corrected_difference
from openevals.comparison.results import (
    ChangedRow,
    Comparison,
    KeyComparison,
    key_comparison,
    verdict,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from openevals.comparison.paired import Options

_LISTED = 100
_CHANGES = {"boolean": ("pass -> fail", "fail -> pass"), "continuous": ("down", "up")}
"""A changed row's ``change`` by key kind: (the score fell, the score rose)."""


def _aligned(run: RunScores, key: str, positions: NDArray[np.int64]) -> tuple[Any, Any]:
    """(values, states) of ``key`` at ``positions`` (rows past the key's arrays are missing)."""
    import numpy as np

    scores = run.keys[key]
    values = np.frombuffer(scores.values, dtype=np.float64) if len(scores.values) else np.zeros(0)
    states = np.frombuffer(scores.states, dtype=np.int8) if len(scores.states) else np.zeros(0)
    inside = positions < len(states)
    v = np.full(len(positions), np.nan)
    s = np.zeros(len(positions), dtype=np.int8)
    v[inside] = values[positions[inside]]
    s[inside] = states[positions[inside]]
    return v, s


def _excluded(sb: Any, sc: Any) -> dict[str, int]:
    out = {
        "missing in baseline": int(((sb == 0) & (sc == VALUE)).sum()),
        "missing in candidate": int(((sc == 0) & (sb == VALUE)).sum()),
        "error in baseline": int(((sb == ERROR) & (sc != ERROR)).sum()),
        "error in candidate": int(((sc == ERROR) & (sb != ERROR)).sum()),
        "error in both": int(((sb == ERROR) & (sc == ERROR)).sum()),
        "NaN or no score": int(((sb == NAN) | (sc == NAN)).sum()),
    }
    return {reason: count for reason, count in out.items() if count}


def _holm(items: list[KeyComparison], alpha: float, min_effect: float) -> tuple[KeyComparison, ...]:
    adjusted = stats.holm(
        [k.p_value if k.corrected is None else k.corrected.p_value for k in items]
    )
    return tuple(
        replace(k, p_adjusted=p, verdict=verdict(k, p, alpha, min_effect))
        for k, p in zip(items, adjusted, strict=True)
    )


def build(
    base: RunScores, cand: RunScores, options: Options, calibration: PairCalibration | None
) -> Comparison:
    """The comparison of two runs' scores under the checked ``options`` of :func:`compare`."""
    import numpy as np

    shared = [i for i in base.ids if i in cand.ids]
    if not shared:
        raise ValueError(
            f"the runs share no row id (baseline {len(base.ids)} rows, candidate "
            f"{len(cand.ids)}): compare two runs of the same dataset (rows are paired by `id`; "
            "give your rows stable ids)"
        )
    only_b = [i for i in base.ids if i not in cand.ids]
    only_c = [i for i in cand.ids if i not in base.ids]
    pb = np.fromiter((base.ids[i] for i in shared), dtype=np.int64, count=len(shared))
    pc = np.fromiter((cand.ids[i] for i in shared), dtype=np.int64, count=len(shared))
    _errors_as_keys(base, cand)
    _errors_as_keys(cand, base)
    common = [k for k in base.keys if k in cand.keys]
    keys, alpha, min_effect = options.keys, options.alpha, options.min_effect
    if keys is not None:
        unknown = [k for k in keys if k not in base.keys and k not in cand.keys]
        if unknown:
            raise ValueError(
                f"`keys` names {show(unknown)}, which neither run has; the runs' keys: "
                f"{show(sorted(set(base.keys) | set(cand.keys)))}"
            )
        common = [k for k in keys if k in base.keys and k in cand.keys]

    def compared_key(
        key: str, kind: str, chosen: Any, higher: bool, excluded: Any
    ) -> KeyComparison:
        vb, vc, _ = pairs[key]
        with np.errstate(over="ignore", invalid="ignore"):  # huge scores: verdict() says so
            return key_comparison(
                key,
                kind,
                vb[chosen],
                vc[chosen],
                alpha=alpha,
                min_effect=min_effect,
                seed=options.seed,
                test=options.test,
                higher=higher,
                resamples=options.resamples,
                excluded=excluded,
            )

    excluded_keys: dict[str, str] = {}
    items: list[KeyComparison] = []
    pairs: dict[str, tuple[Any, Any, Any]] = {}
    for key in common:
        in_base, in_cand = base.keys[key].kinds, cand.keys[key].kinds
        kinds = in_base | in_cand
        odd = sorted(k for k in kinds if k not in ("boolean", "continuous"))
        if odd:
            excluded_keys[key] = f"scores that are not finite numbers or booleans: {odd}"
            continue
        if in_base and in_cand and in_base != in_cand:
            excluded_keys[key] = (
                f"{'/'.join(sorted(in_base))} in the baseline but {'/'.join(sorted(in_cand))} "
                "in the candidate: the runs scored it differently, so its rows cannot be paired"
            )
            continue
        kind = "boolean" if kinds == {"boolean"} else "continuous"
        vb, sb = _aligned(base, key, pb)
        vc, sc = _aligned(cand, key, pc)
        both = (sb == VALUE) & (sc == VALUE)
        pairs[key] = (vb, vc, both)
        higher = key not in options.lower_is_better
        items.append(compared_key(key, kind, both, higher, _excluded(sb, sc)))
    if not items and not excluded_keys and options.judge is None:
        raise ValueError(
            "the runs have no feedback key in common to compare (baseline: "
            f"{show(sorted(base.keys))}, candidate: {show(sorted(cand.keys))})"
        )
    if calibration is not None:
        items = _corrected(items, calibration, pairs, alpha)
    compared = _holm(items, alpha, min_effect)
    groups: dict[str, tuple[KeyComparison, ...]] = {}
    if options.group_by is not None:
        labels = np.array([str(base.groups[p]) for p in pb], dtype=object)
        for group in sorted(set(labels.tolist())):
            mask = labels == group
            per_group = [
                compared_key(
                    item.key, item.kind, pairs[item.key][2] & mask, item.higher_is_better, {}
                )
                for item in items
            ]
            groups[group] = _holm(per_group, alpha, min_effect)
    changed = _changed(base, cand, shared, compared, pairs, options.max_rows)
    matched = same_inputs(base, cand, only_b, only_c)
    notes = unpaired_notes(base, cand, only_b, only_c, matched)
    for key, reason in excluded_keys.items():
        notes.append(f"key {show(key)} not compared: {reason}")
    return Comparison(
        baseline=_label(base),
        candidate=_label(cand),
        keys=compared,
        rows_baseline=len(base.ids),
        rows_candidate=len(cand.ids),
        rows_paired=len(shared),
        only_in_baseline=tuple(only_b[:_LISTED]),
        only_in_candidate=tuple(only_c[:_LISTED]),
        count_only_in_baseline=len(only_b),
        count_only_in_candidate=len(only_c),
        unpaired_same_inputs=matched,
        keys_only_in_baseline=tuple(sorted(k for k in base.keys if k not in cand.keys)),
        keys_only_in_candidate=tuple(sorted(k for k in cand.keys if k not in base.keys)),
        excluded_keys=excluded_keys,
        evaluators_only_in_baseline=tuple(sorted(base.evaluators - cand.evaluators)),
        evaluators_only_in_candidate=tuple(sorted(cand.evaluators - base.evaluators)),
        changed=changed,
        groups=groups,
        alpha=alpha,
        min_effect=min_effect,
        seed=options.seed,
        notes=tuple(notes),
    )


def _corrected(
    items: list[KeyComparison],
    calibration: PairCalibration,
    pairs: dict[str, tuple[Any, Any, Any]],
    alpha: float,
) -> list[KeyComparison]:
    """``items`` with the calibrated key's corrected difference (its verdict then uses it)."""
    compared = [k.key for k in items]
    key = calibration.key
    if key is None and len(compared) == 1:
        key = compared[0]
    if key not in compared:
        raise ValueError(
            f"`calibration` is of key {show(key)}, which is not among the compared keys {compared}"
            if key is not None
            else f"`calibration` does not name its key; compare one key (`keys=`) of {compared}"
        )
    vb, vc, both = pairs[key]
    differences = (vc - vb)[both]
    if len(differences) < 2:
        raise ValueError(f"key {show(key)} has {len(differences)} paired row(s); need 2")
    found = corrected_difference(calibration, differences, 1.0 - alpha)
    return [replace(k, corrected=found) if k.key == key else k for k in items]


def _errors_as_keys(run: RunScores, other: RunScores) -> None:
    """A key ``other`` scored whose evaluator failed on ``run``'s rows is ``run``'s too (errors
    on those rows), so the failures show as exclusions instead of a key 'in one run only'."""
    for key, scores in other.keys.items():
        failed = run.errors.get(scores.evaluator)
        if key in run.keys or not failed:
            continue
        mine = run.keys[key] = KeyScores(evaluator=scores.evaluator)
        for pos in failed:
            mine.put(pos, ERROR)


def _label(run: RunScores) -> str:
    if isinstance(run.source, (str, bytes, os.PathLike)):
        return str(run.source)
    return f"{run.label} (EvaluationResult)"


def _changed(
    base: RunScores,
    cand: RunScores,
    shared: list[str],
    compared: tuple[KeyComparison, ...],
    pairs: dict[str, tuple[Any, Any, Any]],
    max_rows: int,
) -> tuple[ChangedRow, ...]:
    """Flips (boolean keys) and the largest changes (numbers), with outputs and comments."""
    import numpy as np

    picked: list[tuple[str, int, str]] = []
    for item in compared:
        vb, vc, both = pairs[item.key]
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.where(both, vc - vb, 0.0)
        order = np.argsort(-np.abs(d), kind="stable")
        for index in order[d[order] != 0][:max_rows]:
            picked.append((item.key, int(index), _CHANGES[item.kind][bool(d[index] > 0)]))
    wanted = {shared[i] for _, i, _ in picked}
    details_b = row_details(base, wanted)
    details_c = row_details(cand, wanted)
    rows = []
    for key, index, change in picked:
        row_id = shared[index]
        vb, vc, _ = pairs[key]
        db = details_b.get(row_id, {})
        dc = details_c.get(row_id, {})
        rows.append(
            ChangedRow(
                id=row_id,
                key=key,
                change=change,
                baseline_score=float(vb[index]),
                candidate_score=float(vc[index]),
                group=base.groups[base.ids[row_id]],
                baseline_outputs=db.get("outputs"),
                candidate_outputs=dc.get("outputs"),
                baseline_comment=(db.get("comments") or {}).get(key),
                candidate_comment=(dc.get("comments") or {}).get(key),
            )
        )
    return tuple(rows)
