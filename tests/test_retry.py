"""Retry decisions (by table), full-jitter backoff, and the retry loop in
virtual time (FakeClock): no test here sleeps."""

from __future__ import annotations

import random

import anyio
import pytest

from aioeval.config import RetryConfig
from aioeval.generation.retry import (
    Failure,
    GiveUp,
    RealClock,
    Retry,
    backoff_s,
    call_with_retry,
    is_retryable,
    should_retry,
)
from aioeval.testing import FakeClock

POLICY = RetryConfig(max_attempts=4, backoff_base_s=0.2, backoff_max_s=5.0)


def status(code: int, retry_after: float | None = None) -> Failure:
    return Failure(kind="status", status=code, retry_after_s=retry_after)


@pytest.mark.parametrize(
    ("failure", "retryable"),
    [
        (status(429), True),
        (status(500), True),
        (status(502), True),
        (status(503), True),
        (status(599), True),
        (status(400), False),
        (status(401), False),
        (status(403), False),
        (status(404), False),
        (status(408), False),
        (status(422), False),
        (status(301), False),
        (Failure(kind="timeout"), True),
        (Failure(kind="connection"), True),
        (Failure(kind="malformed"), False),
        (Failure(kind="refused"), False),
    ],
)
def test_classification_table(failure: Failure, retryable: bool) -> None:
    assert is_retryable(failure) is retryable
    decision = should_retry(failure, 1, POLICY, 0.5)
    assert isinstance(decision, Retry if retryable else GiveUp)
    assert decision.cause == failure.cause


def test_causes_are_short_labels() -> None:
    assert status(429).cause == "429"
    assert Failure(kind="timeout").cause == "timeout"


def test_off_by_default_and_bounded() -> None:
    assert isinstance(should_retry(status(503), 1, None, 0.5), GiveUp)
    assert isinstance(should_retry(status(503), 3, POLICY, 0.5), Retry)
    last = should_retry(status(503), 4, POLICY, 0.5)
    assert isinstance(last, GiveUp) and "4 attempts" in last.reason


@pytest.mark.parametrize(
    ("attempt", "draw", "expected"),
    [(1, 0.5, 0.1), (2, 0.5, 0.2), (3, 1.0, 0.8), (6, 1.0, 5.0), (20, 0.5, 2.5), (3, 0.0, 0.0)],
)
def test_full_jitter_backoff(attempt: int, draw: float, expected: float) -> None:
    assert backoff_s(attempt, 0.2, 5.0, draw) == pytest.approx(expected)


def test_backoff_stays_within_the_cap() -> None:
    rng = random.Random(7)
    for attempt in range(1, 30):
        d = backoff_s(attempt, 0.2, 5.0, rng.random())
        assert 0.0 <= d <= min(5.0, 0.2 * 2 ** (attempt - 1))


def test_retry_after_is_a_floor_and_huge_ones_give_up() -> None:
    d = should_retry(status(429, retry_after=3.0), 1, POLICY, 0.1)
    assert isinstance(d, Retry) and d.delay_s == 3.0
    d = should_retry(status(429, retry_after=0.001), 1, POLICY, 1.0)
    assert isinstance(d, Retry) and d.delay_s == pytest.approx(0.2)
    assert isinstance(should_retry(status(429, retry_after=3600), 1, POLICY, 0.1), GiveUp)


class Boom(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


def failure_of(exc: Exception) -> Failure | None:
    return exc.failure if isinstance(exc, Boom) else None


async def _drive(clock: FakeClock, coro_fn):  # type: ignore[no-untyped-def]
    result = None

    async def run() -> None:
        nonlocal result
        result = await coro_fn()
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(clock.autojump)
        tg.start_soon(run)
    return result


@pytest.mark.anyio
async def test_loop_waits_in_virtual_time_and_accounts() -> None:
    clock = FakeClock()
    script = [status(503), status(429, retry_after=2.0), None]
    calls: list[tuple[int, float]] = []

    async def attempt(n: int) -> str:
        calls.append((n, clock.now()))
        f = script[n - 1]
        if f is not None:
            raise Boom(f)
        return "ok"

    rng = random.Random(1)
    expected_first = backoff_s(1, 0.2, 5.0, random.Random(1).random())
    result = await _drive(
        clock, lambda: call_with_retry(attempt, POLICY, failure_of, clock=clock, rng=rng)
    )
    assert result.value == "ok"
    assert result.attempts == 3
    assert result.rate_limited == 1
    assert [n for n, _ in calls] == [1, 2, 3]
    assert calls[1][1] == pytest.approx(expected_first)
    # the second wait honours Retry-After (2 s) over a smaller jittered backoff
    assert calls[2][1] - calls[1][1] == pytest.approx(2.0)
    assert result.retry_overhead_s == pytest.approx(calls[2][1])


@pytest.mark.anyio
async def test_loop_gives_up_without_retrying_4xx() -> None:
    clock = FakeClock()
    n_calls = 0

    async def attempt(n: int) -> str:
        nonlocal n_calls
        n_calls += 1
        raise Boom(status(400))

    result = await _drive(clock, lambda: call_with_retry(attempt, POLICY, failure_of, clock=clock))
    assert n_calls == 1 and result.value is None
    assert isinstance(result.decision, GiveUp) and result.decision.cause == "400"
    assert isinstance(result.error, Boom)
    assert clock.now() == 0.0


@pytest.mark.anyio
async def test_loop_exhausts_attempts() -> None:
    clock = FakeClock()

    async def attempt(n: int) -> str:
        raise Boom(Failure(kind="timeout"))

    result = await _drive(clock, lambda: call_with_retry(attempt, POLICY, failure_of, clock=clock))
    assert result.attempts == 4 and result.value is None
    assert result.decision is not None and result.decision.cause == "timeout"
    # three backoffs, each within its full-jitter ceiling: 0.2 + 0.4 + 0.8
    assert 0.0 <= clock.now() <= 1.4


@pytest.mark.anyio
async def test_unclassified_exceptions_propagate() -> None:
    async def attempt(n: int) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await call_with_retry(attempt, POLICY, failure_of, clock=FakeClock())


@pytest.mark.anyio
async def test_fake_clock_orders_concurrent_sleepers() -> None:
    clock = FakeClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, d: float) -> None:
        await clock.sleep(d)
        woke.append((name, clock.now()))

    async def main() -> None:
        async with anyio.create_task_group() as inner:
            inner.start_soon(sleeper, "b", 2.0)
            inner.start_soon(sleeper, "a", 1.0)
            inner.start_soon(sleeper, "c", 2.0)
        return None

    await _drive(clock, main)
    assert woke == [("a", 1.0), ("b", 2.0), ("c", 2.0)]


def throttle(kind: str, retry_after: float | None = None) -> Failure:
    return Failure(kind="status", status=429, retry_after_s=retry_after, throttle=kind)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("failure", "counted", "decision", "delay"),
    [
        # a parallel cap: at once (the limiter waits for a slot), its hint ignored
        (throttle("concurrency", 60.0), 0, Retry, 0.0),
        (throttle("concurrency", 60.0), 10, Retry, 0.0),
        # a rate limit of a serving endpoint: never out of attempts; the
        # backoff (at most backoff_max_s, here half of it) or the hint, the longer
        (throttle("rate", 2.0), 10, Retry, 2.5),
        (throttle("rate", 4.0), 10, Retry, 4.0),
        (throttle("rate", 3600.0), 1, GiveUp, None),
        # an unread 429 counts like any failure
        (status(429), 4, GiveUp, None),
        (Failure(kind="stalled"), 1, GiveUp, None),
        (status(503), 3, Retry, None),
        (status(503), 4, GiveUp, None),
    ],
)
def test_throttles_do_not_use_up_attempts(
    failure: Failure, counted: int, decision: type, delay: float | None
) -> None:
    d = should_retry(failure, 12, POLICY, 0.5, counted=counted)
    assert isinstance(d, decision)
    if delay is not None:
        assert isinstance(d, Retry) and d.delay_s == delay
    if isinstance(d, GiveUp) and failure.kind == "stalled":
        assert d.cause == "429" and "rate_limit_patience_s" in d.reason


def test_retries_off_means_off_even_for_throttles() -> None:
    assert isinstance(should_retry(throttle("concurrency"), 1, None, 0.5), GiveUp)


@pytest.mark.anyio
async def test_loop_counts_only_unthrottled_failures_against_max_attempts() -> None:
    clock = FakeClock()
    script = [throttle("rate"), status(503)] * 3 + [throttle("concurrency"), None]

    async def attempt(n: int) -> str:
        f = script[n - 1]
        if f is not None:
            raise Boom(f)
        return "ok"

    result = await _drive(clock, lambda: call_with_retry(attempt, POLICY, failure_of, clock=clock))
    assert result.value == "ok" and result.attempts == len(script)
    assert result.rate_limited == 4


@pytest.mark.anyio
async def test_a_stalled_attempt_was_never_sent() -> None:
    clock = FakeClock()

    async def attempt(n: int) -> str:
        raise Boom(throttle("rate") if n == 1 else Failure(kind="stalled"))

    result = await _drive(clock, lambda: call_with_retry(attempt, POLICY, failure_of, clock=clock))
    assert result.attempts == 1 and result.rate_limited == 1
    assert result.decision is not None and result.decision.cause == "429"


@pytest.mark.anyio
async def test_clock_wait_ends_on_the_event_or_the_timeout() -> None:
    clock = FakeClock()
    ended: list[float] = []

    async def main() -> None:
        event = anyio.Event()
        await clock.wait(event, 2.0)  # nobody sets it: the timeout
        ended.append(clock.now())
        async with anyio.create_task_group() as tg:

            async def setter() -> None:
                await clock.sleep(0.5)
                event.set()

            tg.start_soon(setter)
            await clock.wait(event, 10.0)
            ended.append(clock.now())

    await _drive(clock, main)
    assert ended == [2.0, 2.5]
    real = RealClock()
    event = anyio.Event()
    event.set()
    with anyio.fail_after(5):
        await real.wait(event, 60.0)  # already set: at once
