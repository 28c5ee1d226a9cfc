"""Resolve ``"provider:model"`` strings to LangChain chat models.

``openai:`` models resolve to ``langchain_openai.ChatOpenAI`` without importing the ``langchain``
package (only ``langchain_openai``, a required dependency). Any other provider resolves through
``langchain.chat_models.init_chat_model`` when the optional ``langchain`` package is installed.
``OPENAI_BASE_URL`` (or an explicit ``base_url``) points ``openai:`` models at any OpenAI-compatible
server such as vLLM, Ollama or LM Studio.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from openevals._repr import show

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["parse_model_string", "resolve_chat_model"]

_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "gpt5", "text-")
# Providers whose LangChain package is not simply ``langchain-<provider>``.
_PROVIDER_PACKAGES = {
    "google_genai": "langchain-google-genai",
    "google_vertexai": "langchain-google-vertexai",
    "bedrock": "langchain-aws",
    "bedrock_converse": "langchain-aws",
    "azure_openai": "langchain-openai",
}
_PROVIDER_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")


def parse_model_string(model: str) -> tuple[str | None, str]:
    """Split ``"provider:model"`` into ``(provider, model_name)``.

    A bare model name whose provider is obvious (``gpt-4.1``, ``o3-mini``) is treated as OpenAI;
    otherwise the provider is ``None`` and ``langchain`` decides.
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(
            "`model` must be a non-empty 'provider:model' string such as "
            f"'openai:gpt-4.1-mini'; got {show(model)}"
        )
    model = model.strip()
    if ":" in model:
        provider, _, name = model.partition(":")
        if _PROVIDER_RE.match(provider) and name:
            return provider.lower(), name
    if model.startswith(_OPENAI_PREFIXES):
        return "openai", model
    return None, model


def resolve_chat_model(model: str, **kwargs: Any) -> BaseChatModel:
    """Build a LangChain chat model for ``model`` (``"provider:model"``).

    Extra keyword arguments go to the model's constructor (e.g. ``base_url``, ``api_key``,
    ``max_retries``, ``timeout``).
    """
    provider, name = parse_model_string(model)
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=name, **kwargs)
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        package = _PROVIDER_PACKAGES.get(
            provider or "", f"langchain-{provider}" if provider else None
        )
        extra = f" and {package}" if package else ""
        raise ImportError(
            f"model={show(model)} needs the `langchain` package to resolve provider "
            f"{show(provider or '(inferred)')}: pip install langchain{extra}. "
            "'openai:...' models work without it."
        ) from None
    if provider is None:
        chat_model = init_chat_model(name, **kwargs)
    else:
        chat_model = init_chat_model(name, model_provider=provider, **kwargs)
    return cast("BaseChatModel", chat_model)
