"""Type-check generated Python code with pyright inside an E2B sandbox (``pyright_succeeded``).

Unlike the local pyright evaluator, the code's third-party imports are installed first (found with
:mod:`ast` in this process, mapped to pip distributions, installed when the sandbox lacks them), so
pyright checks the code against the real libraries, and an import that cannot be resolved counts as
an error. pyright is installed with npm if the sandbox does not have it. The comment lists the
errors as ``line:col: error: message [rule]`` lines, ``"[]"`` when there are none. Command failures
are False scores with their message; a step that runs past ``timeout`` (the package lookup, an
install, pyright itself) raises :class:`~openevals.code.base.CheckTimeoutError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openevals._contract import EvaluatorInfo
from openevals.code.base import (
    AsyncCodeCheckEvaluator,
    CheckScore,
    CodeCheckEvaluator,
    code_factory,
)
from openevals.code.e2b._imports import require_e2b
from openevals.code.e2b.sandbox import (
    RunCommand,
    SandboxPlan,
    WriteFile,
    command_timeout,
    install_plan,
    project_directory,
    run,
    sandbox_evaluator,
)
from openevals.code.e2b.sandbox.files import OUTPUTS_FILE, PYRIGHT_COMMAND, project_path
from openevals.code.extraction import CodeExtractionStrategy
from openevals.code.pyright import PyrightChecker, parse_pyright_output

require_e2b()

if TYPE_CHECKING:
    # e2b_code_interpreter's sandboxes subclass these.
    from e2b import AsyncSandbox, Sandbox

__all__ = ["E2B_COMMAND", "create_async_e2b_pyright_evaluator", "create_e2b_pyright_evaluator"]

E2B_COMMAND = PYRIGHT_COMMAND
"""The shell command that type-checks the outputs file in the sandbox."""

# In the sandbox the dependencies are installed, so an unresolved import is a real error.
_CHECKER = PyrightChecker((), ignore_missing_imports=False)


def pyright_plan(code: str, *, directory: str, timeout: float | None) -> SandboxPlan[CheckScore]:
    """Write, install dependencies, run pyright; ``(passed, comment)``."""
    yield WriteFile(project_path(directory, OUTPUTS_FILE), code)
    failure = yield from install_plan(
        code, cwd=directory, python="python", envs=None, timeout=timeout
    )
    if failure is not None:
        return False, failure
    outcome = yield from run(RunCommand(E2B_COMMAND, directory, None, timeout))
    outcome.raise_if_timed_out("Type-checking with pyright", timeout)
    if outcome.exit_code not in (0, 1):
        return (
            False,
            f"pyright could not run in the sandbox: {outcome.describe('pyright', timeout)}",
        )
    try:
        diagnostics = parse_pyright_output(outcome.stdout)
    except ValueError as exc:
        return False, str(exc)
    return _CHECKER.score(diagnostics)


# Runs code in a sandbox per call: neither pure nor a judge.
_INFO = EvaluatorInfo(run_name="e2b_pyright_evaluator", feedback_keys=("pyright_succeeded",))


def _pyright(
    options: dict[str, Any], *, is_async: bool
) -> CodeCheckEvaluator | AsyncCodeCheckEvaluator:
    """The evaluator of both factories (``options``: theirs, by name)."""
    directory = project_directory(options.pop("sandbox_project_directory"))
    timeout = command_timeout(options.pop("timeout"))
    plan = functools.partial(pyright_plan, directory=directory, timeout=timeout)
    return sandbox_evaluator(options.pop("sandbox"), plan, _INFO, options, is_async=is_async)


@code_factory(_pyright, "CodeCheckEvaluator")
def create_e2b_pyright_evaluator(
    *,
    sandbox: Sandbox,
    sandbox_project_directory: str | None = None,
    timeout: float | None = 120.0,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], str | None] | None = None,
    model: str | None = None,
    client: Any = None,
) -> object:
    """Create an evaluator that type-checks the code in ``outputs`` with pyright in ``sandbox``.

    Args:
        sandbox: an ``e2b_code_interpreter.Sandbox`` (the ``OpenEvalsPython`` template has pyright
            and uv preinstalled; any sandbox with Python works).
        sandbox_project_directory: where the code is written and checked (default ``openevals``).
        timeout: seconds each sandbox command may take (lookup, install, type check); None for no
            limit. A command that takes longer raises
            :class:`~openevals.code.base.CheckTimeoutError`, never a score.
        code_extraction_strategy, code_extractor, model, client: how to get the code out of
            ``outputs``.

    Returns results with key ``pyright_succeeded``.
    """


@code_factory(_pyright, "AsyncCodeCheckEvaluator")
def create_async_e2b_pyright_evaluator(
    *,
    sandbox: AsyncSandbox,
    sandbox_project_directory: str | None = None,
    timeout: float | None = 120.0,
    code_extraction_strategy: CodeExtractionStrategy = "none",
    code_extractor: Callable[[Any], Any] | None = None,
    model: str | None = None,
    client: Any = None,
) -> object:
    """Async twin of :func:`create_e2b_pyright_evaluator`, for an ``AsyncSandbox``."""


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
