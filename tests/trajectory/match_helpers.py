"""Builders and a brute-force reference matcher for the trajectory match tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

Call = tuple[str, dict[str, Any]]
Matcher = Callable[[dict[str, Any], dict[str, Any]], bool]


def tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """OpenAI-form tool call with JSON-string arguments."""
    return {"function": {"name": name, "arguments": json.dumps(args)}}


def ai(*calls: Call, content: str = "") -> dict[str, Any]:
    """Assistant message whose tool calls carry ``json.dumps``'d arguments."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [tool_call(name, args) for name, args in calls]
    return message


def user(content: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": content}


def tool(content: str = "result") -> dict[str, Any]:
    return {"role": "tool", "content": content}


def trajectory(groups: Sequence[Sequence[Call]]) -> list[dict[str, Any]]:
    """A user message, then per group an assistant message with those calls and a tool reply."""
    messages = [user()]
    for group in groups:
        messages.append(ai(*group))
        if group:
            messages.append(tool())
    return messages


# --------------------------------------------------------------------------- reference semantics


def exact(o: dict[str, Any], r: dict[str, Any]) -> bool:
    return o == r


def ignore(o: dict[str, Any], r: dict[str, Any]) -> bool:
    return True


def subset(o: dict[str, Any], r: dict[str, Any]) -> bool:
    return all(k in r and r[k] == v for k, v in o.items())


def superset(o: dict[str, Any], r: dict[str, Any]) -> bool:
    return all(k in o and o[k] == v for k, v in r.items())


ARG_MATCHERS: dict[str, Matcher] = {
    "exact": exact,
    "ignore": ignore,
    "subset": subset,
    "superset": superset,
}


def brute_max_matching(outs: Sequence[Call], refs: Sequence[Call], matcher: Matcher) -> int:
    """Size of a maximum matching, by exhaustive search (small inputs only)."""

    def edge(i: int, j: int) -> bool:
        return outs[i][0] == refs[j][0] and matcher(outs[i][1], refs[j][1])

    def best(i: int, used: frozenset[int]) -> int:
        if i == len(outs):
            return 0
        result = best(i + 1, used)  # leave output i unmatched
        for j in range(len(refs)):
            if j not in used and edge(i, j):
                result = max(result, 1 + best(i + 1, used | {j}))
        return result

    return best(0, frozenset())


def brute_verdict(mode: str, outs: Sequence[Call], refs: Sequence[Call], matcher: Matcher) -> bool:
    size = brute_max_matching(outs, refs, matcher)
    if mode == "superset":
        return size == len(refs)
    if mode == "subset":
        return size == len(outs)
    assert mode == "unordered"
    return len(outs) == len(refs) == size


def brute_strict(
    out_groups: Sequence[Sequence[Call]], ref_groups: Sequence[Sequence[Call]], matcher: Matcher
) -> bool:
    """Strict verdict for trajectories built with :func:`trajectory` (same helper layout)."""
    out_msgs, ref_msgs = trajectory(out_groups), trajectory(ref_groups)
    if len(out_msgs) != len(ref_msgs):
        return False
    if [m["role"] for m in out_msgs] != [m["role"] for m in ref_msgs]:
        return False
    if len(out_groups) != len(ref_groups):
        return False
    for og, rg in zip(out_groups, ref_groups, strict=True):
        if bool(og) != bool(rg):
            return False
        if not (len(og) == len(rg) == brute_max_matching(og, rg, matcher)):
            return False
    return True
