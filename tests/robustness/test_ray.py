"""Ray options that used to hang or to accept secrets (issue 29, item 6).

* ``RayEngine(address=)`` where no cluster listens: bounded by its ``connect_timeout`` (default
  30 s), then ``RayConnectError`` (a ``ConnectionError``) naming the address; no Ray is started;
* ``RayEngine(env=)`` given a dict: refused, saying only names are taken, without echoing the
  values.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from openevals import aevaluate, evaluate
from openevals.evaluation import RayEngine
from openevals.evaluation.engines import ray_connect
from openevals.evaluation.engines.ray_connect import (
    DEFAULT_CONNECT_TIMEOUT,
    RayConnectError,
    host_and_port,
    probe_ray_address,
)

ROWS = [{"outputs": "a", "reference_outputs": "a"}]
SECRET = "sk-live-1234567890abcdef"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1:1", ("127.0.0.1", 1)),
        ("ray://head:10001", ("head", 10001)),
        ("[::1]:6379", ("::1", 6379)),
        ("head.example.com:6379", ("head.example.com", 6379)),
        ("auto", None),
        ("local", None),
        ("http://head:8265", None),
        ("head", None),
        ("head:port", None),
    ],
)
def test_addresses_with_a_host_and_port_are_probed(address: str, expected: Any) -> None:
    assert host_and_port(address) == expected


def test_a_refused_address_is_a_clear_error_at_once() -> None:
    port = closed_port()
    start = time.monotonic()
    with pytest.raises(
        RayConnectError, match=rf"^RayEngine address='127.0.0.1:{port}': no Ray cluster"
    ):
        probe_ray_address(f"127.0.0.1:{port}", 5.0)
    assert time.monotonic() - start < 3


def test_an_address_that_never_answers_is_bounded_by_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[float] = []

    def black_hole(target: Any, timeout: float) -> Any:
        seen.append(timeout)
        time.sleep(timeout)
        raise TimeoutError("timed out")

    monkeypatch.setattr(ray_connect.socket, "create_connection", black_hole)
    start = time.monotonic()
    with pytest.raises(
        RayConnectError, match=r"no answer within 0.3 s.*RayEngine\(connect_timeout=\)"
    ):
        probe_ray_address("10.0.0.1:6379", 0.3, from_env=True)
    assert seen == [0.3]
    assert time.monotonic() - start < 2


def test_the_message_says_when_the_address_came_from_ray_address() -> None:
    with pytest.raises(RayConnectError, match=r"^RayEngine address \(from RAY_ADDRESS\)="):
        probe_ray_address(f"127.0.0.1:{closed_port()}", 1.0, from_env=True)


def test_a_listening_address_passes_the_probe() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        probe_ray_address(f"127.0.0.1:{server.getsockname()[1]}", 1.0)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "30"])
def test_a_bad_connect_timeout_is_refused(bad: Any) -> None:
    with pytest.raises(
        ValueError, match=r"^RayEngine\(connect_timeout=\) must be a number of seconds > 0"
    ):
        RayEngine(connect_timeout=bad)


def test_the_default_is_thirty_seconds() -> None:
    assert DEFAULT_CONNECT_TIMEOUT == 30.0


@pytest.mark.parametrize("env", [{"OPENAI_API_KEY": SECRET}, {}])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_ray_env_as_a_dict_is_refused_without_echoing_values(env: Any, is_async: bool) -> None:
    import asyncio

    with pytest.raises(TypeError, match=r"^RayEngine\(env=\) takes only the names") as caught:
        if is_async:
            asyncio.run(aevaluate(ROWS, ["exact_match"], engine=RayEngine(env=env), progress=False))
        else:
            evaluate(ROWS, ["exact_match"], engine=RayEngine(env=env), progress=False)
    assert SECRET not in str(caught.value)
    assert "never their values" in str(caught.value)
    assert "['OPENAI_API_KEY']" in str(caught.value)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_evaluate_on_ray_with_an_unreachable_address_fails_fast_and_starts_no_ray(
    is_async: bool,
) -> None:
    ray = pytest.importorskip("ray")
    import asyncio

    address = f"127.0.0.1:{closed_port()}"
    start = time.monotonic()
    engine = RayEngine(address=address)
    with pytest.raises(RayConnectError, match=rf"^RayEngine address='{address}'"):
        if is_async:
            asyncio.run(aevaluate(ROWS, ["exact_match"], engine=engine, progress=False))
        else:
            evaluate(ROWS, ["exact_match"], engine=engine, progress=False)
    assert time.monotonic() - start < 30
    assert not ray.is_initialized()


def test_ray_address_from_the_environment_is_probed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed_port()}")
    with pytest.raises(RayConnectError, match=r"^RayEngine address \(from RAY_ADDRESS\)="):
        evaluate(ROWS, ["exact_match"], engine=RayEngine(connect_timeout=2), progress=False)
