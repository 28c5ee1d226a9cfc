"""Trajectory matching: compare the tool calls an agent made with a reference trajectory.

Four trajectory modes:

* ``strict`` - message by message: same number of messages, same role at every position, tool
  calls present at the same positions, and within each message the calls pair up one-to-one
  (order inside a message is free, order across messages is not). Message content is not compared.
* ``unordered`` - the tool calls of both trajectories are the same multiset (layout ignored).
* ``superset`` - every reference call is matched by a distinct output call.
* ``subset`` - every output call is matched by a distinct reference call.

Two calls can be paired when they name the same tool and the arguments matcher for that tool
accepts them (``exact``, ``ignore``, ``subset``, ``superset``, a list of field paths or a
comparator). Pairing is solved as a maximum bipartite matching, never greedily, so the verdict does
not depend on the order in which candidate calls appear. Calls whose matcher is an equivalence
(exact, ignore, field paths) are paired by counting per canonical key, which is linear; subset and
superset argument modes cancel identical calls first and only then build a candidate graph through
an inverted index of argument items; comparator overrides are asked about every same-name pair.

Arguments of any nesting depth are compared (deep ones take an iterative path); arguments that
contain themselves raise ``ValueError`` naming the side, message and tool.

The implementation is split by topic: :mod:`openevals.trajectory._parsing` (reading messages and
arguments), :mod:`openevals.trajectory._rules` (argument comparison options),
:mod:`openevals.trajectory._calls` (pairing calls); this module holds the verdicts and the
evaluator factories, and re-exports the names it always had.
"""

from __future__ import annotations

import json  # noqa: F401  (kept: ``openevals.trajectory.match.json`` is patched by tests)
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from openevals._contract import EvaluatorInfo
from openevals._declare import async_twin, evaluator_for
from openevals._repr import show

# Every name this module had before it was split stays importable from here.
from openevals.trajectory._calls import match_tool_calls as match_tool_calls
from openevals.trajectory._parsing import ParsedArgs as ParsedArgs
from openevals.trajectory._parsing import ParsedMessage as ParsedMessage
from openevals.trajectory._parsing import ToolCall as ToolCall
from openevals.trajectory._parsing import _Parser
from openevals.trajectory._parsing import flatten_calls as flatten_calls
from openevals.trajectory._parsing import parse_trajectory as parse_trajectory
from openevals.trajectory._rules import TOOL_ARGS_MATCH_MODES as TOOL_ARGS_MATCH_MODES
from openevals.trajectory._rules import TRAJECTORY_MATCH_MODES as TRAJECTORY_MATCH_MODES
from openevals.trajectory._rules import ArgsComparator as ArgsComparator
from openevals.trajectory._rules import ArgsRule as ArgsRule
from openevals.trajectory._rules import MatchConfig as MatchConfig
from openevals.types import (
    EvaluatorResult,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
    TrajectoryMatchMode,
)

__all__ = [
    "ToolArgsMatchMode",
    "ToolArgsMatchOverrides",
    "TrajectoryMatchMode",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_match_evaluator",
]

# How many unmatched calls a comment lists before summarising the rest.
_COMMENT_MAX_CALLS = 5


# --------------------------------------------------------------------------- verdicts


def _describe_calls(calls: Sequence[ToolCall]) -> str:
    shown = ", ".join(c.describe() for c in calls[:_COMMENT_MAX_CALLS])
    if len(calls) > _COMMENT_MAX_CALLS:
        shown += f", ... and {len(calls) - _COMMENT_MAX_CALLS} more"
    return shown


def _order(calls: list[ToolCall]) -> list[ToolCall]:
    return sorted(calls, key=lambda c: c.message_index)


def _unmatched_comment(
    unmatched_out: list[ToolCall], unmatched_ref: list[ToolCall], *, in_message: bool = False
) -> str:
    parts = []
    where = " in that message" if in_message else ""
    if unmatched_ref:
        parts.append(
            f"{len(unmatched_ref)} reference tool call(s) not matched by any output call{where}: "
            + _describe_calls(_order(unmatched_ref))
        )
    if unmatched_out:
        parts.append(
            f"{len(unmatched_out)} output tool call(s) not matched by any reference call{where}: "
            + _describe_calls(_order(unmatched_out))
        )
    return "; ".join(parts)


def _strict_divergence(
    config: MatchConfig, outs: Sequence[ParsedMessage], refs: Sequence[ParsedMessage], index: int
) -> str | None:
    out, ref = outs[index], refs[index]
    if out.role != ref.role:
        return f"role differs (outputs {show(out.role)}, reference_outputs {show(ref.role)})"
    if bool(out.calls) != bool(ref.calls):
        has, lacks = (
            ("outputs", "reference_outputs") if out.calls else ("reference_outputs", "outputs")
        )
        return f"{has} has tool calls but {lacks} has none"
    if not out.calls:
        return None
    unmatched_out, unmatched_ref = match_tool_calls(config, out.calls, ref.calls)
    if not unmatched_out and not unmatched_ref:
        return None
    return "tool calls differ: " + _unmatched_comment(unmatched_out, unmatched_ref, in_message=True)


def _strict(
    config: MatchConfig, outs: list[ParsedMessage], refs: list[ParsedMessage]
) -> tuple[bool, str | None]:
    length_note = None
    if len(outs) != len(refs):
        length_note = (
            f"outputs has {len(outs)} messages, reference_outputs has {len(refs)} (length mismatch)"
        )
    for index in range(min(len(outs), len(refs))):
        reason = _strict_divergence(config, outs, refs, index)
        if reason is not None:
            comment = f"first divergence at message {index}: {reason}"
            if length_note:
                comment += f"; also {length_note}"
            return False, comment
    if length_note:
        return False, f"first divergence at message {min(len(outs), len(refs))}: {length_note}"
    return True, None


def _unordered_family(
    config: MatchConfig, outs: list[ToolCall], refs: list[ToolCall]
) -> tuple[bool, str | None]:
    unmatched_out, unmatched_ref = match_tool_calls(config, outs, refs)
    mode = config.mode
    if mode == "superset":
        failed, unmatched_out = bool(unmatched_ref), []
    elif mode == "subset":
        failed, unmatched_ref = bool(unmatched_out), []
    else:
        failed = bool(unmatched_out or unmatched_ref)
    if not failed:
        return True, None
    counts = f"outputs have {len(outs)} tool call(s), reference_outputs {len(refs)}"
    return False, f"{counts}; " + _unmatched_comment(unmatched_out, unmatched_ref)


def evaluate_trajectories(
    config: MatchConfig, outputs: Any, reference_outputs: Any
) -> tuple[bool, str | None]:
    """The pure core of every trajectory match evaluator: ``(score, comment)``."""
    parser = _Parser()
    parsed_out = parser.trajectory(outputs, "outputs")
    parsed_ref = parser.trajectory(reference_outputs, "reference_outputs")
    if config.mode == "strict":
        return _strict(config, parsed_out, parsed_ref)
    return _unordered_family(config, flatten_calls(parsed_out), flatten_calls(parsed_ref))


def make_scorer(config: MatchConfig) -> Callable[..., tuple[bool, str | None]]:
    """A scorer for ``_run_evaluator``: extra keyword arguments (``inputs``, ...) are ignored."""

    def scorer(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> tuple[bool, str | None]:
        return evaluate_trajectories(config, outputs, reference_outputs)

    return scorer


# --------------------------------------------------------------------------- factories


def _info(config: MatchConfig) -> EvaluatorInfo:
    key = f"trajectory_{config.mode}_match"
    return EvaluatorInfo(run_name=key, feedback_keys=(key,), pure=True)


def _evaluator(config: MatchConfig, *, is_async: bool) -> Any:
    return evaluator_for(
        is_async,
        make_scorer(config),
        _info(config),
        paired=True,
        name="_async_trajectory_match_evaluator" if is_async else "_trajectory_match_evaluator",
        module=__name__,
    )


def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Callable[..., EvaluatorResult]:
    """Build an evaluator comparing an agent trajectory's tool calls with a reference trajectory.

    Args:
        trajectory_match_mode: ``"strict"`` (same messages, roles and per-message tool calls, in
            order), ``"unordered"`` (same multiset of tool calls), ``"subset"`` (every output call
            appears in the reference) or ``"superset"`` (every reference call appears in the output).
        tool_args_match_mode: how arguments of two calls of the same tool are compared:
            ``"exact"``, ``"ignore"``, ``"subset"`` (output args within reference args) or
            ``"superset"`` (output args include all reference args).
        tool_args_match_overrides: per tool name, a mode string, a list of (dotted) argument paths
            that must be present and equal on both sides, or a comparator
            ``(output_args, reference_args) -> bool``.

    The evaluator takes ``outputs`` and ``reference_outputs`` (lists of OpenAI-style dicts or
    LangChain messages, a single message, or ``{"messages": [...]}``) and returns
    ``{"key": "trajectory_<mode>_match", "score": bool, "comment": ...}``; the comment explains a
    failed match. Invalid options raise ``ValueError`` here, at creation.
    """
    config = MatchConfig(
        trajectory_match_mode=trajectory_match_mode,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )
    return cast(Callable[..., EvaluatorResult], _evaluator(config, is_async=False))


def _async_evaluator(options: dict[str, Any]) -> Callable[..., Awaitable[EvaluatorResult]]:
    evaluator = _evaluator(MatchConfig(**options), is_async=True)
    return cast(Callable[..., Awaitable[EvaluatorResult]], evaluator)


create_async_trajectory_match_evaluator = async_twin(
    create_trajectory_match_evaluator,
    _async_evaluator,
    returns="Callable[..., Awaitable[EvaluatorResult]]",
    note="same options, same results",
)


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
