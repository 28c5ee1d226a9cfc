"""Robustness of the code evaluators against text that UTF-8 cannot carry (issue 16, item 5).

Code holding a lone surrogate (U+D800..U+DFFF) cannot be written to a source file, uploaded to a
sandbox or sent to a model. Every such sink must refuse it with a ``ValueError`` naming the
parameter (``outputs``, ``outputs[i]``, ``mypy_cli_args[0]``, ...) and the position, before any
checker process, sandbox call or model request starts. The checks are pure and cheap, so they are
driven with many hypothesis examples while the type checkers' processes are blocked; two real
checker runs show that surrogates outside the extracted code do no harm.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from openevals._text import LoneSurrogateError, check_text, first_surrogate, line_column
from openevals.code import _typecheck
from openevals.code.e2b.execution import (
    create_async_e2b_execution_evaluator,
    create_e2b_execution_evaluator,
)
from openevals.code.e2b.pyright import (
    create_async_e2b_pyright_evaluator,
    create_e2b_pyright_evaluator,
)
from openevals.code.mypy import create_async_mypy_evaluator, create_mypy_evaluator
from openevals.code.pyright import create_async_pyright_evaluator, create_pyright_evaluator
from openevals.testing import FakeAsyncSandbox, FakeSandbox
from tests.code.checkers import requires_mypy, requires_pyright
from tests.robustness.surrogates import SURROGATES, VALID_TEXT, text_with_surrogate

EXAMPLES = 80


@st.composite
def code_with_surrogate(draw: st.DrawFn) -> tuple[str, int]:
    """Python-looking code with a lone surrogate inside a string literal on some line."""
    lines = draw(st.lists(st.sampled_from(["x = 1", "def f() -> int:", "    return 2", ""])))
    literal = draw(VALID_TEXT.filter(lambda s: "\n" not in s and "`" not in s and "~" not in s))
    bad = f"s = '{literal}{draw(SURROGATES)}'"
    at = draw(st.integers(min_value=0, max_value=len(lines)))
    lines.insert(at, bad)
    code = "\n".join(lines)
    return code, first_surrogate(code) or 0


# --------------------------------------------------------------------------- the pure check


@settings(max_examples=EXAMPLES * 3)
@given(bad=text_with_surrogate(), name=st.sampled_from(["outputs", "outputs[3]", "texts[0]"]))
def test_check_text_names_the_parameter_and_the_first_surrogate(
    bad: tuple[str, int], name: str
) -> None:
    text, index = bad
    with pytest.raises(LoneSurrogateError) as caught:
        check_text(text, name, sink="mypy")
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.parameter, error.index) == (name, index)
    line, column = line_column(text, index)
    assert line == text[:index].count("\n") + 1
    assert column == index - (text[:index].rfind("\n") + 1) + 1
    message = str(error)
    assert message.startswith(f"`{name}` contains a lone surrogate code point ")
    assert f"U+{ord(text[index]):04X} at index {index} (line {line}, column {column})" in message
    assert "for mypy" in message and "encode('utf-8', 'replace')" in message


@settings(max_examples=EXAMPLES)
@given(text=VALID_TEXT)
def test_check_text_returns_valid_text_unchanged(text: str) -> None:
    assert check_text(text, "outputs") is text
    assert first_surrogate(text) is None
    text.encode("utf-8")  # what every sink does next


# --------------------------------------------------------------------------- local type checkers


@contextlib.contextmanager
def no_checker_process() -> Iterator[None]:
    """Fail the test if a type-checker process (or even its lookup) is started."""

    def started(*_: Any, **__: Any) -> Any:
        raise AssertionError("a type checker was started for text that must be refused first")

    with (
        mock.patch.object(_typecheck, "_run_process", started),
        mock.patch.object(_typecheck, "_arun_process", started),
        mock.patch.object(_typecheck, "find_executable", started),
    ):
        yield


class StubChat:
    """A minimal LangChain-shaped chat model for the 'llm' extraction strategy: replies with the
    structured answer ``{"code": code}`` as JSON text."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.calls = 0

    def bind_tools(self, tools: Any, **_: Any) -> StubChat:
        return self

    def invoke(self, messages: Any, config: Any = None) -> AIMessage:
        self.calls += 1
        return AIMessage(content=json.dumps({"code": self.code}))

    async def ainvoke(self, messages: Any, config: Any = None) -> AIMessage:
        return self.invoke(messages, config)


CHECKERS = {
    ("mypy", False): create_mypy_evaluator,
    ("mypy", True): create_async_mypy_evaluator,
    ("pyright", False): create_pyright_evaluator,
    ("pyright", True): create_async_pyright_evaluator,
}
# how the surrogate reaches the checker: the whole output, a fenced block, a custom extractor, or
# the code an extraction model returned
ROUTES = ["none", "markdown_code_blocks", "code_extractor", "llm_reply"]


def _evaluator(checker: str, is_async: bool, route: str, code: str) -> Any:
    factory: Any = CHECKERS[(checker, is_async)]
    if route == "code_extractor":
        return factory(code_extractor=lambda outputs: outputs["code"])
    if route == "llm_reply":
        return factory(code_extraction_strategy="llm", client=StubChat(code))
    return factory(code_extraction_strategy=route)


def _output(route: str, code: str) -> Any:
    if route == "markdown_code_blocks":
        return f"Here it is:\n```python\n{code}\n```\nDone."
    if route == "code_extractor":
        return {"code": code}
    if route == "llm_reply":
        return "please extract the code of this fine answer"
    return code


def _call(evaluator: Any, is_async: bool, batch: bool, outputs: list[Any]) -> Any:
    if batch:
        pending = evaluator.abatch(outputs) if is_async else evaluator.batch(outputs)
    else:
        pending = evaluator(outputs=outputs[0])
    return asyncio.run(pending) if is_async else pending


@settings(max_examples=EXAMPLES)
@given(
    bad=code_with_surrogate(),
    checker=st.sampled_from(["mypy", "pyright"]),
    is_async=st.booleans(),
    batch=st.booleans(),
    route=st.sampled_from(ROUTES),
    data=st.data(),
)
def test_type_checkers_refuse_surrogate_code_before_starting(
    bad: tuple[str, int],
    checker: str,
    is_async: bool,
    batch: bool,
    route: str,
    data: st.DataObject,
) -> None:
    code, index = bad
    size = data.draw(st.integers(min_value=1, max_value=6)) if batch else 1
    position = data.draw(st.integers(min_value=0, max_value=size - 1))
    good = "x: int = 1"
    outputs = [_output(route, good) for _ in range(size)]
    outputs[position] = _output(route, code)
    evaluator = _evaluator(checker, is_async, route, code)
    if route == "llm_reply" and batch:
        outputs = outputs[:1]  # one stubbed model reply per call
        position = 0
    name = f"outputs[{position}]" if batch else "outputs"
    with no_checker_process(), pytest.raises(LoneSurrogateError) as caught:
        _call(evaluator, is_async, batch, outputs)
    assert caught.value.parameter == name
    assert caught.value.index == index
    assert f"`{name}` contains a lone surrogate" in str(caught.value)
    assert (
        f"of its code; surrogates are not valid Unicode and cannot be encoded as UTF-8 for {checker}"
        in str(caught.value)
    )


@settings(max_examples=EXAMPLES // 2)
@given(
    bad=text_with_surrogate(), is_async=st.booleans(), checker=st.sampled_from(["mypy", "pyright"])
)
def test_llm_extraction_refuses_surrogate_outputs_before_calling_the_model(
    bad: tuple[str, int], is_async: bool, checker: str
) -> None:
    text, index = bad
    chat = StubChat("x = 1")
    factory: Any = CHECKERS[(checker, is_async)]
    evaluator = factory(code_extraction_strategy="llm", client=chat)
    with (
        no_checker_process(),
        pytest.raises(LoneSurrogateError, match="code-extraction model") as e,
    ):
        _call(evaluator, is_async, True, ["x = 1", text])
    assert (e.value.parameter, e.value.index) == ("outputs[1]", index)
    assert chat.calls == 1  # only the first, valid output reached the model


@pytest.mark.parametrize("factory", list(CHECKERS.values()))
def test_surrogate_cli_arguments_are_refused_at_creation(factory: Any) -> None:
    parameter = "mypy_cli_args" if "mypy" in factory.__name__ else "pyright_cli_args"
    with pytest.raises(LoneSurrogateError, match=rf"`{parameter}\[1\]` .* at index 6 "):
        factory(**{parameter: ["--flag", "--out=\udcff"]})


@requires_mypy
def test_real_mypy_batch_with_surrogates_only_outside_the_code() -> None:
    """Prose around the fenced code may hold anything; only the extracted code must be valid."""
    evaluator = create_mypy_evaluator(code_extraction_strategy="markdown_code_blocks")
    outputs = [
        "Sure \ud83d!\n```python\nx: int = 1\n```",
        "```python\nsmile: str = '\U0001f600 caf\u00e9'\n```\n\udfff",
        "```python\ny: int = 'no'\n```",
    ]
    results = evaluator.batch(outputs)
    assert [r["score"] for r in results] == [True, True, False]


@requires_pyright
def test_real_pyright_async_batch_with_surrogates_only_outside_the_code() -> None:
    evaluator = create_async_pyright_evaluator(code_extraction_strategy="markdown_code_blocks")
    outputs = [
        "\ud800 intro\n```python\nx: int = 1\n```",
        "```python\ny: int = 'no'\n```\n\udc00",
    ]
    results = asyncio.run(evaluator.abatch(outputs))
    assert [r["score"] for r in results] == [True, False]


# --------------------------------------------------------------------------- E2B sandbox

E2B = {
    ("execution", False): (create_e2b_execution_evaluator, FakeSandbox),
    ("execution", True): (create_async_e2b_execution_evaluator, FakeAsyncSandbox),
    ("pyright", False): (create_e2b_pyright_evaluator, FakeSandbox),
    ("pyright", True): (create_async_e2b_pyright_evaluator, FakeAsyncSandbox),
}


@settings(max_examples=EXAMPLES)
@given(
    bad=code_with_surrogate(),
    kind=st.sampled_from(["execution", "pyright"]),
    is_async=st.booleans(),
    markdown=st.booleans(),
)
def test_e2b_evaluators_refuse_surrogate_code_before_touching_the_sandbox(
    bad: tuple[str, int], kind: str, is_async: bool, markdown: bool
) -> None:
    code, index = bad
    factory, sandbox_type = E2B[(kind, is_async)]
    sandbox: Any = sandbox_type()
    strategy = "markdown_code_blocks" if markdown else "none"
    evaluator = factory(sandbox=sandbox, code_extraction_strategy=strategy)
    outputs = f"```python\n{code}\n```" if markdown else code
    with pytest.raises(LoneSurrogateError, match="for the E2B sandbox") as caught:
        pending = evaluator(outputs=outputs)
        if is_async:
            asyncio.run(pending)
    assert (caught.value.parameter, caught.value.index) == ("outputs", index)
    assert sandbox.calls == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_e2b_settings_with_surrogates_are_refused_at_creation(is_async: bool) -> None:
    execution, sandbox_type = E2B[("execution", is_async)]
    pyright, _ = E2B[("pyright", is_async)]
    sandbox: Any = sandbox_type()
    cases: list[tuple[Any, dict[str, Any], str]] = [
        (execution, {"environment_variables": {"A": "x\ud800"}}, r"`environment_variables\['A'\]`"),
        (execution, {"environment_variables": {"B\udc80": "x"}}, "`environment_variables`"),
        (execution, {"execution_command": "python\udc80"}, "`execution_command`"),
        (execution, {"sandbox_project_directory": "dir\ud900"}, "`sandbox_project_directory`"),
        (pyright, {"sandbox_project_directory": "\udfffdir"}, "`sandbox_project_directory`"),
    ]
    for factory, options, name in cases:
        with pytest.raises(LoneSurrogateError, match=f"^{name} contains a lone surrogate"):
            factory(sandbox=sandbox, **options)
    assert sandbox.calls == []
