"""Client-side rate limiting: stay under a hosted API's limits instead of
bouncing off them.

Three mechanisms, each with its arithmetic kept pure:

- Proactive buckets (`Bucket`): requests per minute, and tokens per minute
  reserved before a request from the prompt's length plus ``max_tokens`` x n,
  then reconciled from the response's usage (unused tokens are refunded; an
  overrun becomes debt that delays later requests). The request bucket holds
  about one request, so requests are spaced evenly at 60/rpm seconds rather
  than sent in a burst that a server enforcing a rolling window would refuse.
- Server hints (`read_headers`, `pause_for`): ``Retry-After`` (seconds or an
  HTTP date; ``retry-after-ms`` when present), and the
  ``x-ratelimit-remaining-*`` / ``x-ratelimit-reset-*`` headers: when a
  budget reaches zero, everyone pauses until it resets.
- AIMD concurrency (`Aimd`): +1/limit per success, halved on a 429, at most
  once per round trip, so a limit that was not configured is found by probing.

aiolimiter's leaky bucket does the first job on a plain event loop, but it
cannot refund a reservation and reads the loop's own clock; the buckets here
are small and take their time from a `Clock`, so tests run in virtual time.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping

import anyio
import msgspec

from .retry import Clock

REQUEST_BURST = 1.25
"""Request bucket capacity: one request plus a quarter interval of slack, so
timer overshoot is not lost (the shortest gap is 3/4 of 60/rpm, after idling)."""

CHARS_PER_TOKEN = 4
"""Prompt tokens are estimated as characters / 4 (rounded up) for reservations."""


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


# ---------------------------------------------------------------- headers

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(value: str) -> float | None:
    """Seconds from ``"20ms"``, ``"1s"``, ``"6m0s"``, ``"1h2m3.5s"`` or a bare number."""
    value = value.strip().lower()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 and math.isfinite(seconds) else None
    pos, total = 0, 0.0
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for m in _DURATION.finditer(value):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * scale[m.group(2)]
        pos = m.end()
    return total if pos == len(value) and pos > 0 else None


def parse_retry_after(value: str, now_unix: float) -> float | None:
    """Seconds to wait from a Retry-After value: delay-seconds or an HTTP date."""
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now_unix)


class RateHeaders(msgspec.Struct, frozen=True, kw_only=True):
    """The rate-limit hints of one response."""

    retry_after_s: float | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests_s: float | None = None
    reset_tokens_s: float | None = None


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value.strip()))
    except ValueError:
        return None


def read_headers(headers: Mapping[str, str], now_unix: float) -> RateHeaders:
    """Extract rate hints; unknown or malformed values are ignored.
    ``headers`` must be case-insensitive (aiohttp's are)."""
    retry_after: float | None = None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        ms_value = parse_duration(ms)
        retry_after = ms_value / 1000.0 if ms_value is not None else None
    if retry_after is None and (ra := headers.get("retry-after")) is not None:
        retry_after = parse_retry_after(ra, now_unix)

    def dur(name: str) -> float | None:
        raw = headers.get(name)
        return parse_duration(raw) if raw is not None else None

    return RateHeaders(
        retry_after_s=retry_after,
        remaining_requests=_int(headers.get("x-ratelimit-remaining-requests")),
        remaining_tokens=_int(headers.get("x-ratelimit-remaining-tokens")),
        reset_requests_s=dur("x-ratelimit-reset-requests"),
        reset_tokens_s=dur("x-ratelimit-reset-tokens"),
    )


def pause_for(hints: RateHeaders, throttled: bool) -> float | None:
    """How long every request should hold off after a response, if at all.

    A 429 pauses for Retry-After (else the relevant reset time); a success
    whose remaining budget is zero pauses until that budget resets.
    """
    resets = []
    if hints.remaining_requests == 0 and hints.reset_requests_s is not None:
        resets.append(hints.reset_requests_s)
    if hints.remaining_tokens == 0 and hints.reset_tokens_s is not None:
        resets.append(hints.reset_tokens_s)
    if throttled:
        if hints.retry_after_s is not None:
            return hints.retry_after_s
        known = [s for s in (hints.reset_requests_s, hints.reset_tokens_s) if s is not None]
        return max(resets or known or [0.0]) or None
    return max(resets) if resets else None


# ---------------------------------------------------------------- arithmetic


class Bucket:
    """A token bucket refilled continuously at ``rate`` per second up to
    ``capacity``. Pure: every method takes the time. Its level may go
    negative (debt) when a reservation is reconciled upwards."""

    def __init__(
        self, rate: float, capacity: float, now: float, level: float | None = None
    ) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError("bucket rate and capacity must be > 0")
        self.rate = rate
        self.capacity = capacity
        self.level = capacity if level is None else min(level, capacity)
        self.updated = now

    def _refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
            self.updated = now

    def wait_s(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` can be taken (amounts above capacity need
        a full bucket and leave debt)."""
        self._refill(now)
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float, now: float) -> None:
        self._refill(now)
        self.level -= amount

    def give(self, amount: float, now: float) -> None:
        """Refund (or, negative, charge) after the real cost is known."""
        self._refill(now)
        self.level = min(self.capacity, self.level + amount)


class Aimd:
    """Additive-increase / multiplicative-decrease concurrency limit.

    A burst of 429s caused by one over-eager window halves the limit once:
    throttles of requests that started before the last decrease are ignored.
    """

    def __init__(self, ceiling: int, start: float | None = None, floor: float = 1.0) -> None:
        self.ceiling = float(max(1, ceiling))
        self.floor = floor
        self.limit = min(self.ceiling, start if start is not None else self.ceiling)
        self.decreased_at = -math.inf
        self.decreases = 0

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    def on_success(self) -> None:
        self.limit = min(self.ceiling, self.limit + 1.0 / self.limit)

    def on_throttle(self, started_at: float, now: float) -> bool:
        """Halve the limit; returns False when this 429 was already reacted to."""
        if started_at < self.decreased_at:
            return False
        self.limit = max(self.floor, self.limit / 2.0)
        self.decreased_at = now
        self.decreases += 1
        return True


# ---------------------------------------------------------------- async part


class Permit(msgspec.Struct, kw_only=True):
    """One admitted request: when it started and what it reserved."""

    started_at: float
    tokens: int


class RateLimiter:
    """Admits requests under rpm, tpm, a pause from server hints, and the
    AIMD concurrency limit. Use ``permit = await acquire(tokens)`` then
    exactly one ``release(permit, ...)``."""

    def __init__(
        self,
        clock: Clock,
        *,
        rpm: float | None,
        tpm: float | None,
        max_concurrency: int,
        adaptive: bool = True,
    ) -> None:
        self.clock = clock
        now = clock.now()
        self.requests = Bucket(rpm / 60.0, REQUEST_BURST, now, level=1.0) if rpm else None
        self.tokens = Bucket(tpm / 60.0, max(tpm / 10.0, 1.0), now) if tpm else None
        self.aimd = Aimd(max_concurrency)
        self.adaptive = adaptive
        self.in_flight = 0
        self.paused_until = -math.inf
        self.throttled = 0
        self._changed = anyio.Event()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def acquire(self, tokens: int) -> Permit:
        while True:
            if self.in_flight >= self.aimd.allowed:
                await self._changed.wait()
                continue
            now = self.clock.now()
            wait = self.paused_until - now
            if self.requests is not None:
                wait = max(wait, self.requests.wait_s(1, now))
            if self.tokens is not None:
                wait = max(wait, self.tokens.wait_s(tokens, now))
            if wait > 0:
                await self.clock.sleep(wait)
                continue
            if self.requests is not None:
                self.requests.take(1, now)
            if self.tokens is not None:
                self.tokens.take(tokens, now)
            self.in_flight += 1
            return Permit(started_at=now, tokens=tokens)

    def release(
        self,
        permit: Permit,
        *,
        hints: RateHeaders | None = None,
        throttled: bool = False,
        used_tokens: int | None = None,
    ) -> None:
        now = self.clock.now()
        self.in_flight -= 1
        if self.tokens is not None and used_tokens is not None:
            self.tokens.give(permit.tokens - used_tokens, now)
        if throttled:
            self.throttled += 1
            if self.adaptive:
                self.aimd.on_throttle(permit.started_at, now)
        elif self.adaptive:
            self.aimd.on_success()
        pause = pause_for(hints or RateHeaders(), throttled)
        if pause is not None and pause > 0:
            self.paused_until = max(self.paused_until, now + pause)
        self._notify()
