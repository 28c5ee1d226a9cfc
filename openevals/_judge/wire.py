"""The judge's own HTTP path to an OpenAI-compatible server, for clients it builds itself.

A judge made from a model string (``model="openai:gpt-4.1-mini"``) owns its client, so it can
skip the OpenAI SDK's per-request machinery (option merging, header building, the transport
wrapper, response classes): measured on 500 calls at 50 in flight, that machinery costs about
0.4x the time of the calls themselves, while aiohttp on its own stays within 10% of raw sockets
(``benchmarks/judge_floor.py``). :class:`WireClient` posts the chat-completion JSON straight on
an aiohttp session with keep-alive connections, and raises the SDK's own exception classes
(``openai.RateLimitError`` with the response headers, ``openai.APITimeoutError``, ...), so error
handling, retries and the batch run's back-off see exactly what they would see from the SDK.

It copies what a request needs from the SDK client the judge resolved (base URL, API key and
default headers, default query, timeout; the proxy the environment names, like the SDK) and is used
only when that client is a plain ``openai.AsyncOpenAI`` with a static API key
(:func:`wire_eligible`) and LangChain was not told to use a proxy (``OPENAI_PROXY``); Azure
clients, API-key callables, workload identity or custom auth keep going through the SDK.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["WireClient", "wire_eligible"]


def wire_eligible(template: Any) -> bool:
    """Whether :class:`WireClient` can stand in for the SDK client ``template``."""
    try:
        import aiohttp  # noqa: F401
        import openai
    except ImportError:  # pragma: no cover - openai[aiohttp] is a core dependency
        return False
    query = getattr(template, "default_query", None) or {}
    proxy = _env_proxy(str(getattr(template, "base_url", "")))
    return (
        (proxy is None or proxy.startswith(("http://", "https://")))  # aiohttp has no SOCKS
        and type(template) is openai.AsyncOpenAI
        and isinstance(getattr(template, "api_key", None), str)
        and getattr(template, "workload_identity", None) is None
        and getattr(template, "_api_key_provider", None) is None
        and getattr(template, "_provider", None) is None
        and getattr(template, "custom_auth", None) is None
        and callable(getattr(template, "_make_status_error_from_response", None))
        and all(type(value) in (str, int, float) for value in query.values())
    )


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``HTTP_PROXY``,
    ``ALL_PROXY``, minus ``NO_PROXY``), as the SDK's httpx client reads it; None for none."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or (parts.hostname and urllib.request.proxy_bypass(parts.hostname)):
        return None
    return proxy


def _timeout(value: Any) -> Any:
    """An aiohttp timeout from the SDK's (a number, or an httpx ``Timeout``)."""
    import aiohttp

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return aiohttp.ClientTimeout(total=None, sock_connect=value, sock_read=value)
    connect, read = getattr(value, "connect", None), getattr(value, "read", None)
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)


def _headers(template: Any) -> dict[str, str]:
    """The SDK client's default and auth headers; ``Omit`` markers and non-text values dropped."""
    merged = {**template.default_headers, **template.auth_headers}
    headers = {name: value for name, value in merged.items() if isinstance(value, str)}
    headers["Content-Type"] = "application/json"
    headers["X-Stainless-Async"] = "async:asyncio"
    return headers


def _http_module() -> Any:
    """The HTTP library the SDK's exceptions expect a request/response from."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:  # SDK releases built on httpx
        return importlib.import_module("httpx")


class WireClient:
    """Chat completions over one aiohttp session (``size`` keep-alive connections).

    Build it inside the event loop that will use it; :meth:`close` it on that loop. Requests are
    made once: retries are the judge's (the SDK client it replaces had ``max_retries=0`` too).
    """

    def __init__(self, template: Any, size: int) -> None:
        import aiohttp

        if size < 1:
            raise ValueError(f"`size` must be at least 1 connection; got {size!r}")
        self.pool_size = size
        self.url = str(template.base_url).rstrip("/") + "/chat/completions"
        query = template.default_query  # scalars only (see wire_eligible)
        self._query = {k: str(v) for k, v in query.items()} if query else None
        self.timeout = template.timeout
        self._errors = template._make_status_error_from_response
        # Read once, like the SDK's httpx client; not aiohttp's trust_env, which looks the proxy
        # and ~/.netrc up again in a worker thread for every request.
        self.proxy = _env_proxy(self.url)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=size, limit_per_host=size),
            headers=_headers(template),
            timeout=_timeout(template.timeout),
        )

    def is_closed(self) -> bool:
        return bool(self._session.closed)

    async def close(self) -> None:
        await self._session.close()

    async def chat(self, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` to ``/chat/completions``; the decoded JSON body (the text, like the
        SDK, when the server says it is not JSON). HTTP errors raise the SDK's exceptions."""
        import aiohttp

        body = json.dumps(payload, ensure_ascii=False).encode()
        try:
            async with self._session.post(
                self.url, data=body, params=self._query, proxy=self.proxy
            ) as response:
                raw = await response.read()
                status = response.status
                content_type = response.headers.get("Content-Type", "")
                if status >= 400:
                    raise self._status_error(status, list(response.headers.items()), raw)
        except (asyncio.TimeoutError, TimeoutError) as exc:  # aiohttp's timeouts derive from it
            import openai

            raise openai.APITimeoutError(request=self._request()) from exc
        except aiohttp.ClientError as exc:
            import openai

            raise openai.APIConnectionError(
                message=f"Connection error: {type(exc).__name__}: {exc}", request=self._request()
            ) from exc
        if not content_type.split(";", 1)[0].strip().endswith("json"):
            return raw.decode("utf-8", errors="replace")
        return json.loads(raw)

    def _request(self) -> Any:
        return _http_module().Request("POST", self.url)

    def _status_error(self, status: int, headers: list[tuple[str, str]], raw: bytes) -> Exception:
        """The exception the SDK raises for this HTTP error response: built by the SDK client the
        judge resolved, so class, message and ``body`` follow whichever SDK release is installed."""
        response = _http_module().Response(
            status, headers=headers, content=raw, request=self._request()
        )
        error: Exception = self._errors(response)
        return error
