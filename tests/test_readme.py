"""Every Python example in README.md runs.

Examples run in-process with fresh globals. LLM calls go to the fake OpenAI server through
``OPENAI_BASE_URL``; it answers any structured request with a minimal valid instance of the
requested schema. Examples that need a network service (E2B sandboxes, a LangSmith account, other
providers) are skipped by pattern. For examples that involve no model, the printed output must equal
the output block that follows them in the README.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.schema_responder import schema_responder

README = Path(__file__).resolve().parent.parent / "README.md"
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
    "evaluate(",
    "e2b",
)
USES_MODEL = ("model=", "judge=", "client=", "embeddings", "simulated_user")


def _blocks() -> list[tuple[int, str, str | None]]:
    """(line, code, expected output or None) for each ```python block."""
    lines = README.read_text().splitlines()
    blocks: list[tuple[int, str, str | None]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start, i = i + 1, i + 1
            body = []
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            expected = None
            if j < len(lines) and lines[j].strip() in ("```", "```text"):
                k, out = j + 1, []
                while lines[k].strip() != "```":
                    out.append(lines[k])
                    k += 1
                expected = "\n".join(out)
            blocks.append((start, "\n".join(body), expected))
        i += 1
    return blocks


BLOCKS = [b for b in _blocks() if not any(p in b[1] for p in NEEDS_NETWORK)]


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> FakeOpenAIServer:
    server = FakeOpenAIServer()
    server.set_responder(schema_responder)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield server
    server.stop()


def _run(code: str, monkeypatch: pytest.MonkeyPatch) -> str:
    buffer = io.StringIO()
    compiled = compile(code, "<readme>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    # A real module, so that annotations defined in the example resolve (pydantic, TypedDicts).
    module = types.ModuleType("readme_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with contextlib.redirect_stdout(buffer):
        result = eval(compiled, module.__dict__)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    return buffer.getvalue()


def test_readme_has_examples() -> None:
    assert len(BLOCKS) > 20


@pytest.mark.parametrize(("line", "code", "expected"), BLOCKS, ids=[f"L{b[0]}" for b in BLOCKS])
def test_readme_example_runs(
    line: int,
    code: str,
    expected: str | None,
    model_server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    printed = _run(code, monkeypatch)
    if expected is None or any(marker in code for marker in USES_MODEL):
        return
    if "..." in expected:
        pattern = ".*".join(re.escape(part) for part in expected.strip().split("..."))
        assert re.fullmatch(pattern, printed.strip(), re.DOTALL), printed
    else:
        assert printed.strip() == expected.strip()
