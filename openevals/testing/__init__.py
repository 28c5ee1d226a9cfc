"""Test your evaluators and pipelines offline, with what openevals tests itself with.

* :class:`FakeOpenAIServer`: a real HTTP server on ``127.0.0.1`` that speaks the OpenAI API (chat
  completions with streaming, tool calls, ``n`` and logprobs; embeddings; models), with scripted
  replies and responders, fault injection and a request log; :func:`openai_client`,
  :func:`async_openai_client` and :func:`chat_model` point clients at it.
* :class:`FakeSandbox` / :class:`FakeAsyncSandbox`: a local stand-in for an E2B sandbox (needs the
  ``e2b`` extra).
* :func:`schema_responder`: answers any structured request with a minimal valid instance.
* :class:`Cassette`: record real judge answers once to a reviewable JSONL file, replay them in CI
  with no network.
* A pytest plugin (:mod:`openevals.testing.plugin`, registered as ``openevals``): fixtures for a
  fake server and scripted judges, a feedback summary, ``--openevals-report``.

Names resolve lazily: importing ``openevals.testing`` starts no server and imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.testing._protocol import (
        DEFAULT_MODELS as DEFAULT_MODELS,
        MALFORMED_REPLIES as MALFORMED_REPLIES,
        RecordedRequest as RecordedRequest,
        Reply as Reply,
    )
    from openevals.testing.cassette import (
        Cassette as Cassette,
        CassetteError as CassetteError,
        CassetteMissError as CassetteMissError,
    )
    from openevals.testing.judges import scripted_judge as scripted_judge
    from openevals.testing.responders import (
        instance_for as instance_for,
        schema_responder as schema_responder,
    )
    from openevals.testing.sandbox import (
        FakeAsyncSandbox as FakeAsyncSandbox,
        FakeSandbox as FakeSandbox,
        RecordedCommand as RecordedCommand,
    )
    from openevals.testing.server import (
        FakeOpenAIServer as FakeOpenAIServer,
        async_openai_client as async_openai_client,
        chat_model as chat_model,
        openai_client as openai_client,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
