"""Run generated Python code in an E2B sandbox (``execution_succeeded``).

The code is written to ``<project directory>/outputs.py``; the third-party packages it imports are
found with :mod:`ast` in this process, looked up in the sandbox and the missing ones installed with
pip (import names mapped to distributions: ``yaml`` -> ``PyYAML``, ``sklearn`` -> ``scikit-learn``,
...); then ``<execution_command> outputs.py`` runs. Exit status 0 scores True; otherwise the score is
False and the comment carries the SDK's message with the traceback. A failed install or a command
that times out is a False score with its message, not an exception.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openevals._contract import EvaluatorInfo
from openevals._repr import show
from openevals._text import check_text
from openevals.code.base import (
    AsyncCodeCheckEvaluator,
    CheckScore,
    CodeCheckEvaluator,
    code_factory,
)
from openevals.code.e2b._imports import require_e2b
from openevals.code.e2b.sandbox import (
    SANDBOX_SINK,
    RunCommand,
    SandboxPlan,
    WriteFile,
    command_timeout,
    install_plan,
    project_directory,
    run,
    sandbox_evaluator,
)
from openevals.code.e2b.sandbox.files import OUTPUTS_FILE, project_path, run_command
from openevals.code.extraction import CodeExtractionStrategy

require_e2b()

if TYPE_CHECKING:
    # e2b_code_interpreter's sandboxes subclass these.
    from e2b import AsyncSandbox, Sandbox

__all__ = ["create_async_e2b_execution_evaluator", "create_e2b_execution_evaluator"]


def _environment(value: Mapping[str, str] | None) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(
            "`environment_variables` must be a dict of name -> value strings, got "
            f"{type(value).__name__}"
        )
    bad = [k for k, v in value.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        raise TypeError(
            f"`environment_variables` must map strings to strings; entry {show(bad[0])} is not"
        )
    for name, text in value.items():
        check_text(name, "environment_variables", of=f"the name {show(name)}", sink=SANDBOX_SINK)
        check_text(text, f"environment_variables[{show(name)}]", sink=SANDBOX_SINK)
    return dict(value)


def _command(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(
            f"`execution_command` must be a non-empty command such as 'python', got {show(value)}"
        )
    return check_text(value, "execution_command", sink=SANDBOX_SINK).strip()


def execution_plan(
    code: str,
    *,
    directory: str,
    execution_command: str,
    envs: dict[str, str] | None,
    timeout: float | None,
) -> SandboxPlan[CheckScore]:
    """Write, install dependencies, run; ``(True, None)`` or ``(False, message)``."""
    yield WriteFile(project_path(directory, OUTPUTS_FILE), code)
    failure = yield from install_plan(
        code, cwd=directory, python=execution_command, envs=envs, timeout=timeout
    )
    if failure is not None:
        return False, failure
    outcome = yield from run(RunCommand(run_command(execution_command), directory, envs, timeout))
    if outcome.ok:
        return True, None
    return False, outcome.describe("Running the code", timeout)


# Runs code in a sandbox per call: neither pure nor a judge.
_INFO = EvaluatorInfo(run_name="e2b_execution_evaluator", feedback_keys=("execution_succeeded",))


def _execution(
    options: dict[str, Any], *, is_async: bool
) -> CodeCheckEvaluator | AsyncCodeCheckEvaluator:
    """The evaluator of both factories (``options``: theirs, by name)."""
    plan = functools.partial(
        execution_plan,
        directory=project_directory(options.pop("sandbox_project_directory")),
        execution_command=_command(options.pop("execution_command")),
        envs=_environment(options.pop("environment_variables")),
        timeout=command_timeout(options.pop("timeout")),
    )
    return sandbox_evaluator(options.pop("sandbox"), plan, _INFO, options, is_async=is_async)


@code_factory(_execution, "CodeCheckEvaluator")
def create_e2b_execution_evaluator(
    *,
    sandbox: Sandbox,
    environment_variables: Mapping[str, str] | None = None,
    execution_command: str = "python",
    sandbox_project_directory: str | None = None,
    timeout: float | None = 60.0,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    model: str | None = None,
    client: Any = None,
) -> object:
    """Create an evaluator that runs the code in ``outputs`` inside an E2B ``sandbox``.

    Args:
        sandbox: an ``e2b_code_interpreter.Sandbox``.
        environment_variables: variables set for the install and run commands. The generated
            code can read them: do not pass secrets you would not hand to arbitrary code.
        execution_command: the command that runs the file (default ``python``).
        sandbox_project_directory: where the code is written and run (default ``openevals``,
            relative to the sandbox user's home).
        timeout: seconds each sandbox command may take (lookup, install, run); None for no limit.
            Code whose own run takes longer scores False with the message; a package lookup or
            install that takes longer raises :class:`~openevals.code.base.CheckTimeoutError`.
        code_extraction_strategy, code_extractor, model, client: how to get the code out of
            ``outputs`` (see the code evaluators' extraction options).

    Returns results with key ``execution_succeeded``.
    """


@code_factory(_execution, "AsyncCodeCheckEvaluator")
def create_async_e2b_execution_evaluator(
    *,
    sandbox: AsyncSandbox,
    environment_variables: Mapping[str, str] | None = None,
    execution_command: str = "python",
    sandbox_project_directory: str | None = None,
    timeout: float | None = 60.0,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    model: str | None = None,
    client: Any = None,
) -> object:
    """Async twin of :func:`create_e2b_execution_evaluator`, for an ``AsyncSandbox``."""


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
