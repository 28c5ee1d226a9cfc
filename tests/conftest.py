"""Shared pytest fixtures."""

import os

import pytest
from hypothesis import settings

# pytester runs the shipped pytest plugin in isolated sessions (tests/testing/test_plugin.py).
pytest_plugins = ("pytester",)


def pytest_configure(config: pytest.Config) -> None:
    """The fixtures (fake_openai, fake_openai_url, openai_env, ...) come from the shipped plugin,
    which the ``pytest11`` entry point loads once the package is installed; a tree whose plugin
    is not installed yet registers it here."""
    import openevals.testing.plugin as plugin

    if not config.pluginmanager.is_registered(plugin):
        config.pluginmanager.register(plugin, "openevals")


# Property tests must not write an example database into the working tree.
settings.register_profile("openevals", database=None, deadline=None)
settings.load_profile("openevals")


@pytest.fixture
def tracing_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangSmith tracing switched off for the test, whatever the environment says (modules that
    want it for every test set ``pytestmark = pytest.mark.usefixtures("tracing_off")``)."""
    for name in (
        "LANGSMITH_TRACING",
        "LANGSMITH_TRACING_V2",
        "LANGCHAIN_TRACING_V2",
        "LANGCHAIN_TRACING",
    ):
        monkeypatch.delenv(name, raising=False)
    from openevals.utils import _reread_tracing_env

    _reread_tracing_env()  # the variables are read once per process, as LangSmith reads them


@pytest.fixture(autouse=True, scope="session")
def _run_store_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The CLI records runs by default: the tests' default run store is a temporary file, never
    ``.openevals/runs.db`` in the working tree."""
    os.environ["OPENEVALS_STORE"] = str(tmp_path_factory.mktemp("store") / "runs.db")
