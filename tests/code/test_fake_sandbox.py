"""The fake E2B sandbox behaves like the SDK where the evaluators rely on it."""

from __future__ import annotations

import time

import pytest
from e2b import CommandExitException, CommandResult, TimeoutException

from openevals.testing.sandbox import FakeAsyncSandbox, FakeSandbox, _pip_packages


@pytest.mark.parametrize(
    ("cmd", "packages"),
    [
        ("pip install requests", ["requests"]),
        (
            "python -m pip install --quiet --disable-pip-version-check PyYAML 'scikit-learn'",
            ["PyYAML", "scikit-learn"],
        ),
        ("uv pip install --system httpx", ["httpx"]),
        ("pip3 install a", ["a"]),
        ("echo hi && pip install x", None),
        ("pip list", None),
        ("python outputs.py", None),
    ],
)
def test_pip_commands_recognised(cmd: str, packages: list[str] | None) -> None:
    assert _pip_packages(cmd) == packages


def test_commands_really_run_and_fail_like_the_sdk() -> None:
    with FakeSandbox() as box:
        info = box.files.write("proj/data.txt", "hello")
        assert info.path == "proj/data.txt"
        box.files.write("/opt/abs/blob.bin", b"\x00\x01")
        assert box.path("/opt/abs/blob.bin").read_bytes() == b"\x00\x01"
        assert box.path("/opt/abs/blob.bin").is_relative_to(box.home.parent.parent)

        result = box.commands.run('cat data.txt; echo "$FOO"', cwd="proj", envs={"FOO": "bar"})
        assert isinstance(result, CommandResult)
        assert (result.exit_code, result.stdout, result.stderr) == (0, "hellobar\n", "")

        with pytest.raises(CommandExitException) as failure:
            box.commands.run("echo out; echo err >&2; exit 3", cwd="proj")
        assert (failure.value.exit_code, failure.value.stdout, failure.value.stderr) == (
            3,
            "out\n",
            "err\n",
        )
        assert str(failure.value) == "Command exited with code 3 and error:\nerr\n"
        assert [c.exit_code for c in box.commands_run] == [0, 3]


def test_pip_install_is_recorded_not_run() -> None:
    with FakeSandbox(unavailable_packages=["Made_Up"]) as box:
        box.commands.run("python -m pip install --quiet numpy pandas")
        assert box.installed == ["numpy", "pandas"]
        with pytest.raises(
            CommandExitException, match="No matching distribution found for made-up"
        ):
            box.commands.run("pip install made-up")
        assert all(c.intercepted for c in box.commands_run)


def test_timeout_kills_the_whole_process_group() -> None:
    with FakeSandbox() as box:
        started = time.monotonic()
        with pytest.raises(TimeoutException, match="deadline"):
            box.commands.run("python -c 'import time; time.sleep(30)' | cat", timeout=0.3)
        assert time.monotonic() - started < 10
        assert box.commands_run[-1].exit_code is None


async def test_async_sandbox() -> None:
    async with FakeAsyncSandbox(unavailable_packages=["nope"]) as box:
        await box.files.write("p/x.py", "print('hi')")
        result = await box.commands.run("python x.py", cwd="p")
        assert result.stdout == "hi\n"
        with pytest.raises(CommandExitException):
            await box.commands.run("python -c 'raise SystemExit(4)'", cwd="p")
        with pytest.raises(CommandExitException):
            await box.commands.run("pip install nope")
        with pytest.raises(TimeoutException):
            await box.commands.run("sleep 30", timeout=0.2)
        assert [name for name, _, _ in box.calls] == ["files.write"] + ["commands.run"] * 4
