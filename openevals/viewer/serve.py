"""Serving the viewer: :func:`serve` (``openevals view``) and :func:`check_host`, which keeps it
on loopback unless a token guards it."""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from openevals._repr import show

__all__ = ["TOKEN_ENV", "check_host", "serve"]

TOKEN_ENV = "OPENEVALS_VIEW_TOKEN"
_LOOPBACK_NAMES = ("localhost",)


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, token: str | None) -> str | None:
    """The token the viewer must require on ``host``: none on loopback (unless one is given);
    beyond loopback, ``token`` or ``$OPENEVALS_VIEW_TOKEN``.

    Raises:
        ValueError: ``host`` is beyond loopback and no token is given.
    """
    if not isinstance(host, str) or not host:
        raise TypeError(f"--host must be an address such as 127.0.0.1; got {show(host)}")
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None and not _is_loopback(host):
        raise ValueError(
            f"--host {host} exposes the viewer beyond this machine, so it needs a token: pass "
            f"--token (or set {TOKEN_ENV}); everyone with the token can read every stored row "
            "and write labels"
        )
    return token


def serve(
    *, store: str | None = None, host: str = "127.0.0.1", port: int = 8765, token: str | None = None
) -> int:
    """Serve the viewer over the run store at ``store`` until interrupted; returns 0."""
    try:
        import uvicorn
    except ImportError:
        raise ImportError(
            "openevals view needs the viewer extra: pip install 'openevals[viewer]'"
        ) from None
    from openevals.store.runs import RunStore
    from openevals.viewer.app import create_app

    token = check_host(host, token)
    hosts: tuple[str, ...] = ("*",) if not _is_loopback(host) else ()
    with RunStore(store) as opened:
        app: Any = create_app(opened, token=token, hosts=hosts)
        shown = f"[{host}]" if ":" in host else host
        suffix = f"/?token={token}" if token else "/"
        print(
            f"openevals view: http://{shown}:{port}{suffix} (store {opened.location}); Ctrl-C stops"
        )
        uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0
