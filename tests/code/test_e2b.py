"""E2B evaluators against the local fake sandbox, import detection, and SDK compatibility."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.code import CheckTimeoutError
from openevals.code.e2b._imports import (
    IMPORT_TO_DISTRIBUTION,
    Requirement,
    distribution_for,
    third_party_requirements,
)
from openevals.code.e2b.execution import (
    create_async_e2b_execution_evaluator,
    create_e2b_execution_evaluator,
)
from openevals.code.e2b.pyright import (
    E2B_COMMAND,
    create_async_e2b_pyright_evaluator,
    create_e2b_pyright_evaluator,
    pyright_plan,
)
from openevals.code.e2b.sandbox import CommandOutcome, RunCommand, WriteFile
from openevals.testing import FakeAsyncSandbox, FakeSandbox
from tests.code.checkers import requires_pyright

# --------------------------------------------------------------------------- import detection


def _names(code: str) -> list[tuple[str, str]]:
    return [(r.module, r.distribution) for r in third_party_requirements(code)]


def test_detects_third_party_imports_and_maps_distributions() -> None:
    code = """
from __future__ import annotations
import os, sys, json
import yaml
import sklearn.linear_model
from PIL import Image
import cv2 as cv
from bs4 import BeautifulSoup
from dateutil import parser
from dotenv import load_dotenv
import requests
import numpy as np
import yaml  # duplicate
from . import sibling
from .pkg import thing
from google.protobuf import message
import google.cloud.storage_transfer
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import pandas
def f():
    import httpx
"""
    assert _names(code) == [
        ("yaml", "PyYAML"),
        ("sklearn", "scikit-learn"),
        ("PIL", "Pillow"),
        ("cv2", "opencv-python"),
        ("bs4", "beautifulsoup4"),
        ("dateutil", "python-dateutil"),
        ("dotenv", "python-dotenv"),
        ("requests", "requests"),
        ("numpy", "numpy"),
        ("google.protobuf", "protobuf"),
        ("google.cloud.storage_transfer", "google-cloud-storage-transfer"),
        ("pandas", "pandas"),
        ("httpx", "httpx"),
    ]


def test_optional_imports_and_broken_code_need_nothing() -> None:
    code = """
try:
    import ujson as json
except ImportError:
    import json
try:
    import orjson
except (ModuleNotFoundError, AttributeError):
    orjson = None
try:
    import tomli
except Exception:
    pass
try:
    import needed_for_real
finally:
    pass
"""
    assert _names(code) == [("needed_for_real", "needed_for_real")]
    assert third_party_requirements("def broken(:\n  import yaml") == []
    assert third_party_requirements("x = '\0'") == []


_STDLIB = ["os", "sys", "json", "typing", "collections.abc", "asyncio", "__future__"]
_THIRD_PARTY = ["requests", "numpy", "yaml", "sklearn.svm", "PIL.Image", "httpx", "rich.console"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_STDLIB + _THIRD_PARTY), st.sampled_from(["import", "from"])),
        max_size=12,
    )
)
def test_detection_keeps_third_party_in_first_import_order(
    imports: list[tuple[str, str]],
) -> None:
    lines = [f"import {m}" if kind == "import" else f"from {m} import x" for m, kind in imports]
    expected: list[str] = []
    for module, _ in imports:
        top = module.split(".")[0]
        if module in _THIRD_PARTY and top not in expected:
            expected.append(top)
    assert [r.module for r in third_party_requirements("\n".join(lines))] == expected


def test_mapping_table() -> None:
    assert len(IMPORT_TO_DISTRIBUTION) >= 12
    assert distribution_for("attr.validators") == Requirement("attr", "attrs")
    assert distribution_for("jwt") == Requirement("jwt", "PyJWT")
    assert distribution_for("google") == Requirement("google", "google")


# --------------------------------------------------------------------------- helpers


SandboxFactory = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Harness:
    """Run the same scenario against the sync or the async evaluator and fake sandbox."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sandboxes: list[Any] = []

    def sandbox(self, **kw: Any) -> Any:
        box = FakeSandbox(**kw) if self.mode == "sync" else FakeAsyncSandbox(**kw)
        self.sandboxes.append(box)
        return box

    def execution(self, **kw: Any) -> Any:
        factory = (
            create_e2b_execution_evaluator
            if self.mode == "sync"
            else create_async_e2b_execution_evaluator
        )
        return factory(**kw)

    def pyright(self, **kw: Any) -> Any:
        factory = (
            create_e2b_pyright_evaluator
            if self.mode == "sync"
            else create_async_e2b_pyright_evaluator
        )
        return factory(**kw)

    async def call(self, evaluator: Any, **kw: Any) -> Any:
        result = evaluator(**kw)
        if self.mode == "async":
            result = await result
        return result

    def close(self) -> None:
        for box in self.sandboxes:
            box._close()


@pytest.fixture
def harness(mode: str) -> Any:
    h = Harness(mode)
    yield h
    h.close()


# --------------------------------------------------------------------------- execution


async def test_execution_success_with_environment(harness: Harness) -> None:
    box = harness.sandbox()
    envs = {"GREETING": "hello"}
    envs_before = copy.deepcopy(envs)
    evaluator = harness.execution(sandbox=box, environment_variables=envs)
    code = "import os\nassert os.environ['GREETING'] == 'hello'\nprint('fine')\n"
    result = await harness.call(evaluator, outputs=code)
    assert result == {
        "key": "execution_succeeded",
        "score": True,
        "comment": None,
        "metadata": None,
    }
    assert envs == envs_before
    assert box.path("openevals/outputs.py").read_text() == code
    assert [c.cmd for c in box.commands_run] == ["python outputs.py"]
    assert box.commands_run[0].cwd == "openevals"
    assert box.commands_run[0].envs == {"GREETING": "hello"}


async def test_execution_error_reports_traceback(harness: Harness) -> None:
    evaluator = harness.execution(sandbox=harness.sandbox())
    result = await harness.call(evaluator, outputs="def f():\n    raise ValueError('boom')\nf()\n")
    assert result["score"] is False
    comment = result["comment"]
    assert comment.startswith("Command exited with code 1 and error:\nTraceback (most recent call")
    assert 'outputs.py", line 3' in comment
    assert comment.rstrip().endswith("ValueError: boom")


async def test_execution_timeout_is_a_false_score(harness: Harness) -> None:
    evaluator = harness.execution(sandbox=harness.sandbox(), timeout=0.5)
    result = await harness.call(evaluator, outputs="import time\ntime.sleep(30)\n")
    assert result["score"] is False
    assert result["comment"].startswith("Running the code timed out after 0.5 s")


async def test_execution_installs_missing_third_party_packages(harness: Harness) -> None:
    box = harness.sandbox()
    # A module of the project directory and one installed in the sandbox need no install.
    box.path("proj/helpers.py").parent.mkdir(parents=True)
    box.path("proj/helpers.py").write_text("VALUE = 3\n")
    evaluator = harness.execution(sandbox=box, sandbox_project_directory="proj/")
    code = (
        "from typing import TYPE_CHECKING\n"
        "import helpers\n"
        "import yaml\n"
        "if TYPE_CHECKING:\n"
        "    import cv2, bs4, dotenv\n"
        "    from PIL import Image\n"
        "    import cv2.data\n"
        "print(helpers.VALUE, yaml.__name__)\n"
    )
    result = await harness.call(evaluator, outputs=code)
    assert result["score"] is True, result["comment"]
    # Imports the sandbox (this interpreter) lacks are installed under their PyPI names; which
    # of these four are present depends on what else the dev environment holds (gdown brings bs4).
    wanted = [("cv2", "opencv-python"), ("bs4", "beautifulsoup4"), ("dotenv", "python-dotenv")]
    wanted.append(("PIL", "Pillow"))
    missing = [package for module, package in wanted if importlib.util.find_spec(module) is None]
    assert len(missing) >= 2 and box.installed == missing
    kinds = [(c.cmd.split()[:3], c.intercepted, c.cwd) for c in box.commands_run]
    assert kinds == [
        (["python", "-c", "'import"], False, "proj"),
        (["python", "-m", "pip"], True, "proj"),
        (["python", "outputs.py"], False, "proj"),
    ]


async def test_failed_install_is_a_false_score(harness: Harness) -> None:
    box = harness.sandbox(unavailable_packages=["made-up-lib"])
    evaluator = harness.execution(sandbox=box)
    result = await harness.call(evaluator, outputs="import made_up_lib\n")
    assert result["score"] is False
    assert result["comment"].startswith("Installing dependencies (made_up_lib) failed: ")
    assert "No matching distribution found for made_up_lib" in result["comment"]
    assert [c.cmd.split()[1] for c in box.commands_run] == ["-c", "-m"]  # never ran the code


async def test_absolute_project_directory_and_custom_command(harness: Harness) -> None:
    box = harness.sandbox()
    evaluator = harness.execution(
        sandbox=box, sandbox_project_directory="/work/app", execution_command="python -I"
    )
    result = await harness.call(evaluator, outputs="import sys\nprint(sys.flags.isolated)\n")
    assert result["score"] is True
    assert box.path("/work/app/outputs.py").exists()
    assert box.commands_run[-1].cmd == "python -I outputs.py"


async def test_extraction_runs_before_the_sandbox(harness: Harness) -> None:
    box = harness.sandbox()
    evaluator = harness.execution(sandbox=box, code_extraction_strategy="markdown_code_blocks")
    failed = await harness.call(evaluator, outputs="No code, sorry.")
    assert failed == {
        "key": "execution_succeeded",
        "score": False,
        "comment": None,
        "metadata": {"code_extraction_failed": True},
    }
    assert box.calls == []
    outputs = {"role": "assistant", "content": "Run:\n```python\nprint(1 + 1)\n```"}
    before = copy.deepcopy(outputs)
    ok = await harness.call(evaluator, outputs=outputs)
    assert ok["score"] is True
    assert box.written == {"openevals/outputs.py": "print(1 + 1)\n"}
    assert outputs == before


async def test_other_sandbox_errors_propagate(mode: str) -> None:
    from e2b import SandboxException

    class Broken:
        def __init__(self) -> None:
            self.files = self
            self.commands = self

        def write(self, *a: Any, **k: Any) -> Any:
            if mode == "sync":
                return None

            async def done() -> None:
                return None

            return done()

        def run(self, *a: Any, **k: Any) -> Any:
            raise SandboxException("sandbox is not running anymore")

    harness = Harness(mode)
    with pytest.raises(SandboxException, match="not running"):
        await harness.call(harness.execution(sandbox=Broken()), outputs="print(1)")


# --------------------------------------------------------------------------- pyright in the sandbox


@requires_pyright
async def test_e2b_pyright(harness: Harness) -> None:
    box = harness.sandbox()
    evaluator = harness.pyright(sandbox=box)
    result = await harness.call(
        evaluator, outputs="import yaml\n\ndef f(x: int) -> str:\n    return x\n"
    )
    assert result["key"] == "pyright_succeeded"
    assert result["score"] is False
    assert result["comment"].startswith('4:12: error: Type "int" is not assignable to return type')
    assert result["comment"].endswith("[reportReturnType]")
    assert box.commands_run[-1].cmd == E2B_COMMAND
    assert box.installed == []  # yaml is already importable in the sandbox


@requires_pyright
def test_e2b_pyright_success_and_unresolved_import() -> None:
    with FakeSandbox() as box:
        evaluator = create_e2b_pyright_evaluator(sandbox=box)
        assert evaluator(outputs="x: int = 1\n") == {
            "key": "pyright_succeeded",
            "score": True,
            "comment": "[]",
            "metadata": None,
        }
        # The fake records the install without installing: pyright cannot resolve the import,
        # which in the sandbox is a real error (unlike the local evaluator).
        result = evaluator(outputs="import cv2\n")
        assert box.installed == ["opencv-python"]
        assert result["score"] is False
        assert "[reportMissingImports]" in result["comment"]


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (
            CommandOutcome(127, "", "sh: pyright: not found", "Command exited with code 127"),
            (False, "pyright could not run in the sandbox: Command exited with code 127"),
        ),
        (
            CommandOutcome(0, "npm WARN something", ""),
            (False, "pyright did not print a JSON report; it printed: npm WARN something"),
        ),
    ],
)
def test_e2b_pyright_command_failures_are_false_scores(
    outcome: CommandOutcome, expected: tuple[bool, str]
) -> None:
    plan = pyright_plan("x = 1\n", directory="openevals", timeout=5)
    assert next(plan) == WriteFile("openevals/outputs.py", "x = 1\n")
    step = plan.send(None)
    assert isinstance(step, RunCommand)
    assert (step.cmd, step.cwd, step.timeout) == (E2B_COMMAND, "openevals", 5)
    with pytest.raises(StopIteration) as stop:
        plan.send(outcome)
    assert stop.value.value == expected


def test_e2b_pyright_timeout_raises_instead_of_scoring() -> None:
    plan = pyright_plan("x = 1\n", directory="openevals", timeout=5)
    next(plan)
    plan.send(None)
    with pytest.raises(CheckTimeoutError, match=r"pyright in the E2B sandbox .*timeout=5 s"):
        plan.send(CommandOutcome(None, "", "", "deadline exceeded", timed_out=True))


@pytest.fixture
def hung_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake sandbox finds these first on PATH: a ``pyright`` and a ``python`` that hang."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("pyright", "python"):
        script = bin_dir / name
        script.write_text("#!/bin/sh\nsleep 60\n")
        script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python3"))


@pytest.mark.usefixtures("hung_tools")
async def test_a_hung_pyright_in_the_sandbox_raises(harness: Harness) -> None:
    evaluator = harness.pyright(sandbox=harness.sandbox(), timeout=0.3)
    with pytest.raises(CheckTimeoutError, match="Type-checking with pyright") as info:
        await harness.call(evaluator, outputs="x: int = 1\n")
    assert info.value.timeout == 0.3 and isinstance(info.value, TimeoutError)


@pytest.mark.usefixtures("hung_tools")
async def test_a_hung_package_lookup_in_the_sandbox_raises(harness: Harness) -> None:
    evaluator = harness.execution(sandbox=harness.sandbox(), timeout=0.3)
    with pytest.raises(CheckTimeoutError, match="Looking up the installed packages"):
        await harness.call(evaluator, outputs="import yaml\nprint(yaml)\n")


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"sandbox": None}, TypeError, "`sandbox` must be"),
        ({"model": "openai:gpt-4.1"}, ValueError, "only used by"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"execution_command": " "}, ValueError, "execution_command"),
        ({"environment_variables": {"A": 1}}, TypeError, "environment_variables"),
        ({"environment_variables": ["A=1"]}, TypeError, "environment_variables"),
        ({"sandbox_project_directory": ""}, ValueError, "sandbox_project_directory"),
        ({"code_extraction_strategy": "llm"}, ValueError, "needs a model"),
    ],
)
def test_execution_options_are_validated(
    options: dict[str, Any], error: type[Exception], words: str
) -> None:
    with FakeSandbox() as box:
        kwargs: dict[str, Any] = {"sandbox": box, **options}
        with pytest.raises(error, match=words):
            create_e2b_execution_evaluator(**kwargs)


def test_pyright_options_are_validated() -> None:
    with pytest.raises(TypeError, match="`sandbox` must be"):
        create_async_e2b_pyright_evaluator(sandbox=object())  # type: ignore[arg-type]
    with FakeSandbox() as box, pytest.raises(ValueError, match="only used by"):
        create_e2b_pyright_evaluator(sandbox=box, client=object())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- SDK compatibility


def _real_methods() -> dict[str, dict[str, Any]]:
    from e2b.sandbox_async.commands.command import Commands as AsyncCommands
    from e2b.sandbox_async.filesystem.filesystem import Filesystem as AsyncFilesystem
    from e2b.sandbox_sync.commands.command import Commands
    from e2b.sandbox_sync.filesystem.filesystem import Filesystem

    return {
        "sync": {"files.write": Filesystem.write, "commands.run": Commands.run},
        "async": {"files.write": AsyncFilesystem.write, "commands.run": AsyncCommands.run},
    }


async def test_our_calls_match_the_real_sdk_signatures(harness: Harness) -> None:
    box = harness.sandbox()
    evaluator = harness.execution(sandbox=box, environment_variables={"A": "b"})
    await harness.call(evaluator, outputs="import made_up_pkg_xyz\n")
    assert {name for name, _, _ in box.calls} == {"files.write", "commands.run"}
    real = _real_methods()[harness.mode]
    for name, args, kwargs in box.calls:
        inspect.signature(real[name]).bind(object(), *args, **kwargs)  # raises if incompatible
        assert inspect.iscoroutinefunction(real[name]) == (harness.mode == "async")


def test_fake_methods_are_a_subset_of_the_real_ones() -> None:
    from e2b_code_interpreter import AsyncSandbox, Sandbox

    for real_cls in (Sandbox, AsyncSandbox):
        assert isinstance(inspect.getattr_static(real_cls, "files"), property)
        assert isinstance(inspect.getattr_static(real_cls, "commands"), property)
    real = _real_methods()
    for mode, box in (("sync", FakeSandbox()), ("async", FakeAsyncSandbox())):
        try:
            for name, method in (
                ("files.write", box.files.write),
                ("commands.run", box.commands.run),
            ):
                real_params = inspect.signature(real[mode][name]).parameters
                fake_params = inspect.signature(method).parameters
                assert list(fake_params) == [p for p in real_params if p in fake_params][1:] or (
                    set(fake_params) <= set(real_params)
                )
                for pname, param in fake_params.items():
                    assert real_params[pname].default == param.default, (mode, name, pname)
                assert inspect.iscoroutinefunction(method) == (mode == "async")
        finally:
            box._close()


def test_sdk_exception_shapes_used_by_the_fake() -> None:
    from e2b import CommandExitException

    exc = CommandExitException(stderr="boom", stdout="", exit_code=2, error=None)
    assert str(exc) == "Command exited with code 2 and error:\nboom"
    assert exc.exit_code == 2


# --------------------------------------------------------------------------- without e2b


@pytest.mark.parametrize("module", ["openevals.code.e2b.execution", "openevals.code.e2b.pyright"])
def test_import_without_e2b_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, "e2b", None)
    monkeypatch.setitem(sys.modules, "e2b_code_interpreter", None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError, match=r'pip install "openevals-suite\[e2b\]"'):
        importlib.import_module(module)


def test_import_detection_works_without_e2b(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "e2b", None)
    monkeypatch.delitem(sys.modules, "openevals.code.e2b._imports", raising=False)
    module = importlib.import_module("openevals.code.e2b._imports")
    assert module.third_party_requirements("import yaml") == [module.Requirement("yaml", "PyYAML")]
