"""The shipped pytest plugin (openevals.testing.plugin), run in isolated sessions by pytester."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib


def _installed() -> bool:
    """Whether the ``pytest11`` entry point is installed (after ``pip install``): then every
    pytester session loads the plugin by itself, and ``-p`` would register it twice."""
    from importlib.metadata import entry_points

    return any(e.name == "openevals" for e in entry_points(group="pytest11"))


PLUGIN = (
    *(() if _installed() else ("-p", "openevals.testing.plugin")),
    "-p",
    "no:cacheprovider",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)
INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"

SUITE = """
import pytest
from openevals.exact import exact_match


@pytest.mark.openevals
def test_marked():
    assert exact_match(outputs="a", reference_outputs="a")["score"] is True
    assert exact_match(outputs="a", reference_outputs="b")["score"] is False


def test_with_fixture(openevals_feedback, scripted_judge):
    judge = scripted_judge(True, {"score": False, "reasoning": "no"})
    assert judge(inputs="q", outputs="a")["score"] is True
    assert judge(inputs="q", outputs="b")["score"] is False


async def test_async_marked_via_fixture(openevals_feedback, scripted_judge):
    judge = scripted_judge(0.25, continuous=True, use_async=True)
    assert (await judge(inputs="q", outputs="a"))["score"] == 0.25


def test_unmarked_is_not_logged():
    exact_match(outputs="x", reference_outputs="y")
"""


def test_summary_of_logged_feedback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini(INI)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    assert "openevals feedback" in out
    result.stdout.re_match_lines(
        [r"key\s+n\s+mean\s+failures", r"exact_match\s+2\s+0\.500\s+1", r"score\s+3\s+0\.417\s+1"]
    )


def test_report_option_writes_the_batch_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini(INI)
    report = pytester.path / "out" / "feedback.html"
    result = pytester.runpytest(*PLUGIN, f"--openevals-report={report}")
    result.assert_outcomes(passed=4)
    html = report.read_text(encoding="utf-8")
    assert "exact_match" in html and "test_with_fixture" in html
    assert f"openevals report: {report}" in result.stdout.str()


def test_fixtures_give_a_running_fake_server(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixtures="""
import os
import openai

def test_server(fake_openai, fake_openai_url):
    fake_openai.queue_chat("hello")
    client = openai.OpenAI(base_url=fake_openai_url, api_key="k", max_retries=0)
    reply = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "hello"
    assert len(fake_openai.chat_requests) == 1

def test_env(openai_env):
    assert os.environ["OPENAI_BASE_URL"] == openai_env.base_url
"""
    )
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=2)


def test_no_effect_on_suites_that_do_not_use_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
from openevals.exact import exact_match

def test_plain():
    assert exact_match(outputs="a", reference_outputs="a")["score"]
"""
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1)
    assert "openevals feedback" not in result.stdout.str()
    assert result.stdout.str().count("\n") < 10  # no table, no report line, no warning


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, openevals.testing.plugin\n"
        "heavy = [m for m in ('openai', 'langchain_core', 'numpy', 'openevals.testing.server',"
        " 'openevals.evaluation.runner') if m in sys.modules]\n"
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_entry_point_is_declared() -> None:
    data = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"openevals": "openevals.testing.plugin"}
