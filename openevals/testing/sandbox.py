"""A local stand-in for an E2B sandbox, for tests.

:class:`FakeSandbox` (sync) and :class:`FakeAsyncSandbox` (async) implement the part of
``e2b_code_interpreter.Sandbox`` / ``AsyncSandbox`` the evaluators use:

* ``sandbox.files.write(path, data)`` writes below a temporary directory. Relative paths are relative
  to the fake home directory (``<root>/home/user``, like E2B's ``/home/user``); absolute paths are
  re-rooted under ``<root>`` so nothing outside the temporary directory is touched.
* ``sandbox.commands.run(cmd, cwd=, envs=, timeout=)`` REALLY runs ``cmd`` with ``bash -c`` in that
  directory (``cwd`` mapped like file paths), with this test interpreter's ``bin`` directory first
  on PATH (so ``python`` and ``pyright`` are the virtualenv's). Like the SDK it returns an
  ``e2b.CommandResult``, raises ``e2b.CommandExitException`` (the real SDK class) for a non-zero
  exit status and ``e2b.TimeoutException`` when ``timeout`` seconds pass (the process group is
  killed). The async fake runs the same code in a worker thread, so its event loop never blocks.

``pip install`` is intercepted instead of run (no network): a command whose words contain
``pip install`` (``pip install``, ``python -m pip install``, ``uv pip install``) and no shell
operator records its package arguments in :attr:`installed` and succeeds, or fails with pip's
"No matching distribution" message for packages listed in ``unavailable_packages``. Intercepted
installs do not install anything, so code importing such a package still fails when run.

Every call is recorded in :attr:`calls` as ``(method, args, kwargs)`` exactly as received, so tests
can check them against the real SDK signatures; :attr:`commands_run` keeps the commands with how they
ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from e2b import CommandExitException, CommandResult, TimeoutException
from e2b.sandbox.filesystem.filesystem import WriteInfo

__all__ = ["FakeAsyncSandbox", "FakeSandbox", "RecordedCommand"]

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")

_SHELL_OPERATORS = ("&&", "||", ";", "|", "`", "$(", ">", "<", "\n")


@dataclass(frozen=True)
class RecordedCommand:
    """One ``commands.run`` call and how it ended (``exit_code`` None: timed out)."""

    cmd: str
    cwd: str | None
    envs: dict[str, str] | None
    timeout: float | None
    exit_code: int | None
    stdout: str
    stderr: str
    intercepted: bool


def _normalized(name: str) -> str:
    """PEP 503 name normalisation, as pip compares distribution names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_packages(cmd: str) -> list[str] | None:
    """The packages of a plain ``... pip install PKG ...`` command, else None."""
    if any(op in cmd for op in _SHELL_OPERATORS):
        return None
    try:
        words = shlex.split(cmd)
    except ValueError:
        return None
    for i in range(len(words) - 1):
        if words[i] in ("pip", "pip3") and words[i + 1] == "install":
            return [w for w in words[i + 2 :] if not w.startswith("-")]
    return None


def _run_process(
    cmd: str, cwd: Path, env: dict[str, str], timeout: float | None
) -> tuple[int, str, str] | None:
    """``(exit code, stdout, stderr)`` of ``bash -c cmd``, or None when ``timeout`` passed (the
    whole process group is then killed)."""
    process = subprocess.Popen(
        ["bash", "-c", cmd],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout or None)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class _FakeBase:
    """The state of a fake sandbox, shared by the sync and the async one, and what tests read."""

    _parts: tuple[type[_Part], type[_Part]]  # the classes of ``files`` and ``commands``

    def __init__(
        self,
        *,
        unavailable_packages: Iterable[str] = (),
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self._own_root = root is None
        self._root = Path(tempfile.mkdtemp(prefix="fake-e2b-") if root is None else root)
        self.home = self._root / "home" / "user"
        self.home.mkdir(parents=True, exist_ok=True)
        self._unavailable = {_normalized(p) for p in unavailable_packages}
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.commands_run: list[RecordedCommand] = []
        self.installed: list[str] = []
        self.written: dict[str, str | bytes] = {}
        files, commands = self._parts
        self.files = files(self)
        self.commands = commands(self)

    def path(self, sandbox_path: str) -> Path:
        """Where a sandbox path lives on the local disk."""
        pure = PurePosixPath(sandbox_path)
        if pure.is_absolute():
            return self._root.joinpath(*pure.parts[1:])
        return self.home.joinpath(*pure.parts)

    def _intercept(self, cmd: str) -> tuple[int, str, str] | None:
        packages = _pip_packages(cmd)
        if packages is None:
            return None
        self.installed.extend(packages)
        missing = [p for p in packages if _normalized(p) in self._unavailable]
        if missing:
            name = missing[0]
            return (
                1,
                "",
                f"ERROR: Could not find a version that satisfies the requirement {name}\n"
                f"ERROR: No matching distribution found for {name}\n",
            )
        return 0, "", ""

    def _close(self) -> None:
        if self._own_root:
            shutil.rmtree(self._root, ignore_errors=True)


def _recorded(name: str) -> Callable[[F], F]:
    """Record ``(name, args, kwargs)`` of each call exactly as the caller passed them."""

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
            self._box.calls.append((name, args, dict(kwargs)))
            return method(self, *args, **kwargs)

        return cast(F, recording)

    return decorate


def _in_thread(
    method: Callable[Concatenate[Any, P], R],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]:
    """The async twin of a sync fake method: the same body, run in a worker thread so the event
    loop is never blocked (its signature is the sync method's)."""

    async def twin(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    functools.update_wrapper(twin, method)
    return twin


class _Part:
    def __init__(self, box: _FakeBase) -> None:
        self._box = box


class _Files(_Part):
    @_recorded("files.write")
    def write(
        self,
        path: str,
        data: str | bytes,
        user: str | None = None,
        request_timeout: float | None = None,
    ) -> WriteInfo:
        target = self._box.path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        elif isinstance(data, bytes):
            target.write_bytes(data)
        else:
            raise TypeError(f"FakeSandbox.files.write supports str or bytes data, got {type(data)}")
        self._box.written[path] = data
        return WriteInfo(name=target.name, type=None, path=path)


class _Commands(_Part):
    @_recorded("commands.run")
    def run(
        self,
        cmd: str,
        background: bool | None = None,
        envs: dict[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Any = None,
        on_stderr: Any = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandResult[str]:
        box = self._box
        if background:
            raise NotImplementedError(f"{type(box).__name__} does not run background commands")
        result = box._intercept(cmd)
        intercepted = result is not None
        if result is None:
            path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
            env = {**os.environ, "PATH": path, **(envs or {})}
            result = _run_process(cmd, box.path(cwd or ""), env, timeout)
        code, out, err = result if result is not None else (None, "", "")
        box.commands_run.append(
            RecordedCommand(
                cmd, cwd, dict(envs) if envs else None, timeout, code, out, err, intercepted
            )
        )
        if code is None:
            raise TimeoutException(
                f"deadline_exceeded: the command did not finish within 'timeout' ({timeout} s)"
            )
        if code != 0:
            raise CommandExitException(stderr=err, stdout=out, exit_code=code, error=None)
        return CommandResult(stderr=err, stdout=out, exit_code=0, error=None)


class _AsyncFiles(_Part):
    write = _in_thread(_Files.write)


class _AsyncCommands(_Part):
    run = _in_thread(_Commands.run)


class FakeSandbox(_FakeBase):
    """Sync fake of ``e2b_code_interpreter.Sandbox`` (see the module docstring)."""

    files: _Files
    commands: _Commands
    _parts = (_Files, _Commands)

    def kill(self) -> None:
        self._close()

    def __enter__(self) -> FakeSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


class FakeAsyncSandbox(_FakeBase):
    """Async fake of ``e2b_code_interpreter.AsyncSandbox`` (see the module docstring)."""

    files: _AsyncFiles
    commands: _AsyncCommands
    _parts = (_AsyncFiles, _AsyncCommands)

    async def kill(self) -> None:
        self._close()

    async def __aenter__(self) -> FakeAsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()
