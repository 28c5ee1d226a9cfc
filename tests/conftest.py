"""Shared pytest fixtures."""

from tests.fakes.fixtures import fake_openai, fake_openai_url  # noqa: F401
