"""Pacing requests: even spacing at the lowest rate known, and the rate
learned from 429s when none is known (pure: every method takes the time).

`Pace` spaces requests at the lowest of three rates: the configured
``rpm`` (exact); a limit read from the headers (``limit-requests`` / 60, at
HINT_MARGIN, and only when tighter than a configured rpm); and the rate
`RateLearner` estimates from 429s. With none of them requests are not
paced, and only the parallel limit (`parallel.ParallelCap`) holds them back.
"""

from __future__ import annotations

import math
from collections import deque

REQUEST_BURST = 1.25
"""Pacer capacity: one request plus a quarter interval of slack, so timer
overshoot is not lost (the shortest gap is 3/4 of the interval, after idling)."""
HINT_MARGIN = 0.99
"""Pace at this fraction of a limit read from the headers."""
TARGET = 0.98
"""A learned pace closes in on this fraction of the level where 429s began."""
BACKOFF = 0.7
"""After a 429, the pace drops to this fraction of the refused rate (or to
the accepted-rate bound, when one is known)."""
APPROACH_S = 4.0
"""Time constant of the climb back towards the goal."""
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
        self.refused_again = False
        """A request sent after the last lowering was refused too: the
        endpoint kept refusing, not just the client waiting out a hint."""
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
            if self.refused_again:
                self._after_episode(sent_at - self.since)

    def _after_episode(self, refused_for: float) -> None:
        """A budget that came back only after many requests' worth of time
        was restored all at once (a fixed window): the pace that was refused
        says nothing then, the rate served over the whole run does. Only
        read so when a probe was refused again: a single 429 whose hint
        (a 60 s Retry-After, or 1 s rounded up from 0.1 s) the client waited
        out says nothing about the window, and the served rate would count
        the client's own pause (issue 14: a parallel cap's 60 s hint then
        paced the rest of the run at a few requests per minute)."""
        assert self.first_ok is not None and self.start is not None
        span = self.since + refused_for - self.first_ok
        if span <= 0:
            return
        served = self.served / span
        if refused_for * served >= LONG_EPISODE:
            self.start = TARGET * served
            self.top, self.floor = served, None

    def on_throttle(
        self,
        sent_at: float,
        now: float,
        paced: float | None,
        sent: float,
        *,
        stated: bool = False,
    ) -> bool:
        """A request sent at ``sent_at`` got a rate 429; ``paced`` is the pace
        then in force (None: unpaced, and ``sent`` the measured send rate);
        ``stated``: that pace was the limit the server's headers state, so
        the refusal was a burst (arrivals bunched on the way): the pace
        steps down to TARGET of it and grows back to the stated limit
        (never to BACKOFF, a loose floor, or a learned top below it).
        Returns whether the pace was lowered: not for requests sent before
        the last lowering (already reacted to), nor for a probe refused
        again before anything succeeded (the same episode: only the pause grows)."""
        if sent_at < self.since:
            return False
        if not self.ok_since:
            self.refused_again = True
            return False
        # The span starts at the previous episode's first 429, so a budget
        # restored all at once (a fixed window) is spread over its window.
        if self.empty_at is not None and sent_at - self.empty_at >= MIN_SPAN_S:
            if self.accepted >= 2:
                bound = (self.accepted - 1) / (sent_at - self.empty_at)
                self.floor = bound if self.floor is None else max(self.floor, bound)
        self.empty_at, self.accepted = sent_at, 0
        refused = paced if paced is not None else sent
        if stated:  # the stated limit bounds the climb back: no top to learn
            self.start = TARGET * refused
            self.since, self.grow_from, self.ok_since = now, None, False
            self.refused_again = False
            self.lowered += 1
            return True
        if paced is not None:
            self.top = paced if self.top is None else min(self.top, paced)
            if self.floor is not None and self.floor > self.top:
                self.floor = None  # the server slowed down: forget the old bound
        start = BACKOFF * refused if self.floor is None else self.floor
        self.start = min(start, TARGET * refused)
        self.since = now
        self.grow_from = None
        self.ok_since = False
        self.refused_again = False
        self.lowered += 1
        return True


class Pace:
    """Even spacing of requests at the lowest known rate (see the module docstring)."""

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

    def send_rate(self, at: float) -> float | None:
        """Requests sent per second over the window before ``at`` (None:
        too little sent yet to call it a rate)."""
        if self.first_sent is None or at - self.first_sent < MIN_SPAN_S:
            return None
        span = min(SEND_WINDOW_S, at - self.first_sent)
        count = sum(1 for t in self.sent if at - span <= t <= at)
        return count / span if count >= 2 else None

    def on_throttle(self, sent_at: float, now: float) -> bool:
        """A rate 429; returns whether the pace was lowered (not when
        unpaced with no send rate to speak of: only the pause applies)."""
        paced = self.rate(sent_at)
        sent = self.send_rate(sent_at)
        if paced is None and sent is None:
            return False
        # Within TARGET of the stated limit: a burst, not a wrong limit
        # (issue 14: a gateway's 429 after jittered arrivals cut the pace to
        # a loose floor, 0.4 of the limit its headers stated).
        stated = (
            paced is not None
            and self.hinted is not None
            and paced >= TARGET * HINT_MARGIN * self.hinted - 1e-9
        )
        lowered = self.learner.on_throttle(sent_at, now, paced, sent or 0.0, stated=stated)
        bucket = self._bucket(now)
        if bucket is not None:
            bucket.level = min(bucket.level, 0.0)  # the next send waits a full interval
        return lowered
