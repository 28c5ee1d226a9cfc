"""Every Python example in README.md and in the documentation pages under docs/ runs.

Pages are every ``*.md`` file in ``docs/`` (the MkDocs site) plus ``README.md``. Each ```python
block runs in-process with fresh globals, in a temporary working directory. LLM calls go to the
fake OpenAI server through ``OPENAI_BASE_URL``; it answers any structured request with a minimal
valid instance of the requested schema. Examples that need a network service (E2B sandboxes, a
LangSmith account, other providers) are skipped by pattern. For examples that involve no model,
the printed output must equal the output block (a bare ```` ``` ```` or ```` ```text ```` fence)
that follows them on the page; ``...`` in an expected output matches anything. Examples that
start their own scripted ``FakeOpenAIServer(`` (or patch ``openevals.llm.init_chat_model``) are
compared too, even when they use a model.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.schema_responder import schema_responder

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NEEDS_NETWORK = (
    "Sandbox(",
    "AsyncSandbox",
    "Client()",
    "anthropic",
    "google_genai",
    "gemini",
    "@pytest.mark",
    'open("image.jpg"',
    'data="Sample dataset"',
    "langsmith.evaluation",
    "e2b",
)
USES_MODEL = ("model=", "judge=", "client=", "embeddings", "simulated_user")
# An example that starts its own scripted fake server, or replaces the model with a mock through
# the `openevals.llm.init_chat_model` patch point, is deterministic even though it uses a model.
SCRIPTED = ("FakeOpenAIServer(", 'patch("openevals.llm.init_chat_model")')


class Example(NamedTuple):
    page: str  # path relative to the repository root
    line: int  # 1-based line of the first line of code
    code: str
    expected: str | None  # the output block that follows, if any


def _fence_body(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines of the fence opened at ``start - 1`` and the index of its closing line."""
    end = start
    while lines[end].strip() != "```":
        end += 1
    return lines[start:end], end


def examples_in(page: Path) -> Iterator[Example]:
    """Each ```python block of ``page`` with the output block that follows it, if any."""
    lines = page.read_text().splitlines()
    name = page.relative_to(ROOT).as_posix()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            body, i = _fence_body(lines, i + 1)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            expected = None
            if j < len(lines) and lines[j].strip() in ("```", "```text"):
                expected = "\n".join(_fence_body(lines, j + 1)[0])
            yield Example(name, i - len(body) + 1, "\n".join(body), expected)
        i += 1


ALL = [example for page in PAGES for example in examples_in(page)]
RUNNABLE = [e for e in ALL if not any(p in e.code for p in NEEDS_NETWORK)]


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer()
    server.set_responder(schema_responder)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield server
    server.stop()


def _run(code: str, name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    buffer = io.StringIO()
    compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    # A real module, so that annotations defined in the example resolve (pydantic, TypedDicts).
    module = types.ModuleType("docs_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with contextlib.redirect_stdout(buffer):
        result = eval(compiled, module.__dict__)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    return buffer.getvalue()


def test_every_page_is_collected() -> None:
    names = {e.page for e in ALL}
    assert "README.md" in names
    assert len(PAGES) > 10 and len(RUNNABLE) > 50
    # A page whose only examples are all skipped would silently test nothing.
    assert {e.page for e in RUNNABLE} >= names - {"docs/langsmith.md"}


@pytest.mark.parametrize(
    "example", RUNNABLE, ids=[f"{e.page.removeprefix('docs/')}:L{e.line}" for e in RUNNABLE]
)
def test_example_runs(
    example: Example,
    model_server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    printed = _run(example.code, f"<{example.page}:{example.line}>", monkeypatch)
    expected = example.expected
    if expected is None:
        return
    scripted = any(marker in example.code for marker in SCRIPTED)
    if not scripted and any(marker in example.code for marker in USES_MODEL):
        return
    if "..." in expected:
        pattern = ".*".join(re.escape(part) for part in expected.strip().split("..."))
        assert re.fullmatch(pattern, printed.strip(), re.DOTALL), printed
    else:
        assert printed.strip() == expected.strip()
