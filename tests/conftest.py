"""Shared pytest fixtures."""

import pytest
from hypothesis import settings

from tests.fakes.fixtures import fake_openai, fake_openai_url, openai_env  # noqa: F401

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
