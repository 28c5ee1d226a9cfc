"""Running a type checker (mypy, pyright) over one or many code samples.

Each sample is written to its own file (``sample_0001.py``, ...) in one temporary directory and the
checker runs once over all of them, in that directory; its diagnostics are mapped back to samples by
file name. The checker never executes the code.

The decisions live in one generator, :func:`check_plan`, which yields the processes to run and
receives their output; :func:`run_checks` drives it with ``subprocess``, :func:`arun_checks` with
``asyncio`` subprocesses (never blocking the event loop), both through the package's one driver
pair (:mod:`openevals._drivers`), so the sync and async evaluators cannot drift apart.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from openevals._contract import EvaluatorInfo
from openevals._drivers import adrive, drive
from openevals._judge.options import check_timeout
from openevals._repr import show
from openevals._text import check_text
from openevals.code.base import (
    AsyncCodeEvaluator,
    CheckScore,
    CheckTimeoutError,
    CodeEvaluator,
    code_extraction,
)

MAX_FILES_PER_RUN = 400
"""Samples checked by one checker process; bigger batches run as several processes in a row."""

NEUTRAL_MODULE_NAME = "outputs"
"""Sample file names in checker messages are replaced by this name, so a message does not depend
on the sample's position in a batch."""


@dataclass(frozen=True)
class Diagnostic:
    """One checker message, located in a sample (1-based line and column when known)."""

    file: str
    line: int | None
    column: int | None
    severity: str
    message: str
    rule: str | None

    def render(self) -> str:
        """``line:col: severity: message [rule]``."""
        if self.line is not None and self.column is not None:
            where = f"{self.line}:{self.column}: "
        elif self.line is not None:
            where = f"{self.line}: "
        else:
            where = ""
        rule = f" [{self.rule}]" if self.rule else ""
        return f"{where}{self.severity}: {self.message}{rule}"


@dataclass(frozen=True)
class Invocation:
    """A checker process to run: its argument vector, working directory, and the seconds it may
    take (None: no limit); ``name`` is the checker's, for the timeout error."""

    argv: tuple[str, ...]
    cwd: str
    timeout: float | None = None
    name: str = "the type checker"


@dataclass(frozen=True)
class ProcessResult:
    """What a finished process printed and returned."""

    returncode: int
    stdout: str
    stderr: str

    def excerpt(self, limit: int = 2000) -> str:
        text = "\n".join(part.strip() for part in (self.stdout, self.stderr) if part.strip())
        return text if len(text) <= limit else text[:limit] + " ..."


@dataclass(frozen=True)
class RunReport:
    """Diagnostics of one checker run, by sample file name.

    ``blocked`` means the checker stopped early (mypy stops at a file with a syntax error): only
    the files that got diagnostics were fully checked.
    """

    diagnostics: dict[str, list[Diagnostic]]
    blocked: bool = False


class TypeChecker(abc.ABC):
    """What differs between checkers: command line, output parsing, what is ignored."""

    name: str = ""
    binary: str = ""
    success_comment: str = ""

    def __init__(
        self, cli_args: Sequence[str], *, parameter: str, timeout: float | None = None
    ) -> None:
        self.timeout = check_timeout(timeout)
        if isinstance(cli_args, (str, bytes)) or not isinstance(cli_args, Sequence):
            raise TypeError(
                f"`{parameter}` must be a list of command-line arguments, got "
                f"{type(cli_args).__name__}"
            )
        bad = [a for a in cli_args if not isinstance(a, str)]
        if bad:
            raise TypeError(f"`{parameter}` must contain only strings, got {show(bad[0])}")
        for i, arg in enumerate(cli_args):
            check_text(arg, f"{parameter}[{i}]", sink=f"the {self.binary} command line")
        self.cli_args: tuple[str, ...] = tuple(cli_args)

    @abc.abstractmethod
    def command(self, executable: str, files: Sequence[str]) -> list[str]:
        """The checker's command line for ``files``."""

    @abc.abstractmethod
    def read(self, result: ProcessResult, files: Sequence[str]) -> RunReport:
        """Parse the checker's output into diagnostics per file."""

    @abc.abstractmethod
    def ignores(self, diagnostic: Diagnostic) -> bool:
        """Whether a diagnostic does not count (missing imports, notes)."""

    def score(self, diagnostics: Sequence[Diagnostic]) -> CheckScore:
        """``(True, success_comment)`` when no diagnostic is left, else ``(False, lines)``."""
        kept = [d for d in diagnostics if not self.ignores(d)]
        if not kept:
            return True, self.success_comment
        return False, "\n".join(d.render() for d in kept)


def has_option(args: Sequence[str], *names: str) -> bool:
    """True if ``args`` contains one of the options ``names`` (``--opt`` or ``--opt=value``)."""
    return any(a == n or a.startswith(n + "=") for a in args for n in names)


def find_executable(name: str) -> str:
    """The checker program: next to the running interpreter first (its virtualenv), then PATH."""
    interpreter_dir = Path(sys.executable).parent
    candidates = [interpreter_dir / name]
    if os.name == "nt":
        candidates += [interpreter_dir / f"{name}.exe", interpreter_dir / "Scripts" / f"{name}.exe"]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"the `{name}` command was not found next to the Python interpreter ({interpreter_dir}) "
        f"or on PATH; install it with `pip install {name}` in the environment you run the "
        "evaluator in"
    )


def sample_file_name(index: int, token: str = "") -> str:
    """File name of the ``index``-th sample (1-based) in the checker's working directory.

    ``token`` (random per run) keeps the module names unguessable, so one sample of a batch can
    never import another and batch results stay identical to per-sample checks.
    """
    return f"sample_{token}_{index:04d}.py" if token else f"sample_{index:04d}.py"


def _scrub(diagnostic: Diagnostic, workdir: str) -> Diagnostic:
    """Remove temporary paths and the sample's file/module name from the message."""
    message = diagnostic.message
    for path in dict.fromkeys((workdir, os.path.realpath(workdir))):
        message = message.replace(path + os.sep, "").replace(path, "")
    stem = diagnostic.file[: -len(".py")] if diagnostic.file.endswith(".py") else diagnostic.file
    message = re.sub(rf"\b{re.escape(stem)}\b", NEUTRAL_MODULE_NAME, message)
    return replace(diagnostic, message=message)


def check_plan(
    checker: TypeChecker, codes: Sequence[str]
) -> Generator[Invocation, ProcessResult, list[CheckScore]]:
    """Check ``codes``; yields the checker processes to run, returns one score per code."""
    executable = find_executable(checker.binary)
    with tempfile.TemporaryDirectory(prefix="openevals-typecheck-") as workdir:
        token = secrets.token_hex(6)
        names = [sample_file_name(i, token) for i in range(1, len(codes) + 1)]
        for name, code in zip(names, codes, strict=True):
            Path(workdir, name).write_text(code, encoding="utf-8")
        found: dict[str, list[Diagnostic]] = {}
        for start in range(0, len(names), MAX_FILES_PER_RUN):
            pending = names[start : start + MAX_FILES_PER_RUN]
            while pending:
                argv = tuple(checker.command(executable, pending))
                result = yield Invocation(argv, workdir, checker.timeout, checker.name)
                report = checker.read(result, pending)
                for name, diagnostics in report.diagnostics.items():
                    if diagnostics:
                        found[name] = [_scrub(d, workdir) for d in diagnostics]
                if not report.blocked:
                    break
                done = {name for name, diagnostics in report.diagnostics.items() if diagnostics}
                if not done:
                    raise RuntimeError(
                        f"{checker.name} stopped early without saying which file blocked it "
                        f"(exit status {result.returncode}): {result.excerpt()}"
                    )
                pending = [name for name in pending if name not in done]
        return [checker.score(found.get(name, [])) for name in names]


# --------------------------------------------------------------------------- drivers


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


# The checker gets a process group of its own, so a timeout stops what it started too
# (pyright's command is a wrapper that runs node).
_GROUP = hasattr(os, "killpg")


def _stop(process: Any) -> None:
    """Kill a checker process and everything in its process group."""
    if _GROUP:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def _run_process(invocation: Invocation) -> ProcessResult:
    process = subprocess.Popen(
        list(invocation.argv),
        cwd=invocation.cwd,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=_GROUP,
    )
    with process:
        try:
            stdout, stderr = process.communicate(timeout=invocation.timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            process.wait()
            raise CheckTimeoutError(invocation.name, invocation.timeout) from None
        except BaseException:  # Ctrl-C, ...: the checker must not outlive the call
            _stop(process)
            raise
    return ProcessResult(process.returncode, _decode(stdout), _decode(stderr))


async def _arun_process(invocation: Invocation) -> ProcessResult:
    process = await asyncio.create_subprocess_exec(
        *invocation.argv,
        cwd=invocation.cwd,
        env=_environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=_GROUP,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), invocation.timeout)
    except asyncio.TimeoutError:
        _stop(process)
        await process.wait()
        raise CheckTimeoutError(invocation.name, invocation.timeout) from None
    except BaseException:
        if process.returncode is None:
            _stop(process)
        raise
    return ProcessResult(cast(int, process.returncode), _decode(stdout), _decode(stderr))


def run_checks(checker: TypeChecker, codes: Sequence[str]) -> list[CheckScore]:
    """Run :func:`check_plan` with blocking subprocesses."""
    return drive(check_plan(checker, codes), _run_process)


async def arun_checks(checker: TypeChecker, codes: Sequence[str]) -> list[CheckScore]:
    """Run :func:`check_plan` with asyncio subprocesses."""
    return await adrive(check_plan(checker, codes), _arun_process)


# --------------------------------------------------------------------------- evaluators


def typecheck_evaluator(
    checker: TypeChecker, extraction_options: Mapping[str, Any], *, is_async: bool
) -> CodeEvaluator | AsyncCodeEvaluator:
    """A type-checking evaluator (with ``batch``, or ``abatch`` when ``is_async``) for
    ``checker``, the code taken from ``outputs`` as the factory's extraction options ask
    (``code_extraction_strategy``, ``code_extractor``, ``model``, ``client``; checked here): the
    one builder of the mypy and pyright factories, sync and async.

    Its key is ``<checker>_succeeded``; its run name ``<checker>_evaluator``, or
    ``<checker>_check`` when async (the names of the public release).
    """
    extraction = code_extraction(**extraction_options)
    run_name = f"{checker.name}_check" if is_async else f"{checker.name}_evaluator"
    feedback_key = f"{checker.name}_succeeded"
    if is_async:

        async def ascorer(*, outputs: str, **_: Any) -> CheckScore:
            return (await arun_checks(checker, [outputs]))[0]

        scorer: Callable[..., Any] = ascorer
    else:

        def scorer(*, outputs: str, **_: Any) -> CheckScore:
            return run_checks(checker, [outputs])[0]

    run = arun_checks if is_async else run_checks
    batch_scorer: Callable[[Sequence[str]], Any] = functools.partial(run, checker)
    # A checker process per call: neither pure nor a judge.
    info = EvaluatorInfo(run_name=run_name, feedback_keys=(feedback_key,))
    return (AsyncCodeEvaluator if is_async else CodeEvaluator)(
        scorer=scorer,
        batch_scorer=batch_scorer,
        extraction=extraction,
        run_name=run_name,
        feedback_key=feedback_key,
        code_sink=checker.name,
        info=info,
    )


def diagnostics_by_file(
    diagnostics: Sequence[Diagnostic], files: Sequence[str]
) -> dict[str, list[Diagnostic]]:
    """Group diagnostics by sample file name; diagnostics of other files are dropped."""
    grouped: dict[str, list[Diagnostic]] = {name: [] for name in files}
    for diagnostic in diagnostics:
        bucket = grouped.get(diagnostic.file)
        if bucket is not None:
            bucket.append(diagnostic)
    return grouped


def base_name(path: str) -> str:
    """The file name of a path as printed by a checker (either separator)."""
    return re.split(r"[\\/]", path)[-1]
