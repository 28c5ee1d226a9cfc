"""Type-check generated Python code with mypy (``mypy_succeeded``).

The code is never executed. Missing-import errors (``import-not-found``, ``import-untyped``) and
``note:`` lines never fail a sample. On failure the comment lists the remaining diagnostics, one per
line, as ``line:col: error: message [code]`` (no file paths); on success it is ``""`` (as in the
public release).

The evaluators also check many samples in one mypy process: ``evaluator.batch([...])`` and
``await async_evaluator.abatch([...])`` return exactly what per-sample calls return.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from openevals.code._typecheck import (
    Diagnostic,
    ProcessResult,
    RunReport,
    TypeChecker,
    base_name,
    diagnostics_by_file,
    has_option,
    typecheck_evaluator,
)
from openevals.code.base import AsyncBatchCodeCheckEvaluator, BatchCodeCheckEvaluator, code_factory
from openevals.code.extraction import CodeExtractionStrategy

__all__ = ["DEFAULT_MYPY_CLI_ARGS", "create_async_mypy_evaluator", "create_mypy_evaluator"]

DEFAULT_MYPY_CLI_ARGS: tuple[str, ...] = (
    "--no-incremental",
    "--disallow-untyped-calls",
    "--disallow-incomplete-defs",
    "--ignore-missing-imports",
)

# Appended after the caller's arguments so the output stays machine-readable (later flags win).
_OUTPUT_FLAGS = (
    "--show-column-numbers",
    "--show-error-codes",
    "--no-pretty",
    "--no-error-summary",
    "--no-color-output",
)
_IGNORED_CODES = frozenset({"import-not-found", "import-untyped", "import"})
_LINE = re.compile(
    r"^(?P<path>.+?\.pyi?):(?:(?P<line>-?\d+):)?(?:(?P<column>-?\d+):)?(?:-?\d+:-?\d+:)?"
    r" (?P<severity>error|warning|note): (?P<message>.*)$"
)
_CODE_SUFFIX = re.compile(r"^(?P<text>.*?)  \[(?P<code>[\w-]+)\]$")


def _position(value: Any, offset: int = 0) -> int | None:
    if isinstance(value, str):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value + offset < 1:
        return None
    return value + offset


def _parse_json_line(line: str) -> Diagnostic | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or "file" not in data:
        return None
    code = data.get("code")
    return Diagnostic(
        file=base_name(str(data["file"])),
        line=_position(data.get("line")),
        column=_position(data.get("column"), 1),
        severity=str(data.get("severity", "error")),
        message=str(data.get("message", "")),
        rule=code if isinstance(code, str) else None,
    )


def parse_mypy_line(line: str) -> Diagnostic | None:
    """One diagnostic from a line of mypy output (text, or JSON with ``-O json``), else None."""
    if line.startswith("{"):
        return _parse_json_line(line)
    match = _LINE.match(line)
    if match is None:
        return None
    message, rule = match.group("message"), None
    coded = _CODE_SUFFIX.match(message)
    if coded is not None:
        message, rule = coded.group("text"), coded.group("code")
    return Diagnostic(
        file=base_name(match.group("path")),
        line=_position(match.group("line")),
        column=_position(match.group("column")),
        severity=match.group("severity"),
        message=message,
        rule=rule,
    )


class MypyChecker(TypeChecker):
    """mypy: text output, exit status 2 with diagnostics when a file blocks further checking."""

    name = "mypy"
    binary = "mypy"
    success_comment = ""

    def command(self, executable: str, files: Sequence[str]) -> list[str]:
        argv = [executable, *self.cli_args]
        if not has_option(self.cli_args, "--python-executable", "--no-site-packages"):
            argv += ["--python-executable", sys.executable]
        return [*argv, *_OUTPUT_FLAGS, "--", *files]

    def read(self, result: ProcessResult, files: Sequence[str]) -> RunReport:
        diagnostics = [d for d in map(parse_mypy_line, result.stdout.splitlines()) if d]
        grouped = diagnostics_by_file(diagnostics, files)
        if result.returncode == 2:
            if not any(grouped.values()):
                raise RuntimeError(f"mypy failed (exit status 2): {result.excerpt()}")
            return RunReport(grouped, blocked=True)
        if result.returncode == 1 and not any(d.severity == "error" for d in diagnostics):
            raise RuntimeError(
                "mypy exited with status 1 but printed no error this evaluator could read: "
                f"{result.excerpt()}"
            )
        if result.returncode not in (0, 1):
            raise RuntimeError(f"mypy failed (exit status {result.returncode}): {result.excerpt()}")
        return RunReport(grouped)

    def ignores(self, diagnostic: Diagnostic) -> bool:
        return diagnostic.severity == "note" or diagnostic.rule in _IGNORED_CODES


def _mypy(
    options: dict[str, Any], *, is_async: bool
) -> BatchCodeCheckEvaluator | AsyncBatchCodeCheckEvaluator:
    """The evaluator of both mypy factories (``options``: theirs, by name)."""
    args, timeout = options.pop("mypy_cli_args"), options.pop("timeout")
    checker = MypyChecker(args, parameter="mypy_cli_args", timeout=timeout)
    return typecheck_evaluator(checker, options, is_async=is_async)


@code_factory(_mypy, "BatchCodeCheckEvaluator")
def create_mypy_evaluator(
    *,
    mypy_cli_args: Sequence[str] = DEFAULT_MYPY_CLI_ARGS,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    client: Any = None,
    model: str | None = None,
    timeout: float | None = None,
) -> object:
    """Create an evaluator that type-checks the code in ``outputs`` with mypy.

    Args:
        mypy_cli_args: arguments for mypy; they replace the defaults
            ``--no-incremental --disallow-untyped-calls --disallow-incomplete-defs
            --ignore-missing-imports``.
        code_extraction_strategy: ``"none"`` (the output is the code), ``"markdown_code_blocks"``
            or ``"llm"``.
        code_extractor: your own ``outputs -> code`` function (instead of a strategy).
        client: the LangChain chat model (or OpenAI client plus ``model``) for the ``"llm"``
            strategy.
        model: a ``"provider:model"`` string for the ``"llm"`` strategy.
        timeout: seconds one mypy process may take (None: no limit). A mypy that runs longer is
            stopped and the call raises :class:`~openevals.code.base.CheckTimeoutError` (a
            ``TimeoutError``); never a score.

    The evaluator returns ``{"key": "mypy_succeeded", "score": bool, "comment": ...}``; mypy is
    looked up next to the running Python interpreter first, then on PATH.
    """


@code_factory(_mypy, "AsyncBatchCodeCheckEvaluator")
def create_async_mypy_evaluator(
    *,
    mypy_cli_args: Sequence[str] = DEFAULT_MYPY_CLI_ARGS,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    client: Any = None,
    model: str | None = None,
    timeout: float | None = None,
) -> object:
    """Async twin of :func:`create_mypy_evaluator` (asyncio subprocess; ``abatch`` for batches)."""


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
