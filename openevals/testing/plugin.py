"""The openevals pytest plugin (registered through the ``pytest11`` entry point as ``openevals``).

It costs nothing until used: loading it defines fixtures, one marker and one option, and imports
nothing beyond pytest.

* **Fixtures.** ``fake_openai`` (a fresh :class:`~openevals.testing.FakeOpenAIServer` for the
  test), ``fake_openai_url`` (its ``base_url``), ``openai_env`` (the server, with
  ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` set so ``"openai:..."`` model strings reach it) and
  ``scripted_judge`` (a factory of judges answering from a script; see
  :func:`openevals.testing.scripted_judge`).
* **Feedback.** In a test marked ``@pytest.mark.openevals``, or one that uses the
  ``openevals_feedback`` fixture, every result an openevals evaluator returns is logged. At the end
  of the session the terminal shows one line per feedback key: how many results, their mean, and
  the failures (boolean scores that were false).
* **Report.** ``--openevals-report PATH`` writes the batch HTML report of everything logged, one
  row per evaluator call, grouped by test.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

__all__ = ["OPENAI_ENV_KEY", "FeedbackLog", "LoggedCall"]

OPENAI_ENV_KEY = "sk-fake-test-key-123456789"
"""The API key ``openai_env`` sets; distinctive, so tests can check it never leaks."""


class LoggedCall:
    """One evaluator call inside a logging test: the test, the evaluator and its results."""

    __slots__ = ("inputs", "outputs", "reference_outputs", "results", "run_name", "test")

    def __init__(
        self, test: str, run_name: str, kwargs: dict[str, Any], results: list[dict[str, Any]]
    ) -> None:
        self.test = test
        self.run_name = run_name
        self.inputs = kwargs.get("inputs")
        self.outputs = kwargs.get("outputs")
        self.reference_outputs = kwargs.get("reference_outputs")
        self.results = results


def _result_dicts(out: Any) -> list[dict[str, Any]]:
    """The result dicts in an evaluator's return value (structured answers are not results)."""
    items = out if isinstance(out, list) else [out]
    return [dict(r) for r in items if isinstance(r, dict) and "key" in r and "score" in r]


class FeedbackLog:
    """Every evaluator result logged during the session, and its summary."""

    def __init__(self) -> None:
        self.calls: list[LoggedCall] = []

    def recorder(self, test: str) -> Callable[[str, dict[str, Any], Any], None]:
        def record(run_name: str, kwargs: dict[str, Any], out: Any) -> None:
            results = _result_dicts(out)
            if results:
                self.calls.append(LoggedCall(test, run_name, kwargs, results))

        return record

    def summary(self) -> list[tuple[str, int, float | None, int]]:
        """``(key, n, mean, failures)`` per feedback key, in first-seen order."""
        table: dict[str, list[Any]] = {}
        for call in self.calls:
            for result in call.results:
                table.setdefault(str(result["key"]), []).append(result.get("score"))
        rows = []
        for key, scores in table.items():
            numbers = [float(s) for s in scores if isinstance(s, (bool, int, float)) and s == s]
            mean = sum(numbers) / len(numbers) if numbers else None
            failures = sum(1 for s in scores if s is False)
            rows.append((key, len(scores), mean, failures))
        return rows

    def write_report(self, path: str) -> str:
        """The batch HTML report of the logged calls (one row each, grouped by test)."""
        from openevals.evaluation import EvaluatorSpec, evaluate

        rows = [
            {
                "id": f"{call.test}#{i}",
                "inputs": call.inputs,
                "outputs": call.outputs,
                "reference_outputs": call.reference_outputs,
                "test": call.test,
                "logged": call.results,
            }
            for i, call in enumerate(self.calls)
        ]

        def logged(**row: Any) -> list[dict[str, Any]]:
            return list(row["logged"])

        result = evaluate(
            rows,
            {"pytest": EvaluatorSpec(logged, name="pytest", fields={"logged": "logged"})},
            group_by="test",
            progress=False,
        )
        return str(result.report_html(path, title="openevals: pytest feedback"))


_LOG = pytest.StashKey[FeedbackLog]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("openevals")
    group.addoption(
        "--openevals-report",
        metavar="PATH",
        default=None,
        help="write an HTML report of the evaluator feedback logged by @pytest.mark.openevals "
        "tests (and tests using the openevals_feedback fixture)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "openevals: log every openevals evaluator result of this test (session summary, "
        "--openevals-report)",
    )
    config.stash[_LOG] = FeedbackLog()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    log = item.config.stash.get(_LOG, None)
    wanted = item.get_closest_marker("openevals") is not None or "openevals_feedback" in getattr(
        item, "fixturenames", ()
    )
    if log is None or not wanted:
        return (yield)
    from openevals.utils import result_hook

    token = result_hook.set(log.recorder(item.nodeid))
    try:
        return (yield)
    finally:
        result_hook.reset(token)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    log = config.stash.get(_LOG, None)
    if log is None or not log.calls:
        return
    terminalreporter.section("openevals feedback")
    rows = log.summary()
    width = max(len("key"), *(len(key) for key, *_ in rows))
    terminalreporter.write_line(f"{'key':<{width}}  {'n':>6}  {'mean':>7}  {'failures':>8}")
    for key, n, mean, failures in rows:
        shown = "-" if mean is None else f"{mean:.3f}"
        terminalreporter.write_line(f"{key:<{width}}  {n:>6}  {shown:>7}  {failures:>8}")
    path = config.getoption("--openevals-report")
    if path:
        terminalreporter.write_line(f"openevals report: {log.write_report(os.fspath(path))}")


@pytest.fixture
def openevals_feedback(request: pytest.FixtureRequest) -> FeedbackLog:
    """Log this test's evaluator results (as ``@pytest.mark.openevals`` does); the session's log."""
    return request.config.stash[_LOG]


@pytest.fixture
def fake_openai() -> Iterator[Any]:
    """A fresh fake OpenAI server for this test, stopped afterwards.

    Each server listens on a port never used before in the process: langchain-openai caches
    clients per ``base_url``, and an async client cached by one test is tied to its event loop.
    """
    from openevals.testing.server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def fake_openai_url(fake_openai: Any) -> str:
    """``base_url`` of the test's fake server (``http://127.0.0.1:PORT/v1``)."""
    return str(fake_openai.base_url)


@pytest.fixture
def openai_env(fake_openai: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The test's fake server, with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` set so that
    ``"openai:..."`` model strings and default clients reach it (``OPENAI_API_BASE`` removed)."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_ENV_KEY)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    return fake_openai


@pytest.fixture
def scripted_judge(fake_openai: Any) -> Callable[..., Any]:
    """``scripted_judge(*answers, **judge_options)``: a judge on the test's fake server that gives
    ``answers`` in order (see :func:`openevals.testing.scripted_judge`)."""
    from openevals.testing.judges import scripted_judge as make

    def factory(*answers: Any, **options: Any) -> Any:
        return make(fake_openai, *answers, **options)

    return factory
