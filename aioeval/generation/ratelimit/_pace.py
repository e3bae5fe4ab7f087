"""Pacing requests: even spacing at the lowest rate known, and the rate
learned from 429s when none is known (pure: every method takes the time).

`Pace` spaces requests at the lowest of three rates: the configured
``rpm`` (exact); a limit read from the headers (``limit-requests`` / 60, at
HINT_MARGIN, and only when tighter than a configured rpm); and the rate
`RateLearner` estimates from 429s. With none of them requests are not
paced, and only the parallel limit (`parallel.ParallelCap`) holds them back.
"""

from __future__ import annotations

import bisect
import math
from collections import deque

from ._bucket import Bucket

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
UNPACED_BACKOFF = 0.9
"""After a 429 while unpaced, the pace starts at this fraction of the rate
the endpoint took (requests sent less those refused, less one for the
budget it may have held at the start)."""
APPROACH_S = 2.0
"""Time constant of the climb back towards the goal."""
PROBE_EVERY_S = 60.0
PROBE_STEP = 0.02
"""Without a 429 for PROBE_EVERY_S, the remembered level rises by PROBE_STEP."""
QUIET_SHARE = 0.5
"""With no floor known, a bare 429's pause lasts one request at this share of the pace."""
CLOSE = 0.9
"""With the proven floor this close under the refused level, the pace
stays at the floor: a probe above could gain at most a few percent, and
would cost a 429."""
LIKELY_SHARE = (0.3, 0.75)
LIKELY_NARROW = 1.1
"""With a likely range known (`RateLearner.likely`), the goal lies
LIKELY_SHARE[0] into it when its ends are within LIKELY_NARROW of each
other (close under the rate, with no probe), else LIKELY_SHARE[1] (a
probe that proves its middle or narrows the range with a 429). Learned
tokens with no paced refusal yet aim at TARGET of a wide range's top and
UNTESTED_TARGET of a narrow one's: the slow start's refusals bound that
top from above, while a 1 s bucket's admissions raise the low end only
slowly, so 0.3 into a narrow range held runs near 0.94 of the limit
(virtual-time model, seed 18)."""
UNTESTED_TARGET = 0.985
"""With it, the model's two slowest of 64 seeds went from 0.938 to 0.950
of the limit (with `_tokens.TokenBudget.positive`), no 4th 429; at 0.99, a
bench top 1.1% over the limit was aimed over it (a 4th 429)."""
SPLIT = (0.5, 0.75)
SETTLE_S = 10.0
"""With both known, the goal starts SPLIT[0] of the way from the floor to
TARGET x top and drifts to SPLIT[1] with this time constant while no 429
comes: a loose floor does not hold the pace down, and a tight bracket is
not overshot."""
GROWTH, GROWTH_PAST_GUESS = 0.5, 0.05
"""Growth per second of a pace with no refused rate known yet (past an
estimated rate, the slower one)."""
LONG_EPISODE = 4.0
LONG_EPISODE_S = 5.0
"""429s that lasted this many requests' worth of the rate served, and at
least LONG_EPISODE_S, mean a budget restored all at once (a fixed window),
not refilled evenly (a usage-metered token limit in debt clears in seconds)."""
MIN_SPAN_S, SPAN_SLACK_S = 1.0, 0.02
"""The accepted-rate bound spans at least MIN_SPAN_S, lengthened by
SPAN_SLACK_S for arrivals that reach the server later than they were sent."""
EMPTY_KEPT = 4
RECENT_KEPT = 256
"""The accepted-rate bound counts from each of the last EMPTY_KEPT 429s,
over the last RECENT_KEPT successes."""
UNPACED_SPREAD = 2.0
"""Unpaced, sends are spaced by the mean latency over this many times the
requests allowed in flight (as TCP paces slow start), up to a 429's round
trip: freed slots sent in one millisecond met an empty budget, two refused
before the first 429 was back (bench seeds 3, 15); slow answers never slow the ramp."""
SEND_WINDOW_S = 2.0
SEND_MIN_S = 0.2
"""Unpaced, the rate the endpoint took is measured over this window, once
this much time has passed since the first send."""


class RateLearner:
    """The rate an endpoint allows, learned from its 429s (requests per
    second, or tokens per second for `LearnedTokens`).

    Two numbers bracket it: ``top``, the lowest paced rate that was refused
    (remembered, so probing above it is rare), and ``floor``, a lower bound:
    a 429 means the server's budget was empty when that request arrived,
    and each later success means it held a request's worth when that one
    arrived, so the rate beats what was taken in between over the time
    between (kept for the last few 429s, raised on every success). The pace
    climbs from where a 429 left it (never under the floor) towards a goal
    inside the bracket, and stays at the floor once it is within CLOSE of
    the top; with no ``top`` yet (the first 429 came while unpaced, at a
    rate that is only a measurement) it grows by GROWTH per second.
    """

    def __init__(
        self, *, close: float = CLOSE, approach_s: float = APPROACH_S, from_likely: bool = False
    ) -> None:
        self.top: float | None = None
        self.floor: float | None = None
        self.start: float | None = None
        self.since = -math.inf
        """When the pace was last lowered."""
        self.grow_from: float | None = None
        """When the first request after the lowering succeeded: the pace
        only climbs once the endpoint serves again."""
        self.empty: deque[list[float]] = deque(maxlen=EMPTY_KEPT)
        """[send time, weight accepted since] of the last rate 429s: the
        budget was empty then."""
        self.recent: list[tuple[float, float]] = []
        """(send time, weight) of the last RECENT_KEPT successes, by send time."""
        self.ok_since = True
        """A request sent after the last lowering has succeeded."""
        self.refused_again = False
        """A request sent after the last lowering was refused too: the
        endpoint kept refusing, not just the client waiting out a hint."""
        self.guess: float | None = None
        """An estimate of the rate (not a measurement): unpaced growth
        slows to GROWTH_PAST_GUESS beyond it."""
        self.close = close
        """Within this share of the top, the floor is the goal (see CLOSE)."""
        self.likely: tuple[float, float] | None = None
        """The rates the bucket fit finds likely (`_fit.Region.whole` for
        requests, `_fit.Region.windowed` for tokens): where the goal goes
        while it is known (set by `bound`)."""
        self.approach_s = approach_s
        """Time constant of the climb (`_tokens.APPROACH_TOKENS_S` for tokens)."""
        self.from_likely = from_likely
        """Climb from the likely range's low end, never from under it (learned
        tokens: a pace well under the limit leaves the bucket full, proving little)."""
        self.lowered = 0
        self.served = 0
        self.served_weight = 0.0
        self.first_ok: float | None = None

    def narrow(self) -> bool:
        """The likely range's ends are within LIKELY_NARROW of each other."""
        return self.likely is not None and self.likely[1] <= LIKELY_NARROW * self.likely[0]

    def untested_narrow(self) -> bool:
        """No pace refused yet, and the likely range narrow (see UNTESTED_TARGET)."""
        return self.top is None and self.narrow()

    def goal(self, dt: float) -> float | None:
        if self.likely is not None:
            lo, hi = self.likely
            narrow = self.narrow()
            goal = lo + LIKELY_SHARE[0 if narrow else 1] * (hi - lo)
            if self.from_likely and self.top is None:
                share = UNTESTED_TARGET if narrow else TARGET  # an untested top
                goal = max(goal, share * hi)
            if self.top is not None:
                goal = min(goal, TARGET * self.top)
            return max(self.floor or 0.0, goal)
        if self.top is None:
            return None
        top = self.top * (1.0 + PROBE_STEP * math.floor(dt / PROBE_EVERY_S))
        goal = TARGET * top
        if self.floor is None:
            return goal
        if self.floor >= self.close * top:
            return self.floor  # no probe could gain much: stay at what is proven
        # Here floor < CLOSE x top < TARGET x top: the goal lies above the floor.
        split = SPLIT[1] - (SPLIT[1] - SPLIT[0]) * math.exp(-dt / SETTLE_S)
        return self.floor + split * (goal - self.floor)

    def rate(self, now: float) -> float | None:
        if self.start is None:
            return None
        dt = 0.0 if self.grow_from is None else max(0.0, now - self.grow_from)
        goal = self.goal(dt)
        if goal is None:
            return max(self._grown(dt), self.floor or 0.0)
        if self.start >= goal:
            return self.start
        return goal - (goal - self.start) * math.exp(-dt / self.approach_s)

    def _grown(self, dt: float) -> float:
        """The pace ``dt`` after the climb began, with no refused pace known."""
        assert self.start is not None
        grown = self.start * math.exp(GROWTH * dt)
        guess = self.guess
        if guess is None or grown <= guess:
            return grown
        past = dt - math.log(guess / self.start) / GROWTH if guess > self.start else dt
        return max(self.start, guess) * math.exp(GROWTH_PAST_GUESS * past)

    def on_success(
        self, sent_at: float, now: float, weight: float = 1.0, taken_at: float | None = None
    ) -> None:
        """A success; ``weight`` is what it took from the budget (one request,
        or its tokens when the learner paces tokens), ``taken_at`` when (on
        arrival, or when it finished for a server that meters usage)."""
        self.served += 1
        self.served_weight += weight
        if self.first_ok is None:
            self.first_ok = sent_at
        if sent_at >= self.since and not self.ok_since:
            self.ok_since = True
            self.grow_from = now
            if self.refused_again:
                self._after_episode(sent_at - self.since)
        self._raise_floor(sent_at, weight, sent_at if taken_at is None else taken_at)

    def _raise_floor(self, sent_at: float, weight: float, taken_at: float) -> None:
        """A success sent at ``sent_at`` found at least one request's worth
        in a budget that was empty (under one) at an earlier 429, so the
        rate beats what was taken in between over the time between:
        R > taken / span. Successes not heard of yet only make it looser."""
        bisect.insort(self.recent, (taken_at, weight))
        del self.recent[:-RECENT_KEPT]
        later = self._taken_after(sent_at, inclusive=True)  # this one, and any heard of sooner
        for ref in self.empty:
            empty_at = ref[0]
            if taken_at > empty_at:
                ref[1] += weight
            span = sent_at - empty_at
            if span >= MIN_SPAN_S:
                bound = (ref[1] - later) / (span + SPAN_SLACK_S)
                if bound > 0 and (self.floor is None or bound > self.floor):
                    self.floor = bound

    def _taken_after(self, at: float, *, inclusive: bool) -> float:
        """Weight of the recent successes taken after ``at`` (or at it)."""
        total = 0.0
        for t, w in reversed(self.recent):
            if t < at or (t == at and not inclusive):
                break
            total += w
        return total

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
        if refused_for >= LONG_EPISODE_S and refused_for * self.served / span >= LONG_EPISODE:
            served = self.served_weight / span
            self.start = TARGET * served
            self.top, self.floor = served, None
            self.empty.clear()  # a bound across a window's reset would count its whole budget

    def begin(self, start: float, now: float, guess: float | None = None) -> None:
        """Start pacing at ``start`` (a first estimate, as if just lowered:
        the climb begins once a request sent from now on succeeds). With no
        refused pace known, the climb slows down past ``guess``, a rate
        estimated rather than measured."""
        self.start, self.guess = start, guess
        self.since, self.grow_from, self.ok_since = now, None, False
        self.refused_again = False

    def bound(
        self, lo: float | None, hi: float | None, likely: tuple[float, float] | None = None
    ) -> None:
        """A fit of the server's bucket (`_fit.BucketFit`) proves lo <= R < hi
        (None: no bound that side) and finds ``likely`` rates (None: none):
        the bracket narrows to it, the goal follows the likely range, and a
        start above the goal comes down."""
        self.likely = likely
        if hi is not None and (self.top is None or hi < self.top):
            # With no refused pace yet, a loose bound is no level to climb to.
            if self.top is not None or self.start is None or BACKOFF * hi <= self.start:
                self.top = hi
        # A floor far under the top says little, and would pull the goal down.
        loose = self.top is None or lo is None or lo < QUIET_SHARE * self.top
        if lo is not None and not loose and (self.floor is None or lo > self.floor):
            self.floor = lo
        if self.floor is not None and self.top is not None:
            self.floor = min(self.floor, self.top)
        goal = self.goal(0.0)
        if self.start is None or goal is None:
            return  # unpaced, or growing with no top: rate() keeps to the floor
        if self.start > goal:
            self.start = goal  # climb from inside the bracket, not above it
        if self.floor is not None:
            self.start = max(self.start, self.floor)
        if self.from_likely and likely is not None:
            self.start = max(self.start, min(goal, likely[0]))

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
        self.empty.append([sent_at, self._taken_after(sent_at, inclusive=False)])
        if sent_at < self.since:
            return False
        if not self.ok_since:
            if not self.refused_again and paced is not None and not stated and self.start:
                # The first probe after the pause was refused too: the pace
                # is too high (once: a window refuses every probe till it resets).
                self.top = paced if self.top is None else min(self.top, paced)
                self.start = min(self.start, BACKOFF * paced)
            self.refused_again = True
            return False
        refused = paced if paced is not None else sent
        if stated:  # the stated limit bounds the climb back: no top to learn
            self.start = TARGET * refused
            self.since, self.grow_from, self.ok_since = now, None, False
            self.refused_again = False
            self.lowered += 1
            return True
        if paced is not None:
            self.top = paced if self.top is None else min(self.top, paced)
            self.likely = None  # refitted after every bare 429
            if self.floor is not None and self.floor > self.top:
                self.floor = None  # the server slowed down: forget the old bound
        backoff = BACKOFF if paced is not None else UNPACED_BACKOFF
        start = backoff * refused if self.floor is None else max(self.floor, backoff * refused)
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
        self.refused: deque[float] = deque(maxlen=512)
        self.first_sent: float | None = None
        self.latency_s: float | None = None
        """Mean time a successful request was in flight."""

    def on_success(self, sent_at: float, now: float) -> None:
        took = now - sent_at
        self.latency_s = took if self.latency_s is None else 0.8 * self.latency_s + 0.2 * took
        self.learner.on_success(sent_at, now)

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

    def refill_s(self, now: float) -> float | None:
        """One request's worth of time at the slowest rate the endpoint may
        allow: after a bare 429 the budget is empty, and a probe sent sooner
        is likely refused too (None: nothing known)."""
        rate = self.rate(now)
        if rate is None:
            return None
        floor = self.learner.floor
        return 1.0 / max(QUIET_SHARE * rate, min(rate, floor or 0.0))

    def wait_s(self, now: float, allowed: int, most_s: float) -> float:
        """At the pace; unpaced, spread (UNPACED_SPREAD) at most ``most_s`` apart."""
        bucket = self._bucket(now)
        if bucket is not None:
            return bucket.wait_s(1, now)
        if self.latency_s is None or not self.sent:
            return 0.0
        return self.sent[-1] + min(most_s, self.latency_s / (UNPACED_SPREAD * allowed)) - now

    def take(self, now: float) -> None:
        bucket = self._bucket(now)
        if bucket is not None:
            bucket.take(1, now)
        self.sent.append(now)
        if self.first_sent is None:
            self.first_sent = now

    def take_rate(self, at: float) -> float | None:
        """Unpaced, what the endpoint took: requests sent in the window
        before ``at``, less those refused, per second (None: too early to
        call it a rate). An upper estimate: the budget it held at the start
        counts too, and some answers are still out."""
        if self.first_sent is None or at - self.first_sent < SEND_MIN_S:
            return None
        span = min(SEND_WINDOW_S, at - self.first_sent)
        count = sum(1 for t in self.sent if at - span <= t <= at)
        refused = sum(1 for t in self.refused if at - span <= t < at)
        return (count - refused - 1) / span if count - refused >= 2 else None

    def on_throttle(self, sent_at: float, now: float) -> bool:
        """A rate 429; returns whether the pace was lowered (not when
        unpaced with no send rate to speak of: only the pause applies)."""
        paced = self.rate(sent_at)
        sent = self.take_rate(sent_at)
        self.refused.append(sent_at)
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
