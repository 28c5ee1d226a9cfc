"""Bounding the connection to a Ray cluster (``evaluate(..., engine=RayEngine(address=...))``).

``ray.init(address=...)`` keeps retrying an address where no cluster listens, for minutes and
without a message. Before it is called, :func:`probe_ray_address` opens a plain TCP connection
to the address's host and port, for at most ``connect_timeout`` seconds (default
:data:`DEFAULT_CONNECT_TIMEOUT`), and raises :class:`RayConnectError` naming the address when
nothing answers. ``"auto"``, ``"local"`` and other addresses without a port are left to Ray.
Plain Python: Ray is not imported here.
"""

from __future__ import annotations

import math
import socket
from typing import Any, Final

from openevals._repr import show

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "RayConnectError",
    "check_connect_timeout",
    "host_and_port",
    "probe_ray_address",
]

DEFAULT_CONNECT_TIMEOUT: Final = 30.0
"""Seconds a Ray run waits for its cluster's address to answer."""


class RayConnectError(ConnectionError):
    """No Ray cluster answered at ``RayEngine(address=)`` within its ``connect_timeout`` seconds."""


def check_connect_timeout(value: Any) -> float:
    """``RayEngine(connect_timeout=)``: seconds > 0; raises ``ValueError`` naming it otherwise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"RayEngine(connect_timeout=) must be a number of seconds > 0; got {show(value)} (default "
            f"{DEFAULT_CONNECT_TIMEOUT:g})"
        )
    return float(value)


def host_and_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``"host:port"`` or ``"ray://host:port"``; None for ``"auto"``,
    ``"local"``, other schemes or an address without a port."""
    text = address.strip()
    if text.startswith("ray://"):
        text = text[len("ray://") :]
    elif "://" in text:
        return None
    text = text.split("/", 1)[0]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def probe_ray_address(address: str | None, timeout: float, *, from_env: bool = False) -> None:
    """Raise :class:`RayConnectError` if nothing accepts a TCP connection at ``address`` within
    ``timeout`` seconds (addresses without a host and port are not probed)."""
    if address is None:
        return
    target = host_and_port(address)
    if target is None:
        return
    name = "RayEngine address (from RAY_ADDRESS)" if from_env else "RayEngine address"
    try:
        with socket.create_connection(target, timeout=timeout):
            return
    except TimeoutError:
        reason = f"no answer within {timeout:g} s"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    raise RayConnectError(
        f"{name}={show(address)}: no Ray cluster could be reached ({reason}). Check the address "
        "(a head node's GCS port, 6379 by default, or 'ray://host:10001' for Ray Client) and "
        "that the cluster is up; a slow network may need a larger RayEngine(connect_timeout=)"
    )
