"""The fake OpenAI server as the speed tests use it: a verdict for every chat request, and the
environment a ``model="openai:..."`` judge resolves its client from pointing at it."""

from __future__ import annotations

import pytest

from openevals.testing import FakeOpenAIServer

VERDICT = {"reasoning": "fine", "score": True}


@pytest.fixture
def server(fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAIServer:
    fake_openai.set_default_chat(json=VERDICT)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return fake_openai
