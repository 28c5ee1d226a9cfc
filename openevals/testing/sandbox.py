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
  killed).

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
import inspect
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar, cast

from e2b import CommandExitException, CommandResult, TimeoutException
from e2b.sandbox.filesystem.filesystem import WriteInfo

__all__ = ["FakeAsyncSandbox", "FakeSandbox", "RecordedCommand"]

F = TypeVar("F", bound=Callable[..., Any])

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


class _Core:
    """State and pure decisions shared by the sync and async fakes."""

    def __init__(
        self,
        *,
        unavailable_packages: Iterable[str] = (),
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="fake-e2b-") if root is None else root)
        self.home = self.root / "home" / "user"
        self.home.mkdir(parents=True, exist_ok=True)
        self.unavailable = {_normalized(p) for p in unavailable_packages}
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.commands_run: list[RecordedCommand] = []
        self.installed: list[str] = []
        self.written: dict[str, str | bytes] = {}

    def resolve(self, path: str | None) -> Path:
        if path is None or path == "":
            return self.home
        pure = PurePosixPath(path)
        if pure.is_absolute():
            return self.root.joinpath(*pure.parts[1:])
        return self.home.joinpath(*pure.parts)

    def write(self, path: str, data: Any) -> WriteInfo:
        target = self.resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        elif isinstance(data, bytes):
            target.write_bytes(data)
        else:
            raise TypeError(f"FakeSandbox.files.write supports str or bytes data, got {type(data)}")
        self.written[path] = data
        return WriteInfo(name=target.name, type=None, path=path)

    def environment(self, envs: Mapping[str, str] | None) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env.update(envs or {})
        return env

    def intercept(self, cmd: str) -> tuple[int, str, str] | None:
        packages = _pip_packages(cmd)
        if packages is None:
            return None
        self.installed.extend(packages)
        missing = [p for p in packages if _normalized(p) in self.unavailable]
        if missing:
            name = missing[0]
            return (
                1,
                "",
                f"ERROR: Could not find a version that satisfies the requirement {name}\n"
                f"ERROR: No matching distribution found for {name}\n",
            )
        return 0, "", ""

    def finish(
        self,
        cmd: str,
        cwd: str | None,
        envs: dict[str, str] | None,
        timeout: float | None,
        result: tuple[int, str, str] | None,
        intercepted: bool,
    ) -> CommandResult[str]:
        """Record how the command ended; raise like the SDK or return its result."""
        code, out, err = result if result is not None else (None, "", "")
        self.commands_run.append(
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

    def close(self) -> None:
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _recorded(name: str) -> Callable[[F], F]:
    """Record ``(name, args, kwargs)`` of each call exactly as the caller passed them."""

    def decorate(method: F) -> F:
        if inspect.iscoroutinefunction(method):

            @functools.wraps(method)
            async def arecording(self: Any, *args: Any, **kwargs: Any) -> Any:
                self._core.calls.append((name, args, dict(kwargs)))
                return await method(self, *args, **kwargs)

            return cast(F, arecording)

        @functools.wraps(method)
        def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
            self._core.calls.append((name, args, dict(kwargs)))
            return method(self, *args, **kwargs)

        return cast(F, recording)

    return decorate


def _limit(timeout: float | None) -> float | None:
    return None if not timeout else float(timeout)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# --------------------------------------------------------------------------- sync


class _Files:
    def __init__(self, core: _Core) -> None:
        self._core = core

    @_recorded("files.write")
    def write(
        self,
        path: str,
        data: str | bytes,
        user: str | None = None,
        request_timeout: float | None = None,
    ) -> WriteInfo:
        return self._core.write(path, data)


class _Commands:
    def __init__(self, core: _Core) -> None:
        self._core = core

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
        core = self._core
        if background:
            raise NotImplementedError("FakeSandbox does not run background commands")
        intercepted = core.intercept(cmd)
        if intercepted is not None:
            return core.finish(cmd, cwd, envs, timeout, intercepted, True)
        process = subprocess.Popen(
            ["bash", "-c", cmd],
            cwd=core.resolve(cwd),
            env=core.environment(envs),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=_limit(timeout))
            result: tuple[int, str, str] | None = (
                process.returncode,
                out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"),
            )
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.communicate()
            result = None
        return core.finish(cmd, cwd, envs, timeout, result, False)


class _SandboxState:
    """What both fakes expose for assertions: the recorded calls, commands, files and packages."""

    _core: _Core

    @property
    def home(self) -> Path:
        return self._core.home

    @property
    def calls(self) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
        return self._core.calls

    @property
    def commands_run(self) -> list[RecordedCommand]:
        return self._core.commands_run

    @property
    def installed(self) -> list[str]:
        return self._core.installed

    @property
    def written(self) -> dict[str, str | bytes]:
        return self._core.written

    def path(self, sandbox_path: str) -> Path:
        """Where a sandbox path lives on the local disk."""
        return self._core.resolve(sandbox_path)


class FakeSandbox(_SandboxState):
    """Sync fake of ``e2b_code_interpreter.Sandbox`` (see the module docstring)."""

    def __init__(
        self,
        *,
        unavailable_packages: Iterable[str] = (),
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self._core = _Core(unavailable_packages=unavailable_packages, root=root)
        self.files = _Files(self._core)
        self.commands = _Commands(self._core)

    def kill(self) -> None:
        self._core.close()

    def __enter__(self) -> FakeSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


# --------------------------------------------------------------------------- async


class _AsyncFiles:
    def __init__(self, core: _Core) -> None:
        self._core = core

    @_recorded("files.write")
    async def write(
        self,
        path: str,
        data: str | bytes,
        user: str | None = None,
        request_timeout: float | None = None,
    ) -> WriteInfo:
        return self._core.write(path, data)


class _AsyncCommands:
    def __init__(self, core: _Core) -> None:
        self._core = core

    @_recorded("commands.run")
    async def run(
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
        core = self._core
        if background:
            raise NotImplementedError("FakeAsyncSandbox does not run background commands")
        intercepted = core.intercept(cmd)
        if intercepted is not None:
            return core.finish(cmd, cwd, envs, timeout, intercepted, True)
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            cmd,
            cwd=core.resolve(cwd),
            env=core.environment(envs),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), _limit(timeout))
            result: tuple[int, str, str] | None = (
                process.returncode if process.returncode is not None else -1,
                out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"),
            )
        except asyncio.TimeoutError:
            _kill_group(process.pid)
            await process.wait()
            result = None
        return core.finish(cmd, cwd, envs, timeout, result, False)


class FakeAsyncSandbox(_SandboxState):
    """Async fake of ``e2b_code_interpreter.AsyncSandbox`` (see the module docstring)."""

    def __init__(
        self,
        *,
        unavailable_packages: Iterable[str] = (),
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self._core = _Core(unavailable_packages=unavailable_packages, root=root)
        self.files = _AsyncFiles(self._core)
        self.commands = _AsyncCommands(self._core)

    async def kill(self) -> None:
        self._core.close()

    async def __aenter__(self) -> FakeAsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()
