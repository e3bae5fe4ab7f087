"""Rate-limit arithmetic (pure) and the async limiter in virtual time."""

from __future__ import annotations

import email.utils
import itertools

import anyio
import pytest
from multidict import CIMultiDict

from aioeval.ratelimit import (
    Aimd,
    Bucket,
    RateHeaders,
    RateLimiter,
    estimate_tokens,
    parse_duration,
    parse_retry_after,
    pause_for,
    read_headers,
)
from aioeval.retry import FakeClock


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1", 1.0),
        ("0.25", 0.25),
        ("20ms", 0.02),
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("1m30.5s", 90.5),
        ("", None),
        ("soon", None),
        ("-3", None),
        ("5x", None),
        ("1s junk", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    got = parse_duration(text)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_as_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(date, now) == pytest.approx(30.0)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after(past, now) == 0.0
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after("Someday, never", now) is None


def test_read_headers_is_case_insensitive_and_prefers_ms() -> None:
    h = CIMultiDict(
        {
            "Retry-After": "2",
            "retry-after-ms": "150",
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-remaining-tokens": "1234",
            "x-ratelimit-reset-requests": "50ms",
            "x-ratelimit-reset-tokens": "6m0s",
        }
    )
    hints = read_headers(h, 0.0)
    assert hints.retry_after_s == pytest.approx(0.15)
    assert hints.remaining_requests == 0
    assert hints.remaining_tokens == 1234
    assert hints.reset_requests_s == pytest.approx(0.05)
    assert hints.reset_tokens_s == 360.0
    bad = read_headers(
        CIMultiDict({"retry-after": "later", "x-ratelimit-remaining-requests": "x"}), 0
    )
    assert bad == RateHeaders()


@pytest.mark.parametrize(
    ("hints", "throttled", "pause"),
    [
        (RateHeaders(), False, None),
        (RateHeaders(), True, None),
        (RateHeaders(retry_after_s=2.0), True, 2.0),
        (RateHeaders(remaining_requests=3, reset_requests_s=1.0), False, None),
        (RateHeaders(remaining_requests=0, reset_requests_s=1.0), False, 1.0),
        (RateHeaders(remaining_tokens=0, reset_tokens_s=4.0, reset_requests_s=1.0), False, 4.0),
        (RateHeaders(reset_requests_s=0.5), True, 0.5),
        (RateHeaders(retry_after_s=1.0, remaining_requests=0, reset_requests_s=9), True, 1.0),
    ],
)
def test_pause_for(hints: RateHeaders, throttled: bool, pause: float | None) -> None:
    assert pause_for(hints, throttled) == pause


def test_bucket_refills_continuously_and_allows_debt() -> None:
    b = Bucket(rate=2.0, capacity=4.0, now=0.0)
    assert b.wait_s(4, 0.0) == 0.0
    b.take(4, 0.0)
    assert b.wait_s(1, 0.0) == pytest.approx(0.5)
    assert b.wait_s(1, 0.5) == 0.0
    # an amount above capacity needs a full bucket, then leaves debt
    assert b.wait_s(10, 0.5) == pytest.approx(1.5)
    b.take(10, 2.0)
    assert b.level == pytest.approx(-6.0)
    b.give(5, 2.0)  # reconciled: only 5 of the 10 were used
    assert b.level == pytest.approx(-1.0)
    b.give(100, 2.0)
    assert b.level == 4.0  # refunds never exceed capacity


def test_aimd_halves_once_per_window_and_recovers() -> None:
    a = Aimd(ceiling=16)
    assert a.allowed == 16
    assert a.on_throttle(started_at=1.0, now=2.0)
    assert a.allowed == 8
    # another request from the same window: already reacted to
    assert not a.on_throttle(started_at=1.5, now=2.1)
    assert a.allowed == 8
    assert a.on_throttle(started_at=2.5, now=3.0)
    assert a.allowed == 4
    for _ in range(4):
        a.on_success()
    assert a.allowed == 4  # +1/limit per success: about +1 per window of "limit"
    a.on_success()
    assert a.allowed == 5
    for _ in range(10_000):
        a.on_success()
    assert a.allowed == 16
    low = Aimd(ceiling=1)
    low.on_throttle(0, 1)
    assert low.allowed == 1


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 1
    assert estimate_tokens("x" * 9) == 3


async def _in_virtual_time(clock: FakeClock, fn) -> None:  # type: ignore[no-untyped-def]
    async with anyio.create_task_group() as tg:
        tg.start_soon(clock.autojump)
        await fn()
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_rpm_spaces_requests_evenly() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, rpm=120, tpm=None, max_concurrency=100)
    times: list[float] = []

    async def run() -> None:
        for _ in range(10):
            p = await limiter.acquire(1)
            times.append(clock.now())
            limiter.release(p)

    await _in_virtual_time(clock, run)
    assert times[0] == 0.0
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps == pytest.approx([0.5] * 9)


@pytest.mark.anyio
async def test_tpm_reserves_then_reconciles_from_usage() -> None:
    clock = FakeClock()
    # 600 tokens per minute = 10/s; capacity 60
    limiter = RateLimiter(clock, rpm=None, tpm=600, max_concurrency=100)
    times: list[float] = []

    async def run() -> None:
        p = await limiter.acquire(60)
        times.append(clock.now())
        limiter.release(p, used_tokens=10)  # 50 refunded
        p = await limiter.acquire(60)  # needs 10 more: 1 s
        times.append(clock.now())
        limiter.release(p, used_tokens=90)  # 30 of debt
        p = await limiter.acquire(10)  # from -30 to 10: 4 s
        times.append(clock.now())
        limiter.release(p)

    await _in_virtual_time(clock, run)
    assert times == pytest.approx([0.0, 1.0, 5.0])


@pytest.mark.anyio
async def test_a_429_pauses_everyone_and_halves_concurrency() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, rpm=None, tpm=None, max_concurrency=4)
    admitted: list[float] = []

    async def run() -> None:
        permits = [await limiter.acquire(1) for _ in range(4)]
        assert limiter.in_flight == 4
        limiter.release(permits[0], throttled=True, hints=RateHeaders(retry_after_s=3.0))
        assert limiter.aimd.allowed == 2 and limiter.throttled == 1
        # three still in flight, limit two: the next waits for a release and the pause
        async with anyio.create_task_group() as tg:

            async def late() -> None:
                p = await limiter.acquire(1)
                admitted.append(clock.now())
                limiter.release(p)

            tg.start_soon(late)
            await clock.sleep(1.0)
            limiter.release(permits[1])
            limiter.release(permits[2])
        limiter.release(permits[3])

    await _in_virtual_time(clock, run)
    assert admitted == [pytest.approx(3.0)]


@pytest.mark.anyio
async def test_remaining_zero_pauses_until_reset() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, rpm=None, tpm=None, max_concurrency=4)
    times: list[float] = []

    async def run() -> None:
        p = await limiter.acquire(1)
        limiter.release(p, hints=RateHeaders(remaining_requests=0, reset_requests_s=0.25))
        p = await limiter.acquire(1)
        times.append(clock.now())
        limiter.release(p)

    await _in_virtual_time(clock, run)
    assert times == [pytest.approx(0.25)]
