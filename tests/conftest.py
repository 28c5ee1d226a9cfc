"""Shared pytest fixtures."""

from hypothesis import settings

from tests.fakes.fixtures import fake_openai, fake_openai_url, openai_env  # noqa: F401

# Property tests must not write an example database into the working tree.
settings.register_profile("openevals", database=None, deadline=None)
settings.load_profile("openevals")
