"""Pytest fixtures for the fake OpenAI server.

Every test gets its own server on a port never used before in this process. That matters:
langchain-openai caches httpx clients per ``base_url`` process-wide, and an async client cached by
one test is bound to that test's event loop, so sharing one server (one URL) between async tests
would fail with "Event loop is closed". Starting a server costs about a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

__all__ = ["OPENAI_ENV_KEY", "fake_openai", "fake_openai_url", "openai_env"]

OPENAI_ENV_KEY = "sk-fake-test-key-123456789"
"""The API key :func:`openai_env` sets; distinctive, so tests can check it never leaks."""


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A fresh fake OpenAI server for this test, stopped afterwards."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def fake_openai_url(fake_openai: FakeOpenAIServer) -> str:
    """``base_url`` of the test's fake server (``http://127.0.0.1:PORT/v1``)."""
    return fake_openai.base_url


@pytest.fixture
def openai_env(fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAIServer:
    """The test's fake server, with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` set so that
    ``"openai:..."`` model strings and default clients reach it (``OPENAI_API_BASE`` removed)."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_ENV_KEY)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    return fake_openai
