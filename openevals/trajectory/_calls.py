"""Pairing the tool calls of two trajectories (maximum bipartite matching, per tool)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openevals._matching import maximum_bipartite_matching
from openevals.trajectory._parsing import ToolCall, Unkeyable
from openevals.trajectory._rules import _MISSING, ArgsRule, MatchConfig


def _match_by_key(keys_out: Sequence[Any], keys_ref: Sequence[Any]) -> tuple[list[int], list[int]]:
    """Maximum matching when matching is an equivalence: pair equal keys, earliest first."""
    pool: dict[Any, list[int]] = {}
    unmatched_ref: list[int] = []
    for j in range(len(keys_ref) - 1, -1, -1):
        key = keys_ref[j]
        if key is _MISSING:
            unmatched_ref.append(j)
        else:
            pool.setdefault(key, []).append(j)
    unmatched_out: list[int] = []
    for i, key in enumerate(keys_out):
        candidates = pool.get(key) if key is not _MISSING else None
        if candidates:
            candidates.pop()
        else:
            unmatched_out.append(i)
    for remaining in pool.values():
        unmatched_ref.extend(remaining)
    unmatched_ref.sort()
    return unmatched_out, unmatched_ref


def _unmatched_from_matching(
    matching: Sequence[int | None], n_right: int
) -> tuple[list[int], list[int]]:
    matched_right = {m for m in matching if m is not None}
    unmatched_left = [i for i, m in enumerate(matching) if m is None]
    unmatched_right = [j for j in range(n_right) if j not in matched_right]
    return unmatched_left, unmatched_right


def _names(out: ToolCall, ref: ToolCall) -> tuple[str, str]:
    """How errors name the two calls' arguments: side, message index and tool."""
    return out.parsed.where, ref.parsed.where


def _match_pairwise(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """General case: ask the rule about every pair, then solve the bipartite matching."""
    adjacency = [
        [j for j, ref in enumerate(refs) if rule.matches(out.args, ref.args, _names(out, ref))]
        for out in outs
    ]
    matching = maximum_bipartite_matching(len(outs), len(refs), adjacency)
    return _unmatched_from_matching(matching, len(refs))


def _match_containment(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """``subset``/``superset`` argument modes (a preorder on argument item sets).

    Identical calls are paired first (safe: containment is reflexive and transitive, so some maximum
    matching pairs any two identical calls), the remainder is matched through an inverted index of
    argument items and Hopcroft-Karp.
    """
    items_out = [c.parsed.items() for c in outs]
    items_ref = [c.parsed.items() for c in refs]
    rest_out, rest_ref = _match_by_key(items_out, items_ref)
    if not rest_out or not rest_ref:
        return rest_out, rest_ref
    # "small" sides must be contained in "big" sides: superset mode = reference ⊆ output.
    if rule.kind == "superset":
        small_idx, small_items, big_idx, big_items = rest_ref, items_ref, rest_out, items_out
    else:
        small_idx, small_items, big_idx, big_items = rest_out, items_out, rest_ref, items_ref
    index: dict[Any, list[int]] = {}
    for pos, b in enumerate(big_idx):
        for item in big_items[b]:
            index.setdefault(item, []).append(pos)
    every = list(range(len(big_idx)))
    adjacency: list[list[int]] = []
    for s in small_idx:
        wanted = small_items[s]
        if not wanted:
            adjacency.append(every)
            continue
        best: list[int] | None = None
        for item in wanted:
            posting = index.get(item)
            if posting is None:
                best = []
                break
            if best is None or len(posting) < len(best):
                best = posting
        assert best is not None
        adjacency.append([pos for pos in best if wanted <= big_items[big_idx[pos]]])
    matching = maximum_bipartite_matching(len(small_idx), len(big_idx), adjacency)
    small_un, big_un = _unmatched_from_matching(matching, len(big_idx))
    small_left = [small_idx[k] for k in small_un]
    big_left = [big_idx[k] for k in big_un]
    if rule.kind == "superset":
        return sorted(big_left), sorted(small_left)
    return sorted(small_left), sorted(big_left)


def _match_same_tool(
    rule: ArgsRule, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[int], list[int]]:
    """Maximum matching between calls of one tool; returns unmatched positions on each side."""
    kind = rule.kind
    if kind == "ignore":
        n = min(len(outs), len(refs))
        return list(range(n, len(outs))), list(range(n, len(refs)))
    try:
        if kind in ("exact", "paths"):
            return _match_by_key([rule.key(c) for c in outs], [rule.key(c) for c in refs])
        if kind in ("subset", "superset"):
            return _match_containment(rule, outs, refs)
    except Unkeyable:
        pass  # values outside plain JSON: fall back to pairwise ``==`` comparisons
    return _match_pairwise(rule, outs, refs)


def _pairs(config: MatchConfig, out: ToolCall, ref: ToolCall) -> bool:
    return out.name == ref.name and config.rule_for(out.name).matches(
        out.args, ref.args, _names(out, ref)
    )


def _small_perfect_match(
    config: MatchConfig, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> bool:
    """Fast check for zero-, one- and two-call lists: is there a perfect matching?"""
    if not outs:
        return True
    if len(outs) == 1:
        return _pairs(config, outs[0], refs[0])
    o0, o1 = outs
    r0, r1 = refs
    return (_pairs(config, o0, r0) and _pairs(config, o1, r1)) or (
        _pairs(config, o0, r1) and _pairs(config, o1, r0)
    )


def match_tool_calls(
    config: MatchConfig, outs: Sequence[ToolCall], refs: Sequence[ToolCall]
) -> tuple[list[ToolCall], list[ToolCall]]:
    """A maximum matching between two lists of calls; returns the unmatched (outputs, references).

    Calls can only pair with calls of the same tool, so each tool is matched on its own.
    """
    if len(outs) == len(refs) <= 2 and _small_perfect_match(config, outs, refs):
        return [], []
    by_name: dict[str, tuple[list[ToolCall], list[ToolCall]]] = {}
    for side, calls in enumerate((outs, refs)):
        for call in calls:
            lists = by_name.get(call.name)
            if lists is None:
                lists = by_name[call.name] = ([], [])
            lists[side].append(call)
    unmatched_out: list[ToolCall] = []
    unmatched_ref: list[ToolCall] = []
    for name, (tool_outs, tool_refs) in by_name.items():
        if not tool_outs or not tool_refs:
            unmatched_out.extend(tool_outs)
            unmatched_ref.extend(tool_refs)
            continue
        un_out, un_ref = _match_same_tool(config.rule_for(name), tool_outs, tool_refs)
        unmatched_out.extend(tool_outs[i] for i in un_out)
        unmatched_ref.extend(tool_refs[j] for j in un_ref)
    return unmatched_out, unmatched_ref
