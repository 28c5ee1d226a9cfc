"""How the arguments of two calls of one tool are compared (trajectory match options)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from openevals._repr import show
from openevals._structure import equal, freeze
from openevals.trajectory._parsing import ToolCall

TRAJECTORY_MATCH_MODES: Final = ("strict", "unordered", "subset", "superset")
TOOL_ARGS_MATCH_MODES: Final = ("exact", "ignore", "subset", "superset")

ArgsComparator = Callable[[dict[str, Any], dict[str, Any]], Any]


_MISSING: Final = object()


def _get_path(args: Any, path: tuple[str, ...]) -> Any:
    current = args
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return _MISSING
        current = current[part]
    return current


_NAMES: Final = ("output tool-call arguments", "reference tool-call arguments")


def _same(output_value: Any, reference_value: Any, names: tuple[str, str] = _NAMES) -> bool:
    """``output_value == reference_value``, at any nesting depth; a value that contains itself
    raises ``ValueError`` naming it by ``names`` (side, message index and tool of each call)."""
    try:
        return bool(output_value == reference_value)
    except RecursionError:
        return equal(output_value, reference_value, names[0], names[1])


def _at(names: tuple[str, str], key: Any) -> tuple[str, str]:
    return (f"{names[0]}[{show(key)}]", f"{names[1]}[{show(key)}]")


class ArgsRule:
    """How the arguments of two calls of one tool are compared.

    ``kind`` is one of ``exact``, ``ignore``, ``subset``, ``superset`` (output args are a
    subset/superset of the reference args), ``paths`` (the listed dotted paths must be present on
    both sides and equal) or ``custom`` (a comparator ``(output_args, reference_args) -> bool``).
    """

    __slots__ = ("comparator", "kind", "paths")

    def __init__(
        self,
        kind: str,
        *,
        paths: tuple[tuple[str, ...], ...] = (),
        comparator: ArgsComparator | None = None,
    ) -> None:
        self.kind = kind
        self.paths = paths
        self.comparator = comparator

    def matches(
        self,
        output_args: dict[str, Any],
        reference_args: dict[str, Any],
        names: tuple[str, str] = _NAMES,
    ) -> bool:
        """Pairwise predicate (used for comparators and for values without a canonical key).

        ``names`` name the two argument dicts in errors, e.g. ``outputs[2] tool call 'search'
        arguments`` (see ``ParsedArgs.where``).
        """
        kind = self.kind
        if kind == "exact":
            return _same(output_args, reference_args, names)
        if kind == "ignore":
            return True
        if kind == "subset":
            return all(
                k in reference_args and _same(v, reference_args[k], _at(names, k))
                for k, v in output_args.items()
            )
        if kind == "superset":
            return all(
                k in output_args and _same(output_args[k], v, _at(names, k))
                for k, v in reference_args.items()
            )
        if kind == "paths":
            for path in self.paths:
                left, right = _get_path(output_args, path), _get_path(reference_args, path)
                if left is _MISSING or right is _MISSING:
                    return False
                dotted = ".".join(path)
                where = (f"{names[0]} path {show(dotted)}", f"{names[1]} path {show(dotted)}")
                if not _same(left, right, where):
                    return False
            return True
        assert self.comparator is not None
        return bool(self.comparator(output_args, reference_args))

    def key(self, call: ToolCall) -> Any:
        """Canonical key for equivalence kinds (``exact``/``paths``); ``_MISSING`` = unmatchable."""
        if self.kind == "exact":
            return call.parsed.items()
        frozen = []
        for path in self.paths:
            value = _get_path(call.args, path)
            if value is _MISSING:
                return _MISSING
            frozen.append(freeze(value, f"{call.parsed.where} path {show('.'.join(path))}"))
        return tuple(frozen)


_OVERRIDE_HELP = (
    "accepted: one of 'exact', 'ignore', 'subset', 'superset', a non-empty list of argument paths "
    "that must be equal (dotted paths reach into nested objects, e.g. ['city', 'filters.date']), "
    "or a callable (output_args, reference_args) -> bool"
)


def _override_rule(tool: str, value: Any) -> ArgsRule | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value not in TOOL_ARGS_MATCH_MODES:
            raise ValueError(
                f"tool_args_match_overrides[{show(tool)}] = {show(value)} is not a valid override; "
                + _OVERRIDE_HELP
            )
        return ArgsRule(value)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(
                f"tool_args_match_overrides[{show(tool)}] is an empty list, which would compare "
                "nothing (use 'ignore' for that); " + _OVERRIDE_HELP
            )
        paths = []
        for path in value:
            parts = tuple(path.split(".")) if isinstance(path, str) else ()
            if not parts or not all(parts):
                raise ValueError(
                    f"tool_args_match_overrides[{show(tool)}] contains {show(path)}, which is not a "
                    "field path (a non-empty string, dots separating nested keys); "
                    + _OVERRIDE_HELP
                )
            paths.append(parts)
        return ArgsRule("paths", paths=tuple(paths))
    if callable(value):
        return ArgsRule("custom", comparator=value)
    raise ValueError(
        f"tool_args_match_overrides[{show(tool)}] = {show(value)} ({type(value).__name__}) is not a valid "
        "override; " + _OVERRIDE_HELP
    )


class MatchConfig:
    """Validated, immutable settings of one trajectory evaluator."""

    __slots__ = ("default_rule", "mode", "overrides")

    def __init__(
        self,
        *,
        trajectory_match_mode: str = "strict",
        tool_args_match_mode: str = "exact",
        tool_args_match_overrides: Mapping[str, Any] | None = None,
    ) -> None:
        if trajectory_match_mode not in TRAJECTORY_MATCH_MODES:
            raise ValueError(
                f"trajectory_match_mode must be one of {', '.join(map(repr, TRAJECTORY_MATCH_MODES))}; "
                f"got {show(trajectory_match_mode)}"
            )
        if tool_args_match_mode not in TOOL_ARGS_MATCH_MODES:
            raise ValueError(
                f"tool_args_match_mode must be one of {', '.join(map(repr, TOOL_ARGS_MATCH_MODES))}; "
                f"got {show(tool_args_match_mode)}"
            )
        overrides: dict[str, ArgsRule] = {}
        if tool_args_match_overrides is not None:
            if not isinstance(tool_args_match_overrides, Mapping):
                raise TypeError(
                    "tool_args_match_overrides must be a dict mapping tool names to overrides; got "
                    f"{type(tool_args_match_overrides).__name__}"
                )
            for tool, value in tool_args_match_overrides.items():
                if not isinstance(tool, str):
                    raise TypeError(
                        "tool_args_match_overrides keys must be tool names (str); got "
                        f"{show(tool)} ({type(tool).__name__})"
                    )
                rule = _override_rule(tool, value)
                if rule is not None:
                    overrides[tool] = rule
        self.mode = trajectory_match_mode
        self.default_rule = ArgsRule(tool_args_match_mode)
        self.overrides = overrides

    def rule_for(self, tool_name: str) -> ArgsRule:
        return self.overrides.get(tool_name, self.default_rule)
