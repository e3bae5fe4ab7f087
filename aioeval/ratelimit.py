"""Client-side rate limiting: learn an endpoint's limits and stay just under them.

Rate limits are on request and token *rates*, parallel caps on requests in
flight, and the two are learned separately. The arithmetic is pure (every
method takes the time); `RateLimiter` ties it to a `Clock`.

- `Pace` spaces requests evenly at the lowest of three rates: the configured
  ``rpm``; a ceiling read from the headers (``limit-requests`` / 60); and
  the rate `RateLearner` estimates from 429s. Without any of them requests
  are not paced, and only the parallel limit holds them back.
- `RateLearner`: after a 429 it paces below the rate that was refused, then
  closes in on 98% of that level (the level where 429s began is remembered,
  and raised by 2% only after a minute without a 429, so probing above it is
  rare). Between two 429s the server's budget was empty at both ends, so
  the requests it accepted in between, over the time between, bound its
  rate from below; that bound keeps the new pace from dropping too far.
- `ParallelCap`: starts at one request in flight and adds one per success
  (slow start) until the first 429. A 429 that arrives at a parallelism never
  seen to succeed, with no budget reported exhausted, points at a parallel
  cap: the limit drops to the highest level that worked, the request is
  retried as soon as a slot frees, and the server's Retry-After is not
  waited out (a gateway capping parallel requests may say 60 s while a slot
  frees within milliseconds). Probing one above the cap needs a run of
  successes at the cap, doubled after each refused probe.
- `TokenBudget`: tokens per minute, counted as the server counts them
  (``tpm_counts``). ``max_tokens`` (OpenAI): each request is charged the
  larger of its prompt estimate and ``max_tokens`` x n when sent, and
  nothing is refunded. ``usage`` (gateways that meter usage): a request
  holds a reservation while in flight (prompt estimate plus the completion
  length seen so far), and is charged its reported usage when it returns;
  waiting requests are woken as soon as a reservation is released. A
  ``limit-tokens`` header, with no tpm configured, becomes such a budget
  (counted on usage, each request paced by its own estimated size), kept
  no fuller than the ``remaining-tokens`` the server reports.
- On a rate 429 every sender pauses together until the server's hint (plus a
  small margin) or, without a hint, one interval at the lowered pace,
  doubled while the endpoint keeps refusing (at most ``max_quiet_s``). Then
  a single request probes; the rest follow at the pace once it succeeds, so
  no herd is released at once.
- An endpoint that has answered nothing but 429 for ``patience_s`` is
  stalled: `acquire` raises `Stalled` instead of queueing more requests.

aiolimiter's leaky bucket cannot refund a reservation and reads the loop's
own clock; the buckets here are small and take their time from a `Clock`,
so tests run in virtual time.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

import anyio
import msgspec

from .ratehints import RateHeaders, exhausted_reset_s, pause_for
from .retry import Clock

REQUEST_BURST = 1.25
"""Pacer capacity: one request plus a quarter interval of slack, so timer
overshoot is not lost (the shortest gap is 3/4 of the interval, after idling)."""

CHARS_PER_TOKEN = 4
"""Prompt tokens are estimated as characters / 4 (rounded up) for reservations."""

HINT_MARGIN = 0.99
"""Pace at this fraction of a limit read from the headers."""

TARGET = 0.98
"""A learned pace closes in on this fraction of the level where 429s began."""
BACKOFF = 0.7
"""After a 429, the pace drops to this fraction of the refused rate (unless
the accepted-rate bound says the server allows more)."""
APPROACH_S = 4.0
"""Time constant of the climb back towards TARGET x the remembered level."""
PROBE_EVERY_S = 60.0
PROBE_STEP = 0.02
"""Without a 429 for PROBE_EVERY_S, the remembered level rises by PROBE_STEP."""
SPLIT = (0.5, 0.75)
SETTLE_S = 10.0
"""With both known, the goal starts SPLIT[0] of the way from the floor to
TARGET x top and drifts to SPLIT[1] with this time constant while no 429
comes: a loose floor does not hold the pace down, and a tight bracket is
not overshot."""
GROWTH = 0.2
"""Growth per second of a pace with no refused rate known yet."""
LONG_EPISODE = 4.0
"""429s that lasted this many requests' worth of the rate served mean a
budget restored all at once, not refilled evenly."""
MIN_SPAN_S = 0.5
"""The accepted-rate bound needs 429s at least this far apart."""
SEND_WINDOW_S = 2.0
"""Unpaced, the send rate is measured over this window."""
PAUSE_MARGIN = (0.02, 0.02)
"""A server's pause is extended by 20 ms plus 2%, so a probe does not land early."""
TOKEN_BURST_S = 1.0
"""A token budget holds one second of tpm: servers allow at least that burst
(OpenAI a minute's worth), so the client never bursts past them."""
PARALLEL_PROBE_AFTER = (4, 64)
"""Successes at the parallel cap before one more in flight is tried: few
while the cap rests on one refusal (it may have been a rate limit), many
once a second refusal confirmed it (doubled after each refused try)."""
ADMITTED_AFTER_S = 0.02
"""A request in flight longer than this (and than twice the slowest 429
seen) has been admitted by the server."""
"""Successes at the parallel cap before one more in flight is tried (doubled
after each refused try)."""

EPSILON_S = 1e-6
"""Shorter waits are rounding error (a virtual clock would never pass them)."""

Throttle = Literal["rate", "concurrency"]
Outcome = Literal["ok", "throttled", "failed"]
TpmCounts = Literal["max_tokens", "usage"]


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


class Bucket:
    """A token bucket refilled continuously at ``rate`` per second up to
    ``capacity``. Pure: every method takes the time. Its level may go
    negative (debt) when more is taken than it holds."""

    def __init__(
        self, rate: float, capacity: float, now: float, level: float | None = None
    ) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError("bucket rate and capacity must be > 0")
        self.rate = rate
        self.capacity = capacity
        self.level = capacity if level is None else min(level, capacity)
        self.updated = now

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
            self.updated = now

    def wait_s(self, amount: float, now: float, held: float = 0.0) -> float:
        """Seconds until ``amount`` can be taken with ``held`` set aside
        (amounts above capacity need a full bucket and leave debt)."""
        self.refill(now)
        need = min(amount, self.capacity) + held
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float, now: float) -> None:
        self.refill(now)
        self.level -= amount

    def give(self, amount: float, now: float) -> None:
        """Return (or, negative, charge) an amount, never above capacity."""
        self.refill(now)
        self.level = min(self.capacity, self.level + amount)


# ---------------------------------------------------------------- requests


class RateLearner:
    """The request rate an endpoint allows, learned from its 429s (req/s).

    Two numbers bracket it: ``top``, the lowest paced rate that was refused
    (remembered, so probing above it is rare), and ``floor``, a lower bound:
    a 429 means the server's budget was empty when that request arrived, so
    between two 429s it accepted at most its rate times the time between,
    plus one. The pace climbs from where a 429 left it towards a goal inside
    the bracket; with no ``top`` yet (the first 429 came while unpaced, at a
    rate that is only a measurement) it grows by GROWTH per second. The
    span of the bound starts at the previous episode's first 429, so a
    budget restored all at once (a fixed window) counts over its window.
    """

    def __init__(self) -> None:
        self.top: float | None = None
        self.floor: float | None = None
        self.start: float | None = None
        self.since = -math.inf
        """When the pace was last lowered."""
        self.grow_from: float | None = None
        """When the first request after the lowering succeeded: the pace
        only climbs once the endpoint serves again."""
        self.empty_at: float | None = None
        """Send time of the 429 that began the last episode: the budget was empty."""
        self.accepted = 0
        """Successes sent after ``empty_at``."""
        self.ok_since = True
        """A request sent after the last lowering has succeeded."""
        self.lowered = 0
        self.served = 0
        self.first_ok: float | None = None

    def goal(self, dt: float) -> float | None:
        if self.top is None:
            return None
        top = self.top * (1.0 + PROBE_STEP * math.floor(dt / PROBE_EVERY_S))
        goal = TARGET * top
        if self.floor is not None and self.floor < goal:
            split = SPLIT[1] - (SPLIT[1] - SPLIT[0]) * math.exp(-dt / SETTLE_S)
            goal = self.floor + split * (goal - self.floor)
        return goal

    def rate(self, now: float) -> float | None:
        if self.start is None:
            return None
        dt = 0.0 if self.grow_from is None else max(0.0, now - self.grow_from)
        goal = self.goal(dt)
        if goal is None:
            return self.start * math.exp(GROWTH * dt)
        if self.start >= goal:
            return self.start
        return goal - (goal - self.start) * math.exp(-dt / APPROACH_S)

    def on_success(self, sent_at: float, now: float) -> None:
        if self.empty_at is not None and sent_at > self.empty_at:
            self.accepted += 1
        self.served += 1
        if self.first_ok is None:
            self.first_ok = sent_at
        if sent_at >= self.since and not self.ok_since:
            self.ok_since = True
            self.grow_from = now
            self._after_episode(sent_at - self.since)

    def _after_episode(self, refused_for: float) -> None:
        """A budget that came back only after many requests' worth of time
        was restored all at once (a fixed window): the pace that was refused
        says nothing then, the rate served over the whole run does."""
        assert self.first_ok is not None and self.start is not None
        span = self.since + refused_for - self.first_ok
        if span <= 0:
            return
        served = self.served / span
        if refused_for * served >= LONG_EPISODE:
            self.start = TARGET * served
            self.top, self.floor = served, None

    def on_throttle(self, sent_at: float, now: float, paced: float | None, sent: float) -> bool:
        """A request sent at ``sent_at`` got a rate 429; ``paced`` is the pace
        then in force (None: unpaced, and ``sent`` the measured send rate).
        Returns whether the pace was lowered: not for requests sent before
        the last lowering (already reacted to), nor for a probe refused
        again before anything succeeded (the same episode: only the pause grows)."""
        if sent_at < self.since or not self.ok_since:
            return False
        # The span starts at the previous episode's first 429, so a budget
        # restored all at once (a fixed window) is spread over its window.
        if self.empty_at is not None and sent_at - self.empty_at >= MIN_SPAN_S:
            if self.accepted >= 2:
                bound = (self.accepted - 1) / (sent_at - self.empty_at)
                self.floor = bound if self.floor is None else max(self.floor, bound)
        self.empty_at, self.accepted = sent_at, 0
        refused = paced if paced is not None else sent
        if paced is not None:
            self.top = paced if self.top is None else min(self.top, paced)
            if self.floor is not None and self.floor > self.top:
                self.floor = None  # the server slowed down: forget the old bound
        start = BACKOFF * refused if self.floor is None else self.floor
        self.start = min(start, TARGET * refused)
        self.since = now
        self.grow_from = None
        self.ok_since = False
        self.lowered += 1
        return True


class Pace:
    """Even spacing of requests at the lowest known rate (see module docstring)."""

    def __init__(self, now: float, rpm: float | None) -> None:
        self.fixed = rpm / 60.0 if rpm else None
        self.hinted: float | None = None
        """The limit the headers state (req/s), before HINT_MARGIN."""
        self.learner = RateLearner()
        self.bucket: Bucket | None = None
        self.sent: deque[float] = deque(maxlen=512)
        self.first_sent: float | None = None

    def rate(self, now: float) -> float | None:
        hinted = self.hinted
        if hinted is not None and self.fixed is not None and hinted >= self.fixed:
            hinted = None  # the configured rate is exact and no looser
        elif hinted is not None:
            hinted *= HINT_MARGIN
        known = [r for r in (self.fixed, hinted, self.learner.rate(now)) if r is not None]
        return min(known) if known else None

    def _bucket(self, now: float) -> Bucket | None:
        rate = self.rate(now)
        if rate is None:
            return None
        if self.bucket is None:
            self.bucket = Bucket(rate, REQUEST_BURST, now, level=1.0)
        else:
            self.bucket.refill(now)
            self.bucket.rate = rate
        return self.bucket

    def wait_s(self, now: float) -> float:
        bucket = self._bucket(now)
        return 0.0 if bucket is None else bucket.wait_s(1, now)

    def take(self, now: float) -> None:
        bucket = self._bucket(now)
        if bucket is not None:
            bucket.take(1, now)
        self.sent.append(now)
        if self.first_sent is None:
            self.first_sent = now

    def send_rate(self, at: float) -> float:
        """Requests sent per second over the window before ``at``."""
        if self.first_sent is None:
            return 0.0
        span = min(SEND_WINDOW_S, at - self.first_sent)
        count = sum(1 for t in self.sent if at - span <= t <= at)
        return count / span if span > 0 else float(count)

    def on_throttle(self, sent_at: float, now: float) -> bool:
        paced = self.rate(sent_at)
        sent = max(self.send_rate(sent_at), 1e-3)
        lowered = self.learner.on_throttle(sent_at, now, paced, sent)
        bucket = self._bucket(now)
        if bucket is not None:
            bucket.level = min(bucket.level, 0.0)  # the next send waits a full interval
        return lowered


# ---------------------------------------------------------------- parallel


class ParallelCap:
    """Requests allowed in flight, learned apart from the rate (see module docstring)."""

    def __init__(self, ceiling: int, *, slow_start: bool) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = 1 if slow_start else self.ceiling
        self.slow_start = slow_start
        self.peak_ok = 0
        """The most requests in flight (counting itself) when one succeeded."""
        self.cap: int | None = None
        """A parallel cap concluded from a 429."""
        self.probe_after = PARALLEL_PROBE_AFTER[0]
        self.streak = 0
        self.refusals = 0
        """Parallel 429s since the cap was concluded."""
        self._undo: int | None = None

    @property
    def allowed(self) -> int:
        return self.limit

    def on_success(self, parallel: int) -> None:
        self.peak_ok = max(self.peak_ok, parallel)
        if self.slow_start:
            self.limit = min(self.ceiling, self.limit + 1)
            return
        if parallel >= self.limit:
            self.streak += 1
            if self.limit < self.ceiling and self.streak >= self.probe_after:
                self.limit += 1
                self.streak = 0

    def is_parallel_429(self, parallel: int, admitted: int, hints: RateHeaders) -> bool:
        """Whether a 429 for a request sent at ``parallel`` reads as a
        parallel cap: no budget reported exhausted, and more in flight than
        ever worked (``admitted``: the most in flight when a request still
        running, long past the time a 429 takes, was sent)."""
        if exhausted_reset_s(hints) is not None or 0 in (
            hints.remaining_requests,
            hints.remaining_tokens,
        ):
            return False
        return parallel >= 2 and parallel > max(self.peak_ok, admitted)

    def on_parallel_429(self, parallel: int) -> None:
        self.slow_start = False
        if self.cap is None:
            self._undo = self.limit
        elif self.refusals == 1:
            self.probe_after = PARALLEL_PROBE_AFTER[1]  # confirmed
        else:
            self.probe_after *= 2  # a refused probe above a known cap
        self.refusals += 1
        self.limit = max(1, parallel - 1)
        self.cap = self.limit
        self.streak = 0

    def on_rate_429(self) -> None:
        """A rate 429 after a cap concluded from one refusal alone: that
        refusal was most likely the rate limit too (a short burst refused
        looks just like a cap), so the cap is dropped; a real cap is found
        again by one quick refusal."""
        self.slow_start = False
        if self.refusals == 1 and self._undo is not None:
            self.limit = max(self.limit, self._undo)
            self.cap, self._undo, self.refusals = None, None, 0


# ---------------------------------------------------------------- tokens


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """What one request may cost in tokens."""

    prompt: int
    """Prompt tokens, estimated from its length."""
    max_tokens: int
    """Completion cap per sample."""
    n: int = 1


class TokenBudget:
    """Tokens per minute, counted the way the server counts them."""

    def __init__(self, tpm: float, counts: TpmCounts, now: float, *, hinted: bool = False) -> None:
        self.counts = counts
        self.hinted = hinted
        """Read from the headers, not configured."""
        self.bucket = Bucket(tpm / 60.0, max(tpm / 60.0 * TOKEN_BURST_S, 1.0), now)
        self.held = 0.0
        """Reservations of requests in flight (usage counting)."""
        self.per_sample: float | None = None
        """Mean completion tokens per sample seen so far."""
        self.latency_s = 0.0
        """Mean time a request is in flight."""

    def set_tpm(self, tpm: float, now: float) -> None:
        self.bucket.refill(now)
        self.bucket.rate = tpm / 60.0
        self.bucket.capacity = max(tpm / 60.0 * TOKEN_BURST_S, 1.0)

    def sync(self, remaining: int, now: float, age_s: float) -> None:
        """The server said only ``remaining`` were left, at most ``age_s``
        ago (servers may count when a request arrives): never assume more
        than that plus the refill since."""
        self.bucket.refill(now)
        self.bucket.level = min(self.bucket.level, remaining + self.bucket.rate * age_s)

    def cost(self, ask: Ask) -> int:
        if self.counts == "max_tokens":
            return max(ask.prompt, ask.max_tokens * ask.n)
        expected = ask.max_tokens if self.per_sample is None else self.per_sample
        return ask.prompt + math.ceil(min(float(ask.max_tokens), expected) * ask.n)

    def wait_s(self, cost: int, now: float) -> float:
        """Usage counting: what requests in flight hold is charged only when
        they return, and the bucket refills meanwhile, so a typical
        latency's refill is credited against it (else long generations
        could never have the rate's worth of tokens in flight)."""
        held = max(0.0, self.held - self.bucket.rate * self.latency_s)
        return self.bucket.wait_s(cost, now, held=held)

    def take(self, cost: int, now: float) -> None:
        if self.counts == "max_tokens":
            self.bucket.take(cost, now)
        else:
            self.held += cost

    def settle(
        self,
        cost: int,
        now: float,
        *,
        used: int | None,
        completion: int | None,
        n: int,
        took_s: float = 0.0,
    ) -> None:
        """The request returned after ``took_s``: ``used`` tokens by its
        usage (None: unknown)."""
        if self.counts == "max_tokens":
            return  # charged when sent, never refunded
        self.latency_s = took_s if not self.latency_s else 0.8 * self.latency_s + 0.2 * took_s
        self.held -= cost
        self.bucket.take(cost if used is None else used, now)
        if completion is not None and n > 0:
            seen = completion / n
            self.per_sample = (
                seen if self.per_sample is None else 0.8 * self.per_sample + 0.2 * seen
            )

    def refused(self, cost: int, now: float) -> None:
        """The server refused the request (429): it was not charged."""
        if self.counts == "max_tokens":
            self.bucket.give(cost, now)
        else:
            self.held -= cost

    def failed(self, cost: int, now: float) -> None:
        """The request failed otherwise: assume it was charged in full."""
        if self.counts == "usage":
            self.held -= cost
            self.bucket.take(cost, now)


# ---------------------------------------------------------------- async part


class Stalled(Exception):
    """The endpoint has answered nothing but 429 for ``patience_s``."""


class Permit(msgspec.Struct, kw_only=True):
    """One admitted request."""

    id: int
    started_at: float
    parallel: int
    """Requests in flight when it was sent, itself included."""
    tokens: int = 0
    """Tokens reserved or charged for it."""
    n: int = 1
    probe: bool = False


class RateLimiter:
    """Admits requests under the pace, the token budget, a shared pause and
    the parallel limit. Use ``permit = await acquire(ask)`` then exactly one
    ``release(permit, outcome, ...)``, which says how a 429 was read."""

    def __init__(
        self,
        clock: Clock,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        tpm_counts: TpmCounts = "max_tokens",
        max_concurrency: int = 16,
        patience_s: float = 120.0,
        max_quiet_s: float = 5.0,
    ) -> None:
        self.clock = clock
        now = clock.now()
        self.pace = Pace(now, rpm)
        self.tokens = TokenBudget(tpm, tpm_counts, now) if tpm else None
        # Slow start only when nothing says how fast to go.
        self.parallel = ParallelCap(max_concurrency, slow_start=not rpm)
        self.patience_s = patience_s
        self.max_quiet_s = max_quiet_s
        self.in_flight = 0
        self.paused_until = -math.inf
        self.quiet_s = 0.0
        self.probing = False
        self.probe_out = False
        self.throttled = 0
        self.parallel_429s = 0
        self.refused_since: float | None = None
        """First rate 429 since the last success."""
        self.refusal_rtt_s = 0.0
        """The slowest 429 answer seen."""
        self.out: dict[int, Permit] = {}
        self._ids = 0
        self._changed = anyio.Event()

    @property
    def rate_rpm(self) -> float | None:
        """The pace now, in requests per minute (None: not paced)."""
        rate = self.pace.rate(self.clock.now())
        return None if rate is None else rate * 60.0

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def stalled(self, now: float) -> bool:
        return self.refused_since is not None and now - self.refused_since >= self.patience_s

    async def acquire(self, ask: Ask | int) -> Permit:
        if isinstance(ask, int):
            ask = Ask(prompt=ask, max_tokens=0)
        while True:
            now = self.clock.now()
            if self.stalled(now):
                raise Stalled(f"the endpoint has answered only 429 for {self.patience_s:.0f} s")
            if self.in_flight >= self.parallel.allowed or (self.probing and self.probe_out):
                await self._changed.wait()
                continue
            cost = self.tokens.cost(ask) if self.tokens is not None else 0
            wait = max(self.paused_until - now, self.pace.wait_s(now))
            if self.tokens is not None:
                wait = max(wait, self.tokens.wait_s(cost, now))
            if wait > EPSILON_S:
                await self.clock.wait(self._changed, wait)
                continue
            self.pace.take(now)
            if self.tokens is not None:
                self.tokens.take(cost, now)
            self.in_flight += 1
            probe = self.probing
            self.probe_out = self.probe_out or probe
            self._ids += 1
            permit = Permit(
                id=self._ids,
                started_at=now,
                parallel=self.in_flight,
                tokens=cost,
                n=ask.n,
                probe=probe,
            )
            self.out[permit.id] = permit
            return permit

    def release(
        self,
        permit: Permit,
        outcome: Outcome = "failed",
        *,
        hints: RateHeaders | None = None,
        used_tokens: int | None = None,
        completion_tokens: int | None = None,
    ) -> Throttle | None:
        """Account for a finished request; for a 429, say how it was read."""
        now = self.clock.now()
        hints = hints or RateHeaders()
        self.in_flight -= 1
        self.out.pop(permit.id, None)
        if permit.probe:
            self.probe_out = False
        self._read_limits(hints, now, now - permit.started_at)
        verdict: Throttle | None = None
        if outcome == "ok":
            self._on_success(permit, now, used_tokens, completion_tokens)
        elif outcome == "throttled":
            verdict = self._on_429(permit, now, hints)
        else:
            if self.tokens is not None:
                self.tokens.failed(permit.tokens, now)
            if permit.probe:
                self.probing = False  # not refused: let the others go
        pause = pause_for(hints, throttled=False)
        if pause:
            self.paused_until = max(self.paused_until, now + pause)
        self._notify()
        return verdict

    def _on_success(
        self, permit: Permit, now: float, used: int | None, completion: int | None
    ) -> None:
        self.pace.learner.on_success(permit.started_at, now)
        self.parallel.on_success(permit.parallel)
        if self.tokens is not None:
            self.tokens.settle(
                permit.tokens,
                now,
                used=used,
                completion=completion,
                n=permit.n,
                took_s=now - permit.started_at,
            )
        self.probing = False
        self.quiet_s = 0.0
        self.refused_since = None

    def _on_429(self, permit: Permit, now: float, hints: RateHeaders) -> Throttle:
        self.throttled += 1
        self.refusal_rtt_s = max(self.refusal_rtt_s, now - permit.started_at)
        if self.tokens is not None:
            self.tokens.refused(permit.tokens, now)
        if self.parallel.is_parallel_429(permit.parallel, self._admitted(now), hints):
            self.parallel.on_parallel_429(permit.parallel)
            self.parallel_429s += 1
            return "concurrency"
        self.parallel.on_rate_429()
        lowered = self.pace.on_throttle(permit.started_at, now)
        if self.refused_since is None:
            self.refused_since = now
        hinted = pause_for(hints, throttled=True)
        if hinted is not None:
            pause = hinted * (1.0 + PAUSE_MARGIN[1]) + PAUSE_MARGIN[0]
        else:
            interval = 1.0 / (self.pace.rate(now) or 1.0)
            if lowered or not self.quiet_s:
                self.quiet_s = interval
            elif permit.probe:  # refused again: wait longer before the next probe
                self.quiet_s = min(2.0 * self.quiet_s, max(self.max_quiet_s, interval))
            pause = self.quiet_s
        self.paused_until = max(self.paused_until, now + min(pause, self.patience_s))
        self.probing = True
        return "rate"

    def _admitted(self, now: float) -> int:
        """The most in flight when a request still running was sent, among
        those running longer than a 429 takes to come back (so admitted)."""
        after = max(ADMITTED_AFTER_S, 2.0 * self.refusal_rtt_s)
        return max((p.parallel for p in self.out.values() if now - p.started_at > after), default=0)

    def _read_limits(self, hints: RateHeaders, now: float, age_s: float) -> None:
        """Limits the headers state: a request limit caps the pace; a token
        limit, when none was configured, becomes a token budget of its own
        (counted on usage, an upper bound whichever way the server counts:
        one that counts max_tokens refuses a few requests, and the pace
        learned from those takes over), kept no fuller than the server says."""
        if (limit := hints.limit_requests) is not None and limit > 0:
            self.pace.hinted = limit / 60.0
        if (limit := hints.limit_tokens) is not None and limit > 0:
            if self.tokens is None:
                self.tokens = TokenBudget(HINT_MARGIN * limit, "usage", now, hinted=True)
            elif self.tokens.hinted:
                self.tokens.set_tpm(HINT_MARGIN * limit, now)
        if (left := hints.remaining_tokens) is not None and self.tokens and self.tokens.hinted:
            self.tokens.sync(left, now, age_s)
