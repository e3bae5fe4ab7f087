"""Replaying a run's answers against one bucket at a time (pure arithmetic).

A bucket of capacity B, level L0 at the anchor t0, refilled at R and
capped at each event before that event's take, holds at event i

    L_i = min(L0 + R (t_i - t0) - S_i, min_j B + R (t_i - t_j) - (S_i - S_j))

(S: what was taken before each event). Each piece is affine in R, so an
admission (every piece >= 1) bounds R from below and a refusal (some piece
< 1) from above, each by a steepest line from the answer's point onto the
points (t_j, S_j): one left-to-right scan with a lower convex hull gives
both bounds for one capacity exactly, in O(n log n). `_fit` searches the
capacities.
"""

from __future__ import annotations

import bisect
import itertools
import math
from typing import Literal, NamedTuple

Kind = Literal["requests", "usage"]
Answer = Literal["ok", "refused", "failed"]

RATE_RANGE = {"requests": (1e-3, 1e4), "usage": (1e-1, 1e8)}
"""Rates considered, per second: bounds beyond them mean none on that side."""


class Event(NamedTuple):
    at: float
    arrival: bool
    answer: Answer
    weight: float
    """Arrivals: units taken when admitted; charges: tokens charged."""


class Hull:
    """The lower convex hull of points added left to right, and the steepest
    line from a point to their right onto it (a max-slope query: the binding
    piece of a replay's level, see `Replay.bounds`)."""

    def __init__(self) -> None:
        self.xs: list[float] = []
        self.ys: list[float] = []

    def add(self, x: float, y: float) -> None:
        xs, ys = self.xs, self.ys
        while xs:
            if xs[-1] == x:
                if ys[-1] <= y:
                    return
            elif len(xs) < 2 or (
                (xs[-1] - xs[-2]) * (y - ys[-2]) - (ys[-1] - ys[-2]) * (x - xs[-2]) > 0
            ):
                break
            xs.pop()
            ys.pop()
        xs.append(x)
        ys.append(y)

    def steepest(self, qx: float, qy: float) -> float:
        """max over points left of ``qx`` of (qy - y) / (qx - x); -inf if none."""
        xs, ys = self.xs, self.ys
        lo, hi = 0, len(xs) - 1
        while hi >= 0 and xs[hi] >= qx:
            hi -= 1
        if hi < 0:
            return -math.inf
        while lo < hi:  # slopes to q rise then fall along the hull
            mid = (lo + hi) // 2
            if (qy - ys[mid]) * (qx - xs[mid + 1]) < (qy - ys[mid + 1]) * (qx - xs[mid]):
                lo = mid + 1
            else:
                hi = mid
        return (qy - ys[lo]) / (qx - xs[lo])


class Replay:
    """The events as arrays (what each takes, read to admit and to refuse,
    and what lies within the slack either side of each arrival), ready to
    bound the rate for many capacities."""

    def __init__(
        self,
        kind: Kind,
        events: list[Event],
        slack_s: float,
        *,
        anchor: float,
        start_level: float | None,
        most: float,
    ) -> None:
        self.kind = kind
        self.slack = max(slack_s, 1e-6)
        self.start_level = start_level
        """None: the bucket was full at the anchor; else a refusal's lowest level."""
        self.anchor = anchor
        self.times = [e.at for e in events]
        self.arrival = [e.arrival for e in events]
        self.answer = [e.answer for e in events]
        # A failed request may have been charged in full (``most``) or not at all.
        if kind == "requests":  # one unit taken on admission
            self.take_lo = [float(e.arrival and e.answer == "ok") for e in events]
            self.take_hi = [float(e.arrival and e.answer != "refused") for e in events]
        else:  # tokens charged when the request finished
            self.take_lo = [0.0 if e.arrival or e.answer != "ok" else e.weight for e in events]
            self.take_hi = [
                0.0 if e.arrival else (e.weight if e.answer == "ok" else most) for e in events
            ]
        self.before = self._near(self.take_lo, before=True)
        self.after = self._near(self.take_hi, before=False)
        self.prefix_lo = list(itertools.accumulate(self.take_lo, initial=0.0))
        self.prefix_hi = list(itertools.accumulate(self.take_hi, initial=0.0))
        self.late = self.slack if kind == "requests" else 0.0
        """How much later than sent a take may have come (a request's, on
        arrival; a charge is read when its answer is back: no later)."""

    def _near(self, take: list[float], *, before: bool) -> list[float]:
        """For each arrival, what was taken within the slack before it (or after)."""
        out = [0.0] * len(self.times)
        times = self.times
        for i, t in enumerate(times):
            if not self.arrival[i]:
                continue
            if before:
                j = bisect.bisect_left(times, t - self.slack)
                out[i] = sum(take[j:i])
            else:
                j = bisect.bisect_right(times, t + self.slack)
                out[i] = sum(take[i + 1 : j])
        return out

    def bounds(self, burst: float) -> tuple[float, float]:
        """(lo, hi): the least rate that admits every admitted request and
        the greatest that refuses every refused one, each clamped to
        RATE_RANGE. Admissions are read at their latest (the slack's refill,
        what came just before left out), refusals at their earliest, with a
        request bucket's takes as late as the slack allows (what came just
        before or after may have been taken at the same instant)."""
        r_min, r_max = RATE_RANGE[self.kind]
        t0 = self.anchor
        start_lo = burst if self.start_level is None else 1.0
        start_hi = burst if self.start_level is None else self.start_level
        lo, hi = r_min, r_max
        admits, refuses = Hull(), Hull()
        admits.add(t0, start_lo - burst)
        refuses.add(t0, start_hi - burst)
        slack, late = self.slack, self.late
        times, prefix = self.times, self.prefix_hi
        for i, t in enumerate(times):
            admits.add(t, self.prefix_lo[i])
            if self.arrival[i]:
                answer = self.answer[i]
                if answer == "ok":
                    need = admits.steepest(
                        t + slack, 1.0 - burst + self.prefix_lo[i] - self.before[i]
                    )
                    lo = max(lo, need)
                elif answer == "refused":
                    qy = 1.0 + self.after[i] - burst + prefix[i]
                    near = prefix[bisect.bisect_left(times, t - late, 0, i + 1)]
                    if t <= t0:  # the anchor's own refusal
                        near = min(near, start_hi - burst)
                    if qy - near <= 0:  # nothing taken as it arrived explains it
                        hi = min(hi, max(refuses.steepest(t, qy), 0.0))
            refuses.add(t + late, prefix[i])
        return lo, hi
