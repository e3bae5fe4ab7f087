"""When to try a request again, how long to wait, and the clock that waits.

The decision is a pure function (`should_retry`) from a `Failure` (an HTTP
status or a transport fault) and the attempt number to `Retry(delay_s)` or
`GiveUp`. Only rate limits (429), server errors (5xx), timeouts and dropped
connections are worth repeating; any other 4xx, a redirect, or a body that is
not a completion would fail the same way again. Backoff is exponential with
full jitter (a uniform draw in ``[0, min(cap, base * 2**(attempt-1))]``), so
many clients that failed together do not come back together; a server's
``Retry-After`` is a floor on the wait.

A 429 that the rate limiter read as a throttle of an endpoint that is still
serving (``Failure.throttle``) does not use up ``max_attempts``: the limiter
paces and pauses every sender, so the sample is simply tried again when its
turn comes (at once for a parallel cap: a slot frees within milliseconds).
Only an endpoint that answers nothing but 429 for
``params.retry.rate_limit_patience_s`` ends a sample on 429s (``stalled``).

`call_with_retry` is the loop around an attempt function. It keeps the
accounting that results.jsonl reports (attempts, retry overhead, 429s seen)
and waits on a `Clock`, so tests drive it in virtual time
(`aioeval.testing.FakeClock`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from typing import Generic, Literal, Protocol, TypeVar

import anyio
import msgspec

from aioeval.config import RetryConfig

T = TypeVar("T")

MAX_RETRY_AFTER_S = 300.0
"""A server asking for a longer pause than this is treated as a refusal."""

FailureKind = Literal[
    "status", "timeout", "connection", "malformed", "refused", "stalled", "oversized"
]


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """What went wrong with one attempt, stripped to what the decision needs."""

    kind: FailureKind
    status: int | None = None
    """HTTP status when ``kind == "status"``."""
    retry_after_s: float | None = None
    """The server's requested pause (Retry-After), if it gave one."""
    throttle: Literal["rate", "concurrency"] | None = None
    """For a 429: how the rate limiter read it (None: not read, counts as
    an attempt like any failure)."""

    @property
    def cause(self) -> str:
        """Short label used in infra_error causes: ``429``, ``503``, ``timeout``
        (``429`` too when the endpoint stalled on 429s)."""
        if self.kind == "status":
            return str(self.status)
        if self.kind == "stalled":
            return "429"
        return self.kind


class Retry(msgspec.Struct, frozen=True, kw_only=True):
    delay_s: float
    cause: str


class GiveUp(msgspec.Struct, frozen=True, kw_only=True):
    cause: str
    reason: str


Decision = Retry | GiveUp


def is_retryable(failure: Failure) -> bool:
    """429, 5xx, timeouts and connection faults; nothing else."""
    if failure.kind in ("timeout", "connection"):
        return True
    if failure.kind == "status" and failure.status is not None:
        return failure.status == 429 or 500 <= failure.status <= 599
    return False


def backoff_s(attempt: int, base_s: float, cap_s: float, draw: float) -> float:
    """Full-jitter backoff after failed attempt ``attempt`` (1-based);
    ``draw`` is uniform in [0, 1)."""
    ceiling = min(cap_s, base_s * (2.0 ** max(attempt - 1, 0)))
    return draw * ceiling


def should_retry(
    failure: Failure,
    attempt: int,
    policy: RetryConfig | None,
    draw: float,
    *,
    counted: int | None = None,
) -> Decision:
    """Decide after attempt number ``attempt`` (1-based) failed with
    ``failure``; ``counted`` of the attempts use up ``max_attempts`` (all of
    them unless given: throttles of a serving endpoint do not)."""
    cause = failure.cause
    if policy is None:
        return GiveUp(cause=cause, reason="retries are off (params.retry)")
    if failure.kind == "stalled":
        return GiveUp(
            cause=cause,
            reason=f"not sent: the endpoint answered only 429 for "
            f"{policy.rate_limit_patience_s:.0f} s (params.retry.rate_limit_patience_s)",
        )
    if not is_retryable(failure):
        return GiveUp(cause=cause, reason="not retryable")
    if failure.throttle == "concurrency":
        return Retry(delay_s=0.0, cause=cause)  # the limiter waits for a free slot
    used = attempt if counted is None else counted
    if failure.throttle is None and used >= policy.max_attempts:
        return GiveUp(cause=cause, reason=f"gave up after {attempt} attempts")
    delay = backoff_s(attempt, policy.backoff_base_s, policy.backoff_max_s, draw)
    if failure.retry_after_s is not None:
        if failure.retry_after_s > MAX_RETRY_AFTER_S:
            return GiveUp(cause=cause, reason=f"server asked to wait {failure.retry_after_s:.0f} s")
        delay = max(delay, failure.retry_after_s)
    return Retry(delay_s=delay, cause=cause)


class Clock(Protocol):
    """Monotonic time and sleeping, injectable so tests run in virtual time."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    async def wait(self, event: anyio.Event, seconds: float) -> None:
        """Until ``event`` is set or ``seconds`` have passed, whichever is first."""
        ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(seconds, 0.0))

    async def wait(self, event: anyio.Event, seconds: float) -> None:
        with anyio.move_on_after(max(seconds, 0.0)):
            await event.wait()


class Attempted(msgspec.Struct, Generic[T], kw_only=True):
    """The outcome of `call_with_retry` with its accounting."""

    value: T | None = None
    error: Exception | None = None
    """The last attempt's exception when it finally failed."""
    decision: GiveUp | None = None
    attempts: int = 0
    retry_overhead_s: float = 0.0
    """From the first attempt's start to the last attempt's start."""
    rate_limited: int = 0
    """429 answers among the attempts."""


async def call_with_retry(
    attempt_fn: Callable[[int], Awaitable[T]],
    policy: RetryConfig | None,
    failure_of: Callable[[Exception], Failure | None],
    *,
    clock: Clock,
    rng: random.Random | None = None,
    on_retry: Callable[[Retry], None] | None = None,
) -> Attempted[T]:
    """Call ``attempt_fn(attempt)`` until it returns or the policy gives up.

    Exceptions for which ``failure_of`` returns None are not attempt
    failures (bugs, cancellation) and propagate unchanged.
    """
    draw = (rng or random.Random()).random
    first: float | None = None
    attempt = 0
    counted = 0
    limited = 0
    while True:
        attempt += 1
        started = clock.now()
        if first is None:
            first = started
        try:
            value = await attempt_fn(attempt)
        except Exception as exc:
            failure = failure_of(exc)
            if failure is None:
                raise
            limited += failure.kind == "status" and failure.status == 429
            counted += failure.throttle is None
            decision = should_retry(failure, attempt, policy, draw(), counted=counted)
            if isinstance(decision, GiveUp):
                return Attempted(
                    error=exc,
                    decision=decision,
                    attempts=attempt - (failure.kind == "stalled"),  # that one was never sent
                    retry_overhead_s=started - first,
                    rate_limited=limited,
                )
            if on_retry is not None:
                on_retry(decision)
            await clock.sleep(decision.delay_s)
            continue
        return Attempted(
            value=value, attempts=attempt, retry_overhead_s=started - first, rate_limited=limited
        )
