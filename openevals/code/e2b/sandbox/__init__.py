"""Talking to an E2B sandbox, written once for the sync and async evaluators.

An evaluation is a *plan*: a generator that yields sandbox steps (:class:`WriteFile`,
:class:`RunCommand`) and receives each command's :class:`CommandOutcome`. :func:`run_in_sandbox`
performs the steps on a ``Sandbox``, :func:`arun_in_sandbox` awaits them on an ``AsyncSandbox``;
both run the plan with the package's one driver pair (:mod:`openevals._drivers`).
A command that exits non-zero or times out becomes an outcome: the plan turns a failure of the
evaluated code into a ``False`` score with the message, and a step of its own that ran past
``timeout`` (looking up or installing packages, type checking) into
:class:`~openevals.code.base.CheckTimeoutError`; any other sandbox error propagates.

The e2b SDK is imported only when a plan runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from openevals._contract import EvaluatorInfo
from openevals._drivers import adrive, drive
from openevals._repr import show
from openevals._text import check_text
from openevals.code.base import (
    AsyncCodeEvaluator,
    CheckScore,
    CheckTimeoutError,
    CodeEvaluator,
    code_extraction,
)
from openevals.code.e2b._imports import third_party_requirements
from openevals.code.e2b.sandbox.files import (
    DEFAULT_PROJECT_DIRECTORY,
    install_command,
    probe_command,
)
from openevals.code.extraction import CodeExtraction, perform

__all__ = [
    "SANDBOX_SINK",
    "CommandOutcome",
    "RunCommand",
    "SandboxPlan",
    "WriteFile",
    "arun_in_sandbox",
    "check_sandbox",
    "command_timeout",
    "install_plan",
    "project_directory",
    "run",
    "run_in_sandbox",
    "sandbox_evaluator",
    "sandbox_extraction",
]

T = TypeVar("T")

SANDBOX_SINK = "the E2B sandbox"
"""How errors name where the code and settings are sent (written to files, passed to commands)."""


@dataclass(frozen=True)
class WriteFile:
    """Write ``content`` to ``path`` in the sandbox (parent directories are created)."""

    path: str
    content: str


@dataclass(frozen=True)
class RunCommand:
    """Run a shell command in the sandbox."""

    cmd: str
    cwd: str
    envs: dict[str, str] | None
    timeout: float | None


@dataclass(frozen=True)
class CommandOutcome:
    """How a command ended. ``message`` is the SDK's description of a failure."""

    exit_code: int | None
    stdout: str
    stderr: str
    message: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def raise_if_timed_out(self, what: str, timeout: float | None) -> None:
        """A step of the check itself that timed out is no verdict on the code: raise
        :class:`CheckTimeoutError` (``timeout`` None: the sandbox's own limit)."""
        if self.timed_out:
            raise CheckTimeoutError(f"{what} in the E2B sandbox", timeout)

    def describe(self, what: str, timeout: float | None) -> str:
        """A comment for a failed step: the SDK message (as the public release reports it)."""
        if self.timed_out:
            limit = f" after {timeout:g} s" if timeout is not None else ""
            return f"{what} timed out{limit}: {self.message}"
        return self.message or f"{what} failed with exit code {self.exit_code}"


SandboxStep = WriteFile | RunCommand
SandboxPlan = Generator[SandboxStep, Any, T]


def run(step: RunCommand) -> Generator[SandboxStep, Any, CommandOutcome]:
    """``outcome = yield from run(RunCommand(...))`` inside a plan."""
    outcome = yield step
    return cast(CommandOutcome, outcome)


def install_plan(
    code: str, *, cwd: str, python: str, envs: dict[str, str] | None, timeout: float | None
) -> Generator[SandboxStep, Any, str | None]:
    """Install the third-party packages ``code`` imports that the sandbox lacks.

    Returns None when everything is available, else the comment explaining what failed.
    """
    requirements = third_party_requirements(code)
    if not requirements:
        return None
    probe = yield from run(
        RunCommand(probe_command(python, [r.module for r in requirements]), cwd, envs, timeout)
    )
    probe.raise_if_timed_out("Looking up the installed packages", timeout)
    if not probe.ok:
        return probe.describe("Looking up the installed packages", timeout)
    missing = set(probe.stdout.split())
    distributions = list(dict.fromkeys(r.distribution for r in requirements if r.module in missing))
    if not distributions:
        return None
    install = yield from run(RunCommand(install_command(python, distributions), cwd, envs, timeout))
    install.raise_if_timed_out("Installing dependencies", timeout)
    if not install.ok:
        detail = install.describe("Installing dependencies", timeout)
        return f"Installing dependencies ({' '.join(distributions)}) failed: {detail}"
    return None


def check_sandbox(sandbox: Any) -> None:
    """Reject objects that are not an E2B sandbox (or something shaped like one)."""
    if sandbox is None or not hasattr(sandbox, "files") or not hasattr(sandbox, "commands"):
        raise TypeError(
            "`sandbox` must be an e2b_code_interpreter Sandbox (or AsyncSandbox for the async "
            f"evaluator), e.g. Sandbox.create(); got {type(sandbox).__name__}"
        )


def sandbox_extraction(
    sandbox: Any,
    *,
    code_extraction_strategy: str,
    code_extractor: Any,
    model: str | None,
    client: Any,
) -> CodeExtraction:
    """Validate the sandbox and the extraction options of an E2B evaluator."""
    check_sandbox(sandbox)
    return code_extraction(
        code_extraction_strategy=code_extraction_strategy,
        code_extractor=code_extractor,
        model=model,
        client=client,
    )


def sandbox_evaluator(
    sandbox: Any,
    plan: Callable[[str], SandboxPlan[CheckScore]],
    info: EvaluatorInfo,
    extraction_options: Mapping[str, Any],
    *,
    is_async: bool,
) -> CodeEvaluator | AsyncCodeEvaluator:
    """The evaluator of an E2B factory: each call runs ``plan(code)`` in ``sandbox``.

    ``extraction_options`` holds the factory's ``code_extraction_strategy``, ``code_extractor``,
    ``model`` and ``client``; they and the sandbox are checked here.
    """
    extraction = sandbox_extraction(sandbox, **extraction_options)
    run = arun_in_sandbox if is_async else run_in_sandbox

    def scorer(*, outputs: str, **_: Any) -> Any:
        """The check's score (on an ``AsyncSandbox``, a coroutine the evaluator awaits)."""
        return run(sandbox, plan(outputs))

    return (AsyncCodeEvaluator if is_async else CodeEvaluator)(
        scorer=scorer,
        extraction=extraction,
        code_sink=SANDBOX_SINK,
        run_name=info.run_name,
        feedback_key=info.feedback_key,
        info=info,
    )


def project_directory(value: str | None) -> str:
    """The sandbox directory the code is written to and run in."""
    if value is None:
        return DEFAULT_PROJECT_DIRECTORY
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`sandbox_project_directory` must be a non-empty path, got {show(value)}")
    check_text(value, "sandbox_project_directory", sink=SANDBOX_SINK)
    return value.rstrip("/") or "/"


def command_timeout(value: float | None) -> float | None:
    """Validated ``timeout`` (seconds per sandbox command; None = no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(
            f"`timeout` must be a positive number of seconds or None, got {show(value)}"
        )
    return float(value)


def _sdk_errors() -> tuple[type[BaseException], type[BaseException]]:
    from e2b import CommandExitException, TimeoutException

    return CommandExitException, TimeoutException


def _step_flow(sandbox: Any, step: SandboxStep) -> Generator[Any, Any, CommandOutcome | None]:
    """One plan step as a call on ``sandbox`` (awaited on an ``AsyncSandbox``); a command that
    exits non-zero or times out becomes its outcome."""
    if isinstance(step, WriteFile):
        yield functools.partial(sandbox.files.write, step.path, step.content)
        return None
    exit_error, timeout_error = _sdk_errors()
    run = functools.partial(
        sandbox.commands.run, step.cmd, cwd=step.cwd, envs=step.envs, timeout=step.timeout
    )
    try:
        result = yield run
    except exit_error as exc:
        return _outcome(exc, None, message=str(exc))
    except timeout_error as exc:
        return CommandOutcome(None, "", "", message=str(exc), timed_out=True)
    return _outcome(result, 0)


def _outcome(ended: Any, exit_code: int | None, message: str = "") -> CommandOutcome:
    """A command's outcome read from the SDK's result, or from the exception of a command that
    exited non-zero (``exit_code``: the default when it carries none)."""
    return CommandOutcome(
        exit_code=getattr(ended, "exit_code", exit_code),
        stdout=getattr(ended, "stdout", None) or "",
        stderr=getattr(ended, "stderr", None) or "",
        message=message,
    )


def run_in_sandbox(sandbox: Any, plan: SandboxPlan[T]) -> T:
    """Perform ``plan`` on a sync ``Sandbox`` (through :func:`openevals._drivers.drive`)."""
    return drive(plan, lambda step: drive(_step_flow(sandbox, step), perform))


async def arun_in_sandbox(sandbox: Any, plan: SandboxPlan[T]) -> T:
    """Perform ``plan`` on an ``AsyncSandbox`` (through :func:`openevals._drivers.adrive`)."""
    return await adrive(plan, lambda step: adrive(_step_flow(sandbox, step), perform))
