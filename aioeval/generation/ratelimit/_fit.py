"""The server's bucket, fitted to its answers (pure: every method takes the time).

A bare 429 says only that the server's bucket held less than one unit when
that request arrived; an admission, that it held at least one. Which token
buckets (rate R, capacity B) could have admitted every request the server
admitted and refused every one it refused? The level a bucket reaches is
monotone in R and in B (more refill, or a deeper bucket, never lowers it),
so for one B the rates that explain every admission form [lo, inf) and the
rates that explain every refusal [0, hi), both computed exactly by
`_replay.Replay`. The feasible slices over a search of B make the `Region`.

Two kinds of bucket are fitted from the same answers: ``requests`` (one
unit taken when a request is admitted) and ``usage`` (the tokens a request
reports, charged when it finishes, as a usage-metered gateway charges:
a request is admitted while the level is positive, and the charge may put
the bucket in debt). A kind whose region comes out empty is not what the
server limits.

The replay is permissive both ways, so noise cannot empty the region of
the right kind: an arrival may reach the server up to ``slack_s`` after it
was sent, and a charge (read when its answer is back) land that much
earlier, so an admission is checked at its latest with what came that
close before it left out, and a refusal at its earliest with what came
that close either side counted in; a request that failed otherwise (5xx,
dropped), or is still out, is taken or charged only where that makes a
refusal easier to explain. The bucket is taken to be
full when the run starts; an empty region re-anchors the replay at the
last refusal (the bucket held less than one unit there), so a key shared
with another client, or a limit that changed, costs one refit.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from ._replay import RATE_RANGE, Answer, Event, Kind, Replay

GRID_RATIO = 1.3
"""Capacities tried: 1, 1.3, 1.69, ... up to the largest the run allows."""
FINE_RATIO = 1.03
"""Grid step inside the band found last time."""
BAND_MARGIN = 1.1
"""Capacities tried around the band found last time (this much wider)."""
EDGE_STEPS = 6
"""Bisection steps on each edge of the feasible capacities."""
WHOLE_SLACK = 0.02
"""A feasible capacity this close to a whole number counts as that number."""
FILL_STEPS = 16
"""Interpolated capacities between neighbouring slices (`Region._filled`)."""
MAX_EVENTS = 500
"""Events replayed at most: beyond, the replay re-anchors at a later refusal."""


class Slice(NamedTuple):
    """For capacity ``burst``, the rates in [lo, hi) explain every answer."""

    burst: float
    lo: float
    hi: float


class Region(NamedTuple):
    slices: tuple[Slice, ...]
    kind: Kind
    cap: float
    """The deepest bucket the answers allow at all (`BucketFit._max_burst`)."""

    @property
    def depth(self) -> float:
        """How close the feasible buckets come to that depth (0 to 1)."""
        return self.slices[-1].burst / self.cap

    @property
    def lo(self) -> float | None:
        """The least rate any feasible bucket has (None: nothing proven)."""
        lo = min(s.lo for s in self.slices)
        return lo if lo > RATE_RANGE[self.kind][0] else None

    @property
    def hi(self) -> float | None:
        """The greatest rate any feasible bucket has (None: no upper bound)."""
        hi = max(s.hi for s in self.slices)
        return hi if hi < RATE_RANGE[self.kind][1] else None

    def whole(self) -> tuple[float, float] | None:
        """The rates feasible for the one whole-number capacity inside the
        feasible ones (None: none or several). Request buckets are set in
        whole requests (a gateway's ``burst``, a limiter's ``max_tokens``),
        and the feasible rate falls steeply with the capacity, so this is
        a far narrower estimate than [lo, hi): a likely range, not a bound."""
        first, last = self.slices[0].burst, self.slices[-1].burst
        whole = math.ceil(first - WHOLE_SLACK)
        if whole > last + WHOLE_SLACK or whole + 1 <= last + WHOLE_SLACK:
            return None
        at = min(max(float(whole), first), last)
        s = min(self._filled(), key=lambda s: abs(s.burst - at))
        return s.lo, s.hi

    def windowed(self, windows_s: Sequence[float]) -> tuple[float, float] | None:
        """The rates whose bucket holds one of ``windows_s`` of the rate
        and explains every answer, when exactly one window does (None:
        none or several). Token buckets are sized as a window of their
        rate (a second, a minute): a likely range, not a bound."""
        filled, found = self._filled(), []
        for window in windows_s:
            rates = [s.burst / window for s in filled if s.lo <= s.burst / window < s.hi]
            if rates:
                found.append((min(rates), max(rates)))
        return found[0] if len(found) == 1 else None

    def _filled(self) -> list[Slice]:
        """The slices with FILL_STEPS more between neighbours, interpolated
        (the rates run nearly straight between grid capacities)."""
        out = [self.slices[0]]
        for a, b in itertools.pairwise(self.slices):
            for k in range(1, FILL_STEPS + 1):
                w = k / FILL_STEPS
                out.append(
                    Slice(
                        a.burst + w * (b.burst - a.burst),
                        a.lo + w * (b.lo - a.lo),
                        a.hi + w * (b.hi - a.hi),
                    )
                )
        return out

    def typical(self) -> float:
        """The middle of the median slice (capacities on a log grid): an
        estimate for when one is needed before the region is narrow."""
        s = self.slices[len(self.slices) // 2]
        return math.sqrt(s.lo * s.hi)

    def sized(self, window_s: float) -> tuple[float, float]:
        """(rate, capacity) of a feasible bucket that holds about
        ``window_s`` of its rate: the middle of the capacities for which
        that rate is feasible, else the slice that comes closest. Servers
        size a token bucket as a window of the rate (a second, a minute);
        the answers alone cannot tell a deep slow bucket from a shallow
        fast one until a refusal comes at a known pace."""

        def miss(s: Slice) -> float:
            rate = min(max(s.burst / window_s, s.lo), s.hi)
            return abs(math.log(s.burst / (rate * window_s)))

        fits = [s for s in self.slices if miss(s) < 1e-9]
        if fits:
            burst = math.sqrt(fits[0].burst * fits[-1].burst)
            near = min(self.slices, key=lambda s: abs(math.log(s.burst / burst)))
            return min(max(burst / window_s, near.lo), near.hi), near.burst
        best = min(self.slices, key=miss)
        return min(max(best.burst / window_s, best.lo), best.hi), best.burst


class BucketFit:
    """The answers of one run, replayed against candidate buckets."""

    def __init__(self, kind: Kind, start: float) -> None:
        self.kind = kind
        self.anchor = start
        self.anchor_level: float | None = None
        """None: the bucket was full at the anchor; else it held less than
        one unit (a refusal), and at least this much."""
        self.events: list[Event] = []
        self.first_refusal: float | None = None
        """The bucket, full at the start, held less than a unit here: so it
        is at most one unit deeper than what was taken before (`_max_burst`)."""
        self.burst_cap: float | None = None
        """The deepest bucket, kept from before the replay was re-anchored."""
        self.mean_charge = 0.0
        self.max_charge = 0.0
        self.charges = 0
        self._region: Region | None = None
        self.band: tuple[float, float] | None = None
        """The feasible capacities last found (None: search them all)."""
        self._stale = True
        self._key: tuple[float, tuple[float, ...]] = (0.0, ())

    # ------------------------------------------------------------ recording

    def arrived(self, at: float, answer: Answer) -> None:
        """A request sent at ``at`` was admitted (``ok``), refused, or failed
        with no telling (``failed``)."""
        self._insert(Event(at, True, answer, 1.0))
        if answer == "refused" and self.first_refusal is None:
            self.first_refusal = at

    def charged(self, at: float, tokens: float) -> None:
        """A request finished at ``at`` having used ``tokens`` (usage)."""
        self.charges += 1
        self.mean_charge += (tokens - self.mean_charge) / self.charges
        self.max_charge = max(self.max_charge, float(tokens))
        self._insert(Event(at, False, "ok", float(tokens)))

    def failed_charge(self, at: float) -> None:
        """A request that may have been charged, by an amount not known."""
        self._insert(Event(at, False, "failed", 0.0))

    def _insert(self, event: Event) -> None:
        if event.at < self.anchor:
            return
        bisect.insort(self.events, event)
        self._stale = True
        if len(self.events) > MAX_EVENTS:
            refusals = [e.at for e in self.events[len(self.events) // 2 :] if e.answer == "refused"]
            if refusals:
                self.reanchor(refusals[0])

    def _replay(self, events: list[Event], slack_s: float) -> Replay:
        return Replay(
            self.kind,
            events,
            slack_s,
            anchor=self.anchor,
            start_level=self.anchor_level,
            most=self.max_charge,
        )

    def _max_burst(self, replay: Replay) -> float:
        """One unit more than the most that can have been taken before the
        first refusal (within the slack after it)."""
        if self.burst_cap is not None:
            return self.burst_cap
        assert self.first_refusal is not None
        end = bisect.bisect_right(replay.times, self.first_refusal + replay.slack)
        return max(1.0, 1.0 + sum(replay.take_hi[:end]))

    def reanchor(self, at: float) -> None:
        """Replay from the refusal at ``at`` on (the bucket under one unit there)."""
        floor = 0.0
        if self.kind == "usage":
            admitted = [e.at for e in self.events if e.arrival and e.answer == "ok" and e.at < at]
            since = admitted[-1] if admitted else self.anchor
            floor = min(0.0, 1.0 - self._charged_between(since, at))
        if self.burst_cap is None and self.first_refusal is not None:
            self.burst_cap = self._max_burst(self._replay(self.events, SLACK_S[1]))
        self.anchor, self.anchor_level, self.band = at, floor, None
        self.events = [e for e in self.events if e.at >= at]
        self._stale = True

    def _charged_between(self, a: float, b: float) -> float:
        return sum(e.weight for e in self.events if not e.arrival and a <= e.at < b)

    # -------------------------------------------------------------- fitting

    def level(self, now: float, rate: float, burst: float) -> float:
        """The bucket's level at ``now`` if it refills at ``rate`` up to
        ``burst``, reading every failed request as taken (a low estimate)."""
        replay = self._replay(self.events, 0.0)
        level = burst if self.anchor_level is None else self.anchor_level
        t = self.anchor
        for at, take in zip(replay.times, replay.take_hi, strict=True):
            if at > now:
                break
            level = min(burst, level + rate * (at - t)) - take
            t = at
        return min(burst, level + rate * max(0.0, now - t))

    def last_refusal(self) -> float | None:
        return next((e.at for e in reversed(self.events) if e.answer == "refused"), None)

    def region(self, slack_s: float, pending: Sequence[float] = ()) -> Region | None:
        """The buckets that explain every answer since the anchor (None: no
        refusal to fit yet, or none explains them all). ``pending``: send
        times of requests still out, taken where that explains a refusal
        (for usage: charged the most seen just before the last refusal, as
        the server may have charged one whose answer is still on its way)."""
        key = (slack_s, tuple(pending))
        if not self._stale and key == self._key:
            return self._region
        self._stale, self._key = False, key
        self._region = None
        if self.first_refusal is None or not any(e.answer == "refused" for e in self.events):
            return None
        if self.kind == "requests":
            out = [Event(t, True, "failed", 1.0) for t in pending if t >= self.anchor]
        else:
            last = self.last_refusal() or self.anchor
            out = [Event(last - slack_s, False, "failed", 0.0) for t in pending if t < last]
        replay = self._replay(sorted(self.events + out) if out else self.events, slack_s)
        cap = self._max_burst(replay)
        slices: tuple[Slice, ...] = ()
        if self.band is not None:  # answers only narrow it: look there first
            low, high = self.band[0] / BAND_MARGIN, self.band[1] * BAND_MARGIN
            slices = _search(replay, max(1.0, low), min(cap, high), FINE_RATIO)
        if not slices:
            slices = _search(replay, 1.0, cap, GRID_RATIO)
        self.band = (slices[0].burst, slices[-1].burst) if slices else None
        self._region = Region(slices, self.kind, cap) if slices else None
        return self._region


def _gap(replay: Replay, burst: float, found: dict[float, Slice]) -> float:
    """log(lo / hi) for this capacity (< 0: feasible, recorded in ``found``)."""
    lo, hi = replay.bounds(burst)
    r_min, r_max = RATE_RANGE[replay.kind]
    if lo >= r_max or hi <= r_min:
        return math.inf
    if lo < hi:
        found[burst] = Slice(burst, lo, hi)
    return math.log(lo / hi)


def _search(replay: Replay, bottom: float, top: float, ratio: float) -> tuple[Slice, ...]:
    """The feasible capacities in [bottom, top]: a log grid, a search around
    the point closest to feasible when none is (a narrow band, once the
    answers pin B down, falls between grid points), then bisection of both
    edges of the band, so its deepest and shallowest buckets (which hold
    the least and the greatest rates) are found."""
    span = top / bottom
    steps = max(1, math.ceil(math.log(span) / math.log(ratio))) if span > 1 else 0
    grid = [bottom * span ** (k / steps) if steps else bottom for k in range(steps + 1)]
    found: dict[float, Slice] = {}
    gaps = [_gap(replay, b, found) for b in grid]
    ok = [k for k, g in enumerate(gaps) if g < 0]
    if ok:
        first, last = grid[ok[0]], grid[ok[-1]]
        below = grid[ok[0] - 1] if ok[0] > 0 else None
        above = grid[ok[-1] + 1] if ok[-1] + 1 < len(grid) else None
    else:
        k = min(range(len(grid)), key=gaps.__getitem__)
        if math.isinf(gaps[k]):
            return ()
        below, above = grid[max(0, k - 1)], grid[min(len(grid) - 1, k + 1)]
        a, b = below, above
        for _ in range(EDGE_STEPS * 2):  # ternary search on log B for a negative gap
            m1, m2 = a * (b / a) ** (1 / 3), a * (b / a) ** (2 / 3)
            g1, g2 = _gap(replay, m1, found), _gap(replay, m2, found)
            if min(g1, g2) < 0:
                break
            a, b = (a, m2) if g1 < g2 else (m1, b)
        if not found:
            return ()
        first = last = min(found)
    for inside, outside in ((first, below), (last, above)):
        if outside is not None and outside != inside:
            a, b = inside, outside
            for _ in range(EDGE_STEPS):
                mid = math.sqrt(a * b)
                a, b = (mid, b) if _gap(replay, mid, found) < 0 else (a, mid)
    return tuple(found[b] for b in sorted(found))


SLACK_S = (0.002, 0.05)
"""The arrival slack: the slowest recent 429's round trip, within these."""


class Fits:
    """Both kinds of bucket fitted to one run's answers, and what they say
    together: a server whose refusals no request bucket explains, while a
    usage-metered token bucket does, limits tokens."""

    def __init__(self, now: float) -> None:
        self.requests = BucketFit("requests", now)
        self.usage = BucketFit("usage", now)
        self.rtts: deque[float] = deque(maxlen=16)
        """Round trips of the last 429s: an arrival is at most this late."""
        self.metered = False
        """Some answer reported its usage."""

    def answered(self, sent_at: float, now: float, answer: Answer, used: int | None) -> None:
        self.requests.arrived(sent_at, answer)
        self.usage.arrived(sent_at, answer)
        if answer == "refused":
            self.rtts.append(now - sent_at)
        elif answer == "ok" and used is not None:
            self.usage.charged(now, used)
            self.metered = True
        else:
            self.usage.failed_charge(now)

    def slack_s(self) -> float:
        return min(SLACK_S[1], max(SLACK_S[0], max(self.rtts, default=0.0)))

    def read(self, pending: Sequence[float]) -> tuple[Region | None, Region | None]:
        """(requests, usage) regions after a bare 429; when neither kind
        explains the answers any more, both replays restart at this refusal."""
        slack = self.slack_s()
        requests = self.requests.region(slack, pending)
        usage = self.usage.region(slack, pending) if self.metered else None
        if requests is None and usage is None:
            for fit in (self.requests, self.usage):
                last = fit.last_refusal()
                if last is not None and last > fit.anchor:
                    fit.reanchor(last)
        return requests, usage
