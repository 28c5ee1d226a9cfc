"""Which backend drives a judge: the caller's ``judge`` object, or a model resolved from a string.

Model strings resolve lazily, on the judge's first call. ``openevals.llm.init_chat_model`` is the
patch point that openevals 0.2.2-era tests use (``patch("openevals.llm.init_chat_model")``): while
it is replaced, model strings resolve through the replacement to a LangChain chat model; otherwise
through :func:`openevals.models.resolve_chat_model`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from openevals._judge.backends import Backend, OpenAIClientBackend
from openevals._judge.langchain_backend import LangChainBackend


def init_chat_model(model: str, *, model_provider: str | None = None, **kwargs: Any) -> Any:
    """A LangChain chat model for ``model`` (``"provider:model"``, or a name plus
    ``model_provider``); extra keyword arguments go to the model's constructor.

    ``openai:`` models need only ``langchain-openai``; other providers resolve through
    ``langchain``'s ``init_chat_model`` when that package is installed.
    """
    from openevals.models import resolve_chat_model

    if not isinstance(model, str):
        raise TypeError(f"`model` must be a 'provider:model' string, got {type(model).__name__}")
    if model_provider is not None:
        model = f"{model_provider}:{model}"
    return resolve_chat_model(model, **kwargs)


def looks_like_chat_model(obj: Any) -> bool:
    return callable(getattr(obj, "invoke", None)) and callable(getattr(obj, "ainvoke", None))


def backend_for_judge(
    judge: Any, model: str | None, so_kwargs: Mapping[str, Any], timeout: float | None = None
) -> Backend:
    """The backend for a caller's ``judge`` object (checked at creation).

    ``timeout`` goes with each request of an OpenAI client; a LangChain chat model keeps its own
    (a ``ValueError`` says so).
    """
    if hasattr(judge, "chat") and not looks_like_chat_model(judge):  # an OpenAI-style client
        if model is None:
            raise ValueError(
                "an OpenAI client was passed as `judge`; also pass `model` with the model "
                "name, e.g. model='gpt-4.1-mini'"
            )
        return OpenAIClientBackend(judge, model, timeout=timeout)
    if looks_like_chat_model(judge):
        if timeout is not None:
            raise ValueError(
                f"`timeout={timeout:g}` applies to model strings and OpenAI clients; a LangChain "
                f"chat model ({type(judge).__name__}) keeps its own: set it on the model (e.g. "
                "ChatOpenAI(timeout=...)) and drop `timeout`"
            )
        return LangChainBackend(judge, so_kwargs)
    raise TypeError(
        "`judge` must be a LangChain chat model or an OpenAI client (openai.OpenAI / "
        f"AsyncOpenAI); got {type(judge).__name__}"
    )


def patched_init_chat_model() -> Any:
    """``openevals.llm.init_chat_model`` when a caller replaced it, else ``None``."""
    module = sys.modules.get("openevals.llm")
    current = getattr(module, "init_chat_model", init_chat_model)
    return None if current is init_chat_model else current
