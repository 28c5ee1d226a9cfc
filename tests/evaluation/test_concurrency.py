"""The AIMD controller and the limiter behind ``evaluate()``'s adaptive concurrency (pure parts)."""

from __future__ import annotations

import asyncio
import heapq
import itertools

import pytest

from openevals.evaluation.concurrency import AIMD, MAX_PAUSE, Limiter, is_overload


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class StatusError(Exception):
    def __init__(self, status: int, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = type(
            "R", (), {"headers": {"retry-after": retry_after} if retry_after else {}}
        )()


# --------------------------------------------------------------------------- controller


def test_starts_at_the_cap_and_never_grows_above_it() -> None:
    control = AIMD(8)
    assert control.current == 8
    for _ in range(1000):
        control.succeeded(0.0)
    assert control.current == 8 and control.limit == 8.0


def test_one_back_off_per_congestion_episode() -> None:
    control = AIMD(40)
    epoch = control.epoch
    assert control.overloaded(epoch, 0.0) is True
    assert control.current == 20
    # 30 more calls that started before the back-off fail: the same episode, no further cut.
    assert not any(control.overloaded(epoch, 0.0) for _ in range(30))
    assert control.current == 20 and control.backoffs == 1
    assert control.overloaded(control.epoch, 0.0) is True
    assert control.current == 10 and control.backoffs == 2 and control.lowest == 10


def test_isolated_faults_among_many_successes_are_noise_but_bursts_are_not() -> None:
    """issue 43: 4% one-off 503s halved the limit again and again (43 s instead of 3 s)."""
    control = AIMD(16)
    for i in range(1000):
        if i % 25 == 24:  # 4% faults, spread out, no Retry-After
            control.overloaded(control.epoch, 0.0)
        else:
            control.succeeded(0.0, control.epoch)
    assert control.backoffs == 0 and control.current == 16
    # A burst (congestion) still cuts at once; so does any signal with Retry-After.
    for _ in range(5):
        control.overloaded(control.epoch, 1.0)
    assert control.backoffs >= 1 and control.current < 16
    calm = AIMD(16)
    for _ in range(100):
        calm.succeeded(0.0, calm.epoch)
    assert calm.overloaded(calm.epoch, 0.0, retry_after=0.5) is True


def test_back_off_stops_at_the_floor() -> None:
    control = AIMD(8, floor=2)
    for _ in range(10):
        control.overloaded(control.epoch, 0.0)
    assert control.current == 2


def test_retry_after_pauses_new_calls_capped() -> None:
    control = AIMD(8)
    control.overloaded(control.epoch, 10.0, retry_after=2.5)
    assert control.paused_until == 12.5
    # A stale report still extends the pause (the server asked every caller to wait).
    control.overloaded(0, 11.0, retry_after=3.0)
    assert control.paused_until == 14.0
    control.overloaded(control.epoch, 20.0, retry_after=10_000)
    assert control.paused_until == 20.0 + MAX_PAUSE


def test_additive_growth_one_step_per_window() -> None:
    control = AIMD(16)
    control.overloaded(control.epoch, 0.0)  # 16 -> 8, ceiling 16
    assert control.current == 8
    for _ in range(8):
        control.succeeded(0.0)
    assert control.current == 9  # one window of 8 successes: +1
    for _ in range(9):
        control.succeeded(0.0)
    assert control.current == 10


def test_returns_fast_to_the_proven_level_then_probes_rarely() -> None:
    control = AIMD(16, probe_windows=4)
    control.overloaded(control.epoch, 0.0)  # 16 -> 8
    for _ in range(8):
        control.succeeded(0.0)  # a full window at 8: 8 is proven good; limit 9
    control.overloaded(control.epoch, 1.0, retry_after=0.1)  # 9 fails: ceiling 9, limit 4.5
    assert control.current == 4 and control.ceiling == 9 and control.good == 8
    for _ in range(4):
        control.succeeded(1.05)  # back to 8 by one step per success ...
    assert control.current == 8
    for _ in range(8 * 4 - 1):
        control.succeeded(1.05)  # ... while probing 9 waits for the quiet period
    assert control.current == 8
    for _ in range(8 * 4 + 1):
        control.succeeded(5.0)  # after it, one step per probe_windows windows
    assert control.current == 9


def test_failure_at_a_proven_level_steps_it_down() -> None:
    control = AIMD(8)
    for _ in range(8):
        control.succeeded(0.0)
    assert control.good == 8
    control.overloaded(control.epoch, 0.0)
    # 8 had proved good and fails now: trust one step below it, return there fast.
    assert control.good == 7 and control.current == 4
    for _ in range(3):
        control.succeeded(0.0)
    assert control.current == 7
    control.succeeded(0.0)
    assert control.current == 7  # then additive growth again


def test_successes_of_calls_started_before_a_back_off_do_not_count() -> None:
    control = AIMD(16)
    old = control.epoch
    control.overloaded(old, 0.0)
    for _ in range(50):
        control.succeeded(0.0, old)
    assert control.current == 8 and control.good == 0
    for _ in range(8):
        control.succeeded(0.0, control.epoch)
    assert control.current == 9 and control.good == 8


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"cap": 0}, "cap"),
        ({"cap": True}, "cap"),
        ({"cap": 2.0}, "cap"),
        ({"cap": 4, "floor": 0}, "floor"),
        ({"cap": 4, "floor": 5}, "floor"),
        ({"cap": 4, "decrease": 1.0}, "decrease"),
        ({"cap": 4, "decrease": 0.0}, "decrease"),
        ({"cap": 4, "probe_windows": 0}, "probe_windows"),
    ],
)
def test_bad_settings_name_the_parameter(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=f"`{name}`"):
        AIMD(**kwargs)  # type: ignore[arg-type]


def test_is_overload() -> None:
    """Only a server's congestion signals count (issue 43): 429/503/529 and connections it refused
    or dropped. A timeout does not (a hung request, or the runner's own eval_timeout)."""
    import httpx
    import openai

    assert is_overload(StatusError(429)) and is_overload(StatusError(503))
    assert is_overload(ConnectionResetError()) and is_overload(ConnectionRefusedError())
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert is_overload(openai.APIConnectionError(request=request))
    assert is_overload(httpx.ConnectError("refused"))
    assert not is_overload(openai.APITimeoutError(request=request))  # a connection error subclass
    assert not is_overload(TimeoutError()) and not is_overload(asyncio.TimeoutError())
    assert not is_overload(StatusError(500)) and not is_overload(StatusError(400))
    assert not is_overload(ValueError("bad answer"))


# --------------------------------------------------------------------------- simulation


def simulate(total: int, cap: int, capacity: int, latency: float, retry_after: float) -> float:
    """Calls through AIMD against a server that rejects above ``capacity`` in flight; each
    rejected call waits ``retry_after`` and tries again. Returns ideal time / time taken."""
    control = AIMD(cap)
    now, held, busy, todo = 0.0, 0, 0, total - min(cap, total)
    waiting = list(range(min(cap, total)))
    events: list[tuple[float, int, str, int]] = []
    order = itertools.count()

    def admit() -> None:
        nonlocal held, busy
        while waiting and held < control.current and now >= control.paused_until:
            call, epoch = waiting.pop(0), control.epoch
            if busy >= capacity:
                control.overloaded(epoch, now, retry_after)
                heapq.heappush(events, (now + retry_after, next(order), "retry", call))
            else:
                held, busy = held + 1, busy + 1
                heapq.heappush(events, (now + latency, next(order), "done", call))
        if waiting and now < control.paused_until:
            heapq.heappush(events, (control.paused_until, next(order), "wake", -1))

    admit()
    while events:
        now, _, kind, call = heapq.heappop(events)
        if kind == "done":
            held, busy = held - 1, busy - 1
            control.succeeded(now)
            if todo:
                todo -= 1
                waiting.append(call)
        elif kind == "retry":
            waiting.append(call)
        admit()
    return total * latency / capacity / now


@pytest.mark.parametrize(
    ("total", "cap", "capacity", "latency", "retry_after"),
    [(360, 24, 6, 0.03, 0.03), (2000, 50, 8, 0.05, 0.05), (5000, 100, 10, 0.05, 0.02)],
)
def test_throughput_reaches_90_percent_of_the_server_capacity(
    total: int, cap: int, capacity: int, latency: float, retry_after: float
) -> None:
    assert simulate(total, cap, capacity, latency, retry_after) >= 0.9


# --------------------------------------------------------------------------- limiter


async def test_limiter_holds_calls_to_the_limit_in_order() -> None:
    limiter = Limiter(AIMD(2))
    order: list[int] = []

    async def call(i: int) -> None:
        await limiter.acquire()
        order.append(i)
        await asyncio.sleep(0.01)
        limiter.release()

    tasks = [asyncio.ensure_future(call(i)) for i in range(5)]
    await asyncio.sleep(0)
    assert limiter.held == 2
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4] and limiter.held == 0


async def test_limiter_waits_out_retry_after() -> None:
    clock = Clock()
    limiter = Limiter(AIMD(4), clock=clock)
    limiter.overloaded(limiter.controller.epoch, StatusError(429, retry_after="0.05"))
    assert limiter.controller.current == 2
    acquired = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0.01)
    assert not acquired.done()  # paused: no call starts before Retry-After
    clock.now = 1.0
    await asyncio.wait_for(acquired, 1)
    assert limiter.held == 1


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    limiter = Limiter(AIMD(1))
    await limiter.acquire()
    waiter = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    limiter.release()
    assert limiter.held == 0
    await asyncio.wait_for(limiter.acquire(), 1)
    assert limiter.held == 1
