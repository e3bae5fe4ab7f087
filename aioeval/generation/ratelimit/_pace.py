"""Pacing requests: even spacing at the lowest rate known, and the rule that
finds a rate nobody states (pure: every method takes the time).

`Pace` spaces requests at the lowest of the configured ``rpm`` (exact), the
limit the headers state (``limit-requests`` / 60, at HINT_MARGIN) and the
rate `Learner` keeps from 429s. With none of them requests are not paced,
and only the parallel limit (`_parallel.ParallelCap`) holds them back.

`Learner` reads a rate 429 as "the budget was empty just now", not "the
limit is below what got through" (docs/rate-control.md): the pace never
drops below the best rate delivered lately, and a cubic climb passes the
refused pace within seconds and probes past it.
"""

from __future__ import annotations

import math
from collections import deque

SLACK = 0.25
"""Sends are due an interval apart, but may use this share of one left
unused, so a timer that fires late loses no time (after idling, the
shortest gap is 3/4 of an interval)."""
HINT_MARGIN = 0.99
"""Pace at this share of a limit the headers state: arrivals bunch on the way."""
BACKOFF = 0.8
"""After a 429 with nothing delivered to go by, the pace drops to this share
of the pace refused: the budget, drained by the overshoot, refills at a
fifth of its rate, while one refusal costs a few percent of a run. Sends
accepted at under this share of the pace were held back by something else
(the parallel limit), and what was accepted is the level."""
CLIMB_SENDS = 20.0
"""The climb is back at the level after this many sends' time at the level,
or this many of the last refusal's pauses if longer: on a key of one's own
a refusal per climb is one request in twenty and a twentieth of the time
paused, while at a few requests a second the level is back in seconds."""
FLOOR_S = 30.0
"""The floor is the best rate delivered in any episode this recent: a burst
of someone else's or a pause makes one episode short, not the limit lower;
half a minute, for limits are stated per minute."""
GROWTH = 0.2
"""With no refused pace known (the first 429 came while unpaced), the pace
grows by this share per second: the rate measured then is only a first guess."""
ACCEPTED_OF = 10
"""The accepted rate is counted over the last this many sends ..."""
WINDOW_S = 10.0
"""... within this long, after the last pause ..."""
MIN_SPAN_S = 0.2
"""... and over at least this long (the delivered rate too)."""


class Learner:
    """The rate (requests per second) kept from rate 429s (the module
    docstring), None until a 429 that could be measured."""

    def __init__(self) -> None:
        self.start: float | None = None  # the pace right after the last lowering
        self.level: float | None = None  # the refused level (None: none paced yet)
        self.since = -math.inf  # when the pace was last lowered
        self.climb_from: float | None = None  # when one sent since first succeeded
        self.last_429 = -math.inf
        self.served = True  # one sent after the last lowering has succeeded
        self.pause_s = 0.0  # the pause the last lowering cost everyone
        self.delivered: deque[tuple[float, float]] = deque()  # (when, rate) per episode

    def rate(self, now: float) -> float | None:
        if self.start is None:
            return None
        dt = 0.0 if self.climb_from is None else max(0.0, now - self.climb_from)
        if self.level is None:
            return self.start * math.exp(math.log1p(GROWTH) * dt)
        k = CLIMB_SENDS * max(1.0 / self.level, self.pause_s)
        return max(self.start, self.level * (1.0 - (1.0 - BACKOFF) * ((k - dt) / k) ** 3))

    def floor(self, now: float, delivered: float | None) -> float:
        """The best rate delivered in any episode of the last FLOOR_S."""
        if delivered is not None:
            self.delivered.append((now, delivered))
        while self.delivered and self.delivered[0][0] < now - FLOOR_S:
            self.delivered.popleft()
        return max((rate for _, rate in self.delivered), default=0.0)

    def on_success(self, sent_at: float, now: float) -> None:
        if sent_at >= self.since and not self.served:
            self.served = True
            self.climb_from = now

    def on_refused(
        self, sent_at: float, now: float, paced: float | None, seen: tuple[float | None, ...]
    ) -> bool:
        """A rate 429 for a request sent at ``sent_at`` under the pace
        ``paced`` (None: unpaced), ``seen`` the rates accepted just before and
        delivered since the last lowering (None: too few to tell). Whether the
        pace was lowered: once per episode, so not for one sent before the
        last lowering, nor again before one sent since has succeeded."""
        accepted, delivered = seen
        self.last_429 = now
        if sent_at < self.since or not self.served:
            return False
        if paced is not None:
            level = accepted if accepted is not None and accepted < BACKOFF * paced else paced
            floor = self.floor(now, delivered)
            self.level = floor if BACKOFF * level <= floor < level else level
            self.start = max(BACKOFF * self.level, min(floor, self.level))
        elif accepted is not None or delivered:
            self.start = BACKOFF * (accepted or delivered or 0.0)
        else:
            return False
        self.since, self.climb_from, self.served = now, None, False
        return True


class Pace:
    """Even spacing of requests at the lowest known rate (see the module docstring)."""

    def __init__(self, now: float, rpm: float | None) -> None:
        self.fixed = rpm / 60.0 if rpm else None
        self.hinted: float | None = None  # the limit the headers state (req/s)
        self.learner = Learner()
        self.due = now  # when the next send is due at the pace
        self.sent: deque[float] = deque(maxlen=1024)
        self.refused: deque[float] = deque(maxlen=1024)  # send times of rate 429s
        self.resumed = -math.inf  # the last pause's end

    def rate(self, now: float) -> float | None:
        hinted = self.hinted
        if hinted is not None and self.fixed is not None and hinted >= self.fixed:
            hinted = None  # the configured rate is exact and no looser
        elif hinted is not None:
            hinted *= HINT_MARGIN
        known = [r for r in (self.fixed, hinted, self.learner.rate(now)) if r is not None]
        return min(known) if known else None

    def interval_s(self, now: float) -> float | None:
        return None if (rate := self.rate(now)) is None else 1.0 / rate

    def wait_s(self, now: float) -> float:
        return 0.0 if self.rate(now) is None else self.due - now

    def take(self, now: float) -> None:
        if (interval := self.interval_s(now)) is not None:
            self.due = max(self.due, now - SLACK * interval) + interval
        self.sent.append(now)

    def _through(self, sent: list[float], begin: float, at: float) -> float | None:
        """Of ``sent`` (send times in [begin, at)), those not refused, per
        second since ``begin`` (None: a span too short to tell)."""
        if at - begin < MIN_SPAN_S:
            return None
        return (len(sent) - sum(begin <= t < at for t in self.refused)) / (at - begin)

    def accepted(self, at: float) -> float | None:
        """Requests per second accepted just before ``at``, over the last
        ACCEPTED_OF sends in the window (None: too few to tell): what was
        sent, not the pace, which concurrency may have kept from binding."""
        begin = max(at - WINDOW_S, self.resumed)
        sent = [t for t in self.sent if begin <= t < at][-ACCEPTED_OF:]
        return (self._through(sent, sent[0], at) or None) if len(sent) >= 2 else None

    def delivered(self, at: float) -> float | None:
        """Requests per second the endpoint let through from the last lowering
        (or the first send) to ``at``. The budget was empty at that refusal,
        so this is what the limit refilled less what other clients took."""
        begin = max(self.learner.since, self.sent[0] if self.sent else at)
        return self._through([t for t in self.sent if begin <= t < at], begin, at)

    def on_refused(self, sent_at: float, now: float) -> bool:
        """A rate 429; returns whether the pace was lowered."""
        seen = (self.accepted(sent_at), self.delivered(sent_at))
        self.refused.append(sent_at)
        lowered = self.learner.on_refused(sent_at, now, self.rate(sent_at), seen)
        if (interval := self.interval_s(now)) is not None:
            self.due = max(self.due, now + interval)  # the next send, a full interval on
        return lowered
