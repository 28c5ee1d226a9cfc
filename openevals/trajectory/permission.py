"""Tool permission: did the agent call only the tools it may call? (agentevals PR #108)

A deterministic least-privilege check of one trajectory against an allow list and/or a deny
list, with no reference trajectory: a denied tool is never authorised (the deny list wins), and
with an allow list, nothing outside it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, cast

from openevals._contract import EvaluatorInfo
from openevals._declare import async_twin, evaluator_for
from openevals._repr import show
from openevals.trajectory._parsing import flatten_calls, parse_trajectory
from openevals.types import EvaluatorResult

__all__ = [
    "create_async_trajectory_tool_permission_evaluator",
    "create_trajectory_tool_permission_evaluator",
]

_KEY = "trajectory_tool_permission"
_INFO = EvaluatorInfo(run_name=_KEY, feedback_keys=(_KEY,), pure=True)


def _tool_names(value: Any, name: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f'`{name}` must be a list of tool names (e.g. ["search", "reply"]); got {show(value)}'
        )
    names = list(value)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise TypeError(f"`{name}` must hold non-empty tool-name strings; got {show(bad[0])}")
    return frozenset(names)


def _scorer(
    allowed: frozenset[str] | None, denied: frozenset[str]
) -> Callable[..., tuple[float, str | None]]:
    def score(*, outputs: Any) -> tuple[float, str | None]:
        if outputs is None:
            raise ValueError(f"{_KEY} needs `outputs` (the agent trajectory); got None")
        calls = flatten_calls(parse_trajectory(outputs, "outputs"))
        refused = Counter(
            call.name
            for call in calls
            if call.name in denied or (allowed is not None and call.name not in allowed)
        )
        if not refused:
            return 1.0, None
        authorised = len(calls) - sum(refused.values())
        listed = ", ".join(
            f"{show(name)} x{n}" if n > 1 else show(name) for name, n in sorted(refused.items())
        )
        return authorised / len(calls), (
            f"{sum(refused.values())} of {len(calls)} tool call(s) not authorised: {listed}"
        )

    return score


def _evaluator(options: dict[str, Any], *, is_async: bool) -> Any:
    allowed = _tool_names(options["allowed_tools"], "allowed_tools")
    denied = _tool_names(options["denied_tools"], "denied_tools")
    if allowed is None and denied is None:
        raise ValueError(
            "create_trajectory_tool_permission_evaluator needs `allowed_tools`, `denied_tools` or "
            "both (lists of tool names)"
        )
    return evaluator_for(
        is_async,
        _scorer(allowed, denied or frozenset()),
        _INFO,
        passes=("outputs",),
        name=f"{_KEY}_async" if is_async else _KEY,
        module=__name__,
    )


def create_trajectory_tool_permission_evaluator(
    *,
    allowed_tools: Iterable[str] | None = None,
    denied_tools: Iterable[str] | None = None,
) -> Callable[..., EvaluatorResult]:
    """Build an evaluator checking that an agent called only tools it is authorised to call.

    Args:
        allowed_tools: the tools the agent may call (least privilege); ``None`` allows every tool
            not denied.
        denied_tools: tools the agent must never call; a denial wins over ``allowed_tools``.

    The evaluator takes ``outputs``, an agent trajectory (OpenAI-style dicts or LangChain
    messages, one message, or ``{"messages": [...]}``), and returns ``{"key":
    "trajectory_tool_permission", "score": float, "comment": ...}``: the share of tool calls that
    were authorised (1.0 when no tool was called), and a comment naming each unauthorised tool
    with its count. Raises ValueError without either list, TypeError for a list that is not of
    tool-name strings (here), ValueError for a missing trajectory (at the call).
    """
    options = {"allowed_tools": allowed_tools, "denied_tools": denied_tools}
    return cast(Callable[..., EvaluatorResult], _evaluator(options, is_async=False))


create_async_trajectory_tool_permission_evaluator = async_twin(
    create_trajectory_tool_permission_evaluator,
    lambda options: _evaluator(options, is_async=True),
    returns="Callable[..., Any]",
)
