"""Every Python example in README.md and in the documentation pages under docs/ runs, from the
installed wheel.

Pages are every ``*.md`` file in ``docs/`` (the MkDocs site) plus ``README.md``. The test builds
the wheel, installs it into a fresh virtual environment (which borrows the dependencies of the
current one, but not its editable ``openevals``) and runs every example there, from a folder
outside the repository (``tests/docs_runner.py``), so no example can depend on a file that does
not ship. Each ```python block runs with fresh globals, in a temporary working directory. LLM calls go to the
fake OpenAI server through ``OPENAI_BASE_URL``; it answers any structured request with a minimal
valid instance of the requested schema. Examples that need a network service (E2B sandboxes, a
LangSmith account, other providers) are skipped by pattern. For examples that involve no model,
the printed output must equal the output block (a bare ```` ``` ```` or ```` ```text ```` fence)
that follows them on the page; ``...`` in an expected output matches anything. Examples that
start their own scripted ``FakeOpenAIServer(`` (or patch ``openevals.llm.init_chat_model``) are
compared too, even when they use a model.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

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


def _wheel_venv(root: Path) -> Path:
    """A fresh venv at ``root/venv`` holding the wheel built from this tree; its python."""
    dist = root / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = dist.glob("openevals_suite-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    install = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--target", site, str(wheel)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    # The dependencies come from this environment's site-packages, listed as plain paths: their
    # .pth files (the editable openevals among them) are not processed, so only the wheel's
    # openevals is importable.
    borrowed = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (Path(site) / "_docs_test_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    return python


@pytest.fixture(scope="module")
def wheel_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str | None]]:
    """Every runnable example, run once in the wheel's venv: id -> printed output and error."""
    root = tmp_path_factory.mktemp("docs-wheel")
    python = _wheel_venv(root)
    runner = root / "runner.py"
    shutil.copy(ROOT / "tests" / "docs_runner.py", runner)
    payload = [{"id": _id(e), "name": f"<{e.page}:{e.line}>", "code": e.code} for e in RUNNABLE]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # Command-line tools the examples run (mypy, pyright) come from this environment's bin.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        [str(python), str(runner)],
        input=json.dumps(payload),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    results: dict[str, dict[str, str | None]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def _id(example: Example) -> str:
    return f"{example.page.removeprefix('docs/')}:L{example.line}"


def test_examples_run_from_the_wheel_not_the_tree(
    wheel_runs: dict[str, dict[str, str | None]],
) -> None:
    location = str(wheel_runs["__openevals_file__"]["printed"])
    assert "docs-wheel" in location and not location.startswith(str(ROOT)), location


def test_every_page_is_collected() -> None:
    names = {e.page for e in ALL}
    assert "README.md" in names
    assert len(PAGES) > 10 and len(RUNNABLE) > 50
    # A page whose only examples are all skipped would silently test nothing.
    assert {e.page for e in RUNNABLE} >= names - {"docs/langsmith.md"}


@pytest.mark.parametrize("example", RUNNABLE, ids=[_id(e) for e in RUNNABLE])
def test_example_runs(example: Example, wheel_runs: dict[str, dict[str, str | None]]) -> None:
    run = wheel_runs[_id(example)]
    assert run["error"] is None, f"{example.page}, line {example.line}:\n{run['error']}"
    printed = str(run["printed"])
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
