"""The CI gate of a comparison: significant regressions and drops beyond a threshold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from openevals._repr import show
from openevals.comparison._unpaired import unpaired_gate
from openevals.comparison.stats import NOT_FINITE

if TYPE_CHECKING:
    from openevals.comparison.results import Comparison

__all__ = ["check", "failures", "parse_max_drop"]


def _check_drops(max_drop: Mapping[str, float] | None) -> dict[str, float]:
    if max_drop is None:
        return {}
    if not isinstance(max_drop, Mapping):
        raise TypeError(
            f"`max_drop` must be a dict of feedback key -> threshold; got {show(max_drop)}"
        )
    out = {}
    for key, value in max_drop.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"`max_drop[{show(key)}]` must be a number >= 0; got {show(value)}")
        out[str(key)] = float(value)
    return out


def failures(
    comparison: Comparison,
    *,
    fail_on_regression: bool = True,
    max_drop: Mapping[str, float] | None = None,
    allow_unpaired: float = 0.0,
) -> list[str]:
    """One line per tripped gate (empty: the candidate may ship).

    A gate never judges a partial pairing silently: when more than ``allow_unpaired`` (a
    fraction of the rows of both runs) are not paired, it raises
    :class:`~openevals.comparison._unpaired.UnpairedRowsError` (a ``ValueError``) saying how
    many and how to give rows stable ids.
    """
    drops = _check_drops(max_drop)
    if fail_on_regression or drops:
        unpaired_gate(comparison, allow_unpaired)
    compared = {k.key: k for k in comparison.keys}
    unknown = [key for key in drops if key not in compared]
    if unknown:
        raise ValueError(
            f"`max_drop` names {show(unknown)}, which the comparison does not have; compared keys: "
            f"{show(sorted(compared))}"
        )
    out = []
    for item in comparison.keys:
        if item.verdict == NOT_FINITE and (fail_on_regression or item.key in drops):
            out.append(
                f"{item.key}: the statistics are not finite (means {item.baseline_mean} -> "
                f"{item.candidate_mean}, difference {item.difference}): no verdict, so no pass; "
                "look for scores near the float range's ends or infinite ones"
            )
            continue
        if fail_on_regression and item.verdict == "regressed" and item.corrected is not None:
            fixed = item.corrected
            out.append(
                f"{item.key}: significant regression, judge-corrected difference "
                f"{fixed.value:+.4g} [{fixed.low:+.3g}, {fixed.high:+.3g}] (raw {item.difference:+.4g}, "
                f"adjusted p {item.p_adjusted:.3g})"
            )
        elif fail_on_regression and item.verdict == "regressed":
            out.append(
                f"{item.key}: significant regression, {item.baseline_mean:.4g} -> "
                f"{item.candidate_mean:.4g} (difference {item.difference:+.4g}, adjusted p "
                f"{item.p_adjusted:.3g})"
            )
        limit = drops.get(item.key)
        if limit is not None and item.difference is not None:
            drop = -item.difference if item.higher_is_better else item.difference
            if not drop <= limit:  # a NaN drop fails too
                out.append(f"{item.key}: mean fell by {drop:.4g}, more than the allowed {limit:g}")
    return out


def check(
    comparison: Comparison,
    *,
    fail_on_regression: bool = True,
    max_drop: Mapping[str, float] | None = None,
    allow_unpaired: float = 0.0,
) -> None:
    """Raise ``AssertionError`` naming the tripped gates, with the per-key table (and
    ``UnpairedRowsError`` as :func:`failures` does)."""
    tripped = failures(
        comparison,
        fail_on_regression=fail_on_regression,
        max_drop=max_drop,
        allow_unpaired=allow_unpaired,
    )
    if tripped:
        raise AssertionError(
            "the candidate regressed:\n  " + "\n  ".join(tripped) + "\n\n" + str(comparison)
        )


def parse_max_drop(items: list[str]) -> dict[str, float]:
    """``["KEY=0.02", ...]`` (the CLI's ``--max-drop``) as a dict; ``ValueError`` names the bad one."""
    out = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not key or number < 0:
            raise ValueError(
                f"--max-drop expects KEY=NUMBER (e.g. correctness=0.02); got {show(item)}"
            )
        out[key] = number
    return out
