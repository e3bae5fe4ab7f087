"""Pacing requests: even spacing at the lowest rate known, and the rule that
finds a rate nobody states (pure: every method takes the time).

`Pace` spaces requests at the lowest of the configured ``rpm`` (exact), the
limit the headers state (``limit-requests`` / 60, at HINT_MARGIN) and the
rate `Learner` keeps from 429s. With none of them requests are not paced,
and only the parallel limit (`_parallel.ParallelCap`) holds them back.

`Learner` is additive increase, multiplicative decrease with a memory: a
rate 429 remembers the level refused (the pace, or what was accepted if far
less) and drops the pace to BACKOFF of it; the pace climbs back by CLIMB of
that level per second up to TARGET of it, and only after QUIET_S without a
429 climbs past it at the same slope. Before any paced request was refused
there is no level to remember, and the pace grows by GROWTH per second.
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
"""After a 429, the pace drops to this share of the refused level: the
server's budget, drained by the overshoot, refills at a fifth of its rate,
while a single refusal costs a few percent of a run. Accepted at under this
share of the pace, the sends were held back by something else (the parallel
limit), and what was accepted is the level."""
CLIMB = 0.02
"""The pace climbs back by this share of the refused level per second:
from BACKOFF to TARGET in under ten seconds, and slowly enough that a climb
past a limit drains only a request or two of a bucket before it is refused."""
TARGET = 0.97
"""The climb stops at this share of the remembered level: the level itself
drained the server's budget."""
QUIET_S = 60.0
"""After this long without a rate 429 the remembered level is tried again
(limits are per minute: one 429 a minute is the price of finding a raise)."""
GROWTH = 0.2
"""With no refused pace known (the first 429 came while unpaced), the pace
grows by this share per second: the rate measured then is only a first guess."""
ACCEPTED_OF = 10
"""The accepted rate is counted over the last this many sends ..."""
WINDOW_S = 10.0
"""... within this long, after the last pause ..."""
MIN_SPAN_S = 0.2
"""... and over at least this long."""


class Learner:
    """The rate (requests per second) kept from rate 429s (the module
    docstring), None until a 429 that could be measured."""

    def __init__(self) -> None:
        self.start: float | None = None
        """The pace right after the last lowering."""
        self.level: float | None = None
        """The remembered refused level (None: no paced request refused yet)."""
        self.since = -math.inf
        """When the pace was last lowered."""
        self.climb_from: float | None = None
        """When one sent after the lowering first succeeded (not in a pause)."""
        self.last_429 = -math.inf
        self.served = True  # one sent after the last lowering has succeeded

    def rate(self, now: float) -> float | None:
        if self.start is None:
            return None
        dt = 0.0 if self.climb_from is None else max(0.0, now - self.climb_from)
        if self.level is None:
            return self.start * math.exp(math.log1p(GROWTH) * dt)
        climbed = self.start + CLIMB * self.level * dt
        ceiling = (TARGET + CLIMB * max(0.0, now - self.last_429 - QUIET_S)) * self.level
        return max(self.start, min(climbed, ceiling))

    def on_success(self, sent_at: float, now: float) -> None:
        if sent_at >= self.since and not self.served:
            self.served = True
            self.climb_from = now

    def on_refused(
        self, sent_at: float, now: float, paced: float | None, accepted: float | None
    ) -> bool:
        """A rate 429 for a request sent at ``sent_at`` under the pace
        ``paced`` (None: unpaced) while the endpoint accepted ``accepted``
        requests per second (None: too few to tell). Returns whether the pace
        was lowered: once per episode, so not for requests sent before the
        last lowering, nor again before one sent after it has succeeded."""
        self.last_429 = now
        if sent_at < self.since or not self.served:
            return False
        if paced is not None:
            self.level = accepted if accepted is not None and accepted < BACKOFF * paced else paced
            self.start = BACKOFF * self.level
        elif accepted is not None:
            self.start = BACKOFF * accepted
        else:
            return False
        self.since, self.climb_from, self.served = now, None, False
        return True


class Pace:
    """Even spacing of requests at the lowest known rate (see the module docstring)."""

    def __init__(self, now: float, rpm: float | None) -> None:
        self.fixed = rpm / 60.0 if rpm else None
        self.hinted: float | None = None
        """The limit the headers state (req/s), before HINT_MARGIN."""
        self.learner = Learner()
        self.due = now
        """When the next send is due at the pace."""
        self.sent: deque[float] = deque(maxlen=1024)
        self.refused: deque[float] = deque(maxlen=1024)
        """Send times of requests answered with a rate 429."""
        self.resumed = -math.inf
        """When the last pause ended: the accepted rate is counted from then."""

    def rate(self, now: float) -> float | None:
        hinted = self.hinted
        if hinted is not None and self.fixed is not None and hinted >= self.fixed:
            hinted = None  # the configured rate is exact and no looser
        elif hinted is not None:
            hinted *= HINT_MARGIN
        known = [r for r in (self.fixed, hinted, self.learner.rate(now)) if r is not None]
        return min(known) if known else None

    def interval_s(self, now: float) -> float | None:
        rate = self.rate(now)
        return None if rate is None else 1.0 / rate

    def wait_s(self, now: float) -> float:
        return 0.0 if self.rate(now) is None else self.due - now

    def take(self, now: float) -> None:
        if (interval := self.interval_s(now)) is not None:
            self.due = max(self.due, now - SLACK * interval) + interval
        self.sent.append(now)

    def accepted(self, at: float) -> float | None:
        """Requests per second the endpoint accepted just before ``at``: of
        the last ACCEPTED_OF sends in the window, those not refused, over the
        time since the first of them (None: too few to tell). What was sent,
        not the pace: a pace that concurrency kept from binding says nothing."""
        begin = max(at - WINDOW_S, self.resumed)
        sent = [t for t in self.sent if begin <= t < at][-ACCEPTED_OF:]
        if len(sent) < 2 or at - sent[0] < MIN_SPAN_S:
            return None
        count = len(sent) - sum(sent[0] <= t < at for t in self.refused)
        return count / (at - sent[0]) if count > 0 else None

    def on_refused(self, sent_at: float, now: float) -> bool:
        """A rate 429; returns whether the pace was lowered."""
        accepted = self.accepted(sent_at)
        self.refused.append(sent_at)
        lowered = self.learner.on_refused(sent_at, now, self.rate(sent_at), accepted)
        if (interval := self.interval_s(now)) is not None:
            self.due = max(self.due, now + interval)  # the next send, a full interval on
        return lowered
