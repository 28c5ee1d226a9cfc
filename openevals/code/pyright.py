"""Type-check generated Python code with pyright (``pyright_succeeded``).

The code is never executed. Only ``error`` diagnostics fail a sample; missing imports
(``reportMissingImports``, ``reportMissingModuleSource``) are ignored. On failure the comment lists
the errors, one per line, as ``line:col: error: message [rule]`` (no file paths); on success it is
``"[]"`` (as in the public release, whose comment was a JSON list).

Imports resolve against the running Python environment (``--pythonpath`` is set to this
interpreter unless your ``pyright_cli_args`` choose an environment). ``evaluator.batch([...])`` and
``await async_evaluator.abatch([...])`` check many samples in one pyright process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openevals._repr import show
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

__all__ = [
    "PyrightChecker",
    "create_async_pyright_evaluator",
    "create_pyright_evaluator",
    "parse_pyright_output",
]

MISSING_IMPORT_RULES = frozenset({"reportMissingImports", "reportMissingModuleSource"})


def _load_report(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        # Tolerate lines printed before the report (e.g. by the pip wrapper installing pyright).
        start = stdout.find("\n{")
        if start < 0:
            raise
        return json.loads(stdout[start + 1 :])


def _position(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value + 1
    return None


def parse_pyright_output(stdout: str) -> list[Diagnostic]:
    """The diagnostics of ``pyright --outputjson`` (1-based positions); ValueError if unreadable."""
    try:
        report = _load_report(stdout)
    except json.JSONDecodeError:
        excerpt = stdout.strip()[:1000] or "<nothing>"
        raise ValueError(f"pyright did not print a JSON report; it printed: {excerpt}") from None
    items = report.get("generalDiagnostics") if isinstance(report, Mapping) else None
    if not isinstance(items, list):
        raise ValueError(
            f"pyright's JSON report has no 'generalDiagnostics' list: {show(report, 1000)}"
        )
    diagnostics = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        start = (
            item.get("range", {}).get("start", {}) if isinstance(item.get("range"), Mapping) else {}
        )
        rule = item.get("rule")
        diagnostics.append(
            Diagnostic(
                file=base_name(str(item.get("file", ""))),
                line=_position(start.get("line")),
                column=_position(start.get("character")),
                severity=str(item.get("severity", "error")),
                # pyright indents continuation lines with no-break spaces; plain spaces read better.
                message=str(item.get("message", "")).replace("\xa0", " "),
                rule=rule if isinstance(rule, str) else None,
            )
        )
    return diagnostics


class PyrightChecker(TypeChecker):
    """pyright with ``--outputjson``; only errors count."""

    name = "pyright"
    binary = "pyright"
    success_comment = "[]"

    def __init__(
        self,
        cli_args: Sequence[str],
        *,
        parameter: str = "pyright_cli_args",
        ignore_missing_imports: bool = True,
        timeout: float | None = None,
    ) -> None:
        super().__init__(cli_args, parameter=parameter, timeout=timeout)
        self.ignored_rules = MISSING_IMPORT_RULES if ignore_missing_imports else frozenset()

    def command(self, executable: str, files: Sequence[str]) -> list[str]:
        argv = [executable, "--outputjson", *self.cli_args]
        if not has_option(self.cli_args, "--level"):
            argv += ["--level", "error"]
        if not has_option(self.cli_args, "--pythonpath", "--venvpath", "-v", "--project", "-p"):
            argv += ["--pythonpath", sys.executable]
        return [*argv, *files]

    def read(self, result: ProcessResult, files: Sequence[str]) -> RunReport:
        if result.returncode not in (0, 1):
            raise RuntimeError(
                f"pyright failed (exit status {result.returncode}): {result.excerpt()}"
            )
        try:
            diagnostics = parse_pyright_output(result.stdout)
        except ValueError as exc:
            raise RuntimeError(str(exc)) from None
        return RunReport(diagnostics_by_file(diagnostics, files))

    def ignores(self, diagnostic: Diagnostic) -> bool:
        return diagnostic.severity != "error" or diagnostic.rule in self.ignored_rules


def _pyright(
    options: dict[str, Any], *, is_async: bool
) -> BatchCodeCheckEvaluator | AsyncBatchCodeCheckEvaluator:
    """The evaluator of both pyright factories (``options``: theirs, by name)."""
    checker = PyrightChecker(options.pop("pyright_cli_args"), timeout=options.pop("timeout"))
    return typecheck_evaluator(checker, options, is_async=is_async)


@code_factory(_pyright, "BatchCodeCheckEvaluator")
def create_pyright_evaluator(
    *,
    pyright_cli_args: Sequence[str] = (),
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    client: Any = None,
    model: str | None = None,
    timeout: float | None = None,
) -> object:
    """Create an evaluator that type-checks the code in ``outputs`` with pyright.

    Args:
        pyright_cli_args: extra arguments for ``pyright --outputjson``.
        code_extraction_strategy: ``"none"`` (the output is the code), ``"markdown_code_blocks"``
            or ``"llm"``.
        code_extractor: your own ``outputs -> code`` function (instead of a strategy).
        client: the LangChain chat model (or OpenAI client plus ``model``) for the ``"llm"``
            strategy.
        model: a ``"provider:model"`` string for the ``"llm"`` strategy.
        timeout: seconds one pyright process may take (None: no limit). A pyright that runs
            longer is stopped, with what it started, and the call raises
            :class:`~openevals.code.base.CheckTimeoutError` (a ``TimeoutError``); never a score.

    The evaluator returns ``{"key": "pyright_succeeded", "score": bool, "comment": ...}``; pyright
    is looked up next to the running Python interpreter first, then on PATH.
    """


@code_factory(_pyright, "AsyncBatchCodeCheckEvaluator")
def create_async_pyright_evaluator(
    *,
    pyright_cli_args: Sequence[str] = (),
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    client: Any = None,
    model: str | None = None,
    timeout: float | None = None,
) -> object:
    """Async twin of :func:`create_pyright_evaluator` (asyncio subprocess; ``abatch``)."""


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
