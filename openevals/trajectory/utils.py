"""Private helpers kept under the names the public release uses (thin wrappers).

The implementation lives in :mod:`openevals.trajectory.match`; these exist so code written against
the public package's private helpers keeps working.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from openevals._contract import EvaluatorInfo
from openevals._messages import convert_to_openai_message, normalize_to_openai_messages_list
from openevals._repr import show
from openevals.trajectory.match import (
    MatchConfig,
    evaluate_trajectories,
    flatten_calls,
    make_scorer,
    parse_trajectory,
)
from openevals.types import EvaluatorResult, ToolArgsMatchMode, ToolArgsMatchOverrides

__all__ = [
    "_convert_to_openai_message",
    "_extract_tool_calls",
    "_get_matcher_for_tool_name",
    "_is_trajectory_superset",
    "_normalize_to_openai_messages_list",
]

_normalize_to_openai_messages_list = normalize_to_openai_messages_list
_convert_to_openai_message = convert_to_openai_message


def _extract_tool_calls(messages: Any) -> list[dict[str, Any]]:
    """All tool calls of a trajectory, in order, as ``{"name": str, "args": dict}``."""
    return [
        {"name": c.name, "args": c.args}
        for c in flatten_calls(parse_trajectory(messages, "messages"))
    ]


def _get_matcher_for_tool_name(
    tool_call_name: str,
    tool_args_match_mode: ToolArgsMatchMode,
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    """The predicate ``(output_args, reference_args) -> bool`` used for calls of one tool."""
    config = MatchConfig(
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )
    return config.rule_for(tool_call_name).matches


def _is_trajectory_superset(
    outputs: Any,
    reference_outputs: Any,
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> bool:
    """True when every reference tool call is matched by a distinct output tool call."""
    return _legacy_scorer("superset")(
        outputs=outputs,
        reference_outputs=reference_outputs,
        tool_args_match_mode=tool_args_match_mode,
        tool_args_match_overrides=tool_args_match_overrides,
    )


def deprecated_info(key: str) -> EvaluatorInfo:
    """The info of a deprecated plain trajectory evaluator: ``key`` is run name and feedback key."""
    return EvaluatorInfo(run_name=key, feedback_keys=(key,), pure=True)


def _deprecated_run(
    runner: Callable[..., Any],
    info: EvaluatorInfo,
    function_name: str,
    mode: str,
    args_mode: str,
    outputs: Any,
    reference_outputs: Any,
    kwargs: dict[str, Any],
) -> Any:
    """Warn about the deprecated plain evaluator ``function_name`` and score one call with the
    settings it stands for, through ``runner`` (``run_scorer``, or ``arun_scorer``: then the
    caller awaits what this returns)."""
    import warnings

    replacement = (
        f"create_trajectory_match_evaluator(trajectory_match_mode={show(mode)}, "
        f"tool_args_match_mode={show(args_mode)})"
    )
    warnings.warn(
        f"{function_name} is deprecated; use {replacement} instead",
        DeprecationWarning,
        stacklevel=3,  # the caller of the deprecated evaluator
    )
    for name in ("tool_args_match_mode", "tool_args_match_overrides"):
        if name in kwargs:
            raise TypeError(
                f"{function_name}() does not accept {show(name)}; use {replacement} with the "
                "options you need"
            )
    config = MatchConfig(trajectory_match_mode=mode, tool_args_match_mode=args_mode)
    scorer = make_scorer(config)
    return runner(info, scorer, outputs=outputs, reference_outputs=reference_outputs, **kwargs)


def _deprecated_evaluators(
    key: str, mode: str, summary: str
) -> tuple[Callable[..., EvaluatorResult], Callable[..., Awaitable[EvaluatorResult]]]:
    """The deprecated plain evaluator ``key`` and its ``_async`` twin for one match mode.

    Both force ``tool_args_match_mode="ignore"`` (as the public release did), use ``key`` as
    feedback key and run name, and emit ``DeprecationWarning``.
    """
    from openevals._contract import arun_scorer, attach_info, run_scorer

    info = deprecated_info(key)

    def evaluator(*, outputs: Any, reference_outputs: Any, **kwargs: Any) -> EvaluatorResult:
        args = (key, mode, "ignore", outputs, reference_outputs, kwargs)
        return cast(EvaluatorResult, _deprecated_run(run_scorer, info, *args))

    async def evaluator_async(
        *, outputs: Any, reference_outputs: Any, **kwargs: Any
    ) -> EvaluatorResult:
        args = (key + "_async", mode, "ignore", outputs, reference_outputs, kwargs)
        return cast(EvaluatorResult, await _deprecated_run(arun_scorer, info, *args))

    attach_info(evaluator, info)
    attach_info(evaluator_async, info.as_async())
    evaluator.__name__ = evaluator.__qualname__ = key
    evaluator_async.__name__ = evaluator_async.__qualname__ = key + "_async"
    evaluator.__doc__ = f"Deprecated. {summary}\n\nKey ``{key}``. Emits ``DeprecationWarning``."
    evaluator_async.__doc__ = f"Deprecated async twin of :func:`{key}`."
    return evaluator, evaluator_async


def _legacy_scorer(mode: str, args_mode: ToolArgsMatchMode = "ignore") -> Callable[..., bool]:
    """The public-release ``_scorer`` helper of a deprecated module: the verdict alone
    (``tool_args_match_mode`` defaults to ``args_mode``)."""

    def _scorer(
        *,
        outputs: Any,
        reference_outputs: Any,
        tool_args_match_mode: ToolArgsMatchMode = args_mode,
        tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
        **kwargs: Any,
    ) -> bool:
        config = MatchConfig(
            trajectory_match_mode=mode,
            tool_args_match_mode=tool_args_match_mode,
            tool_args_match_overrides=tool_args_match_overrides,
        )
        return evaluate_trajectories(config, outputs, reference_outputs)[0]

    return _scorer


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
