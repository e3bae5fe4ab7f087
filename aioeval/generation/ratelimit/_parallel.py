"""Parallel caps: requests allowed in flight, learned apart from the rate
(pure).

A gateway may cap a key's parallel requests and answer the one too many
with 429 and a long ``Retry-After`` although a slot frees within
milliseconds. `ParallelCap` starts at one in flight and adds one per
success, or doubles what has been admitted (slow start); once a pace holds
the rate, it allows ``max_concurrency``. A hinted 429 with at least as many
in flight as ever worked, and no budget reported exhausted, reads as a cap:
the limit drops to one below and the hint is not waited out. A bare 429
never does (at low parallelism a bucket's refusal looks just like a cap).
One more in flight is tried after a few successes at the cap, after many
once a second refusal confirmed it, doubled after each refused try.
"""

from __future__ import annotations

import math

from ..ratehints import RateHeaders
from ._hints import exhausted_reset_s

PARALLEL_PROBE_AFTER = (4, 64)
"""Successes at the cap before one more in flight is tried: few while the
cap rests on one refusal (it may have been a rate limit), many once a
second refusal confirmed it."""


class ParallelCap:
    """Requests allowed in flight (see the module docstring)."""

    def __init__(self, ceiling: int, *, slow_start: bool) -> None:
        self.ceiling = max(1, ceiling)
        self.allowed = 1 if slow_start else self.ceiling
        self.slow_start = slow_start
        self.peak_ok = 0  # the most in flight (counting itself) when one succeeded
        self.admitted = 0  # the most in flight when one the server admitted was sent
        self.cap: int | None = None  # concluded from a 429 (raised if a probe above works)
        self.probe_after = PARALLEL_PROBE_AFTER[0]
        self.streak = 0
        self.refusals = 0  # parallel 429s since the cap was concluded
        self.unpaced = False  # the last refusal came while nothing paced the requests
        self.concluded_at = -math.inf
        self._undo: int | None = None

    @property
    def works(self) -> int:
        """The most in flight seen to work (succeeded or admitted), within a cap."""
        works = max(self.peak_ok, self.admitted)
        return works if self.cap is None else min(works, self.cap)

    def on_success(self, parallel: int) -> None:
        self.peak_ok = max(self.peak_ok, parallel)
        if self.cap is not None and parallel > self.cap:
            self.cap = parallel  # a probe above it worked: the cap is higher
        if self.slow_start:
            self.allowed = min(self.ceiling, self.allowed + 1)
        elif parallel >= self.allowed:
            self.streak += 1
            if self.allowed < self.ceiling and self.streak >= self.probe_after:
                self.allowed, self.streak = self.allowed + 1, 0

    def on_admitted(self, running: int) -> None:
        """Slow start: ``running`` requests have been admitted, so twice as
        many may be (slow generations need not finish before the limit grows)."""
        if self.slow_start:
            self.allowed = max(self.allowed, min(self.ceiling, 2 * running))

    def is_parallel_429(self, parallel: int, admitted: int, hints: RateHeaders) -> bool:
        """Whether a 429 for a request sent at ``parallel`` in flight reads as
        a cap. A tie counts: the client counts a request until its answer is
        read, the server only until it answered, so a level seen to work may
        have been one fewer at the server."""
        left = (hints.least("remaining", "requests"), hints.least("remaining", "tokens"))
        exhausted = exhausted_reset_s(hints) is not None or 0 in left
        if exhausted or not hints.any:
            return False
        return parallel >= 2 and parallel >= max(self.peak_ok, admitted)

    def on_parallel_429(self, parallel: int, sent_at: float, now: float, *, paced: bool) -> None:
        """A cap's 429 for a request sent at ``sent_at``. Requests sent before
        the last conclusion (a burst already in flight) only keep the limit
        down: they are the same evidence, not a confirmation."""
        self.slow_start = False
        if self.cap is None:
            self._undo = self.allowed
        self.allowed = max(1, min(self.allowed, parallel - 1))
        if self.cap is not None and sent_at < self.concluded_at:
            self.cap = min(self.cap, self.allowed)
            return
        self.unpaced = not paced
        if self.cap is not None:  # a second refusal confirms; later ones were probes
            self.probe_after = (
                PARALLEL_PROBE_AFTER[1] if self.refusals == 1 else 2 * self.probe_after
            )
        self.refusals += 1
        self.cap, self.concluded_at, self.streak = self.allowed, now, 0

    def on_rate_429(self, *, paced: bool) -> None:
        """A rate 429 voids a cap that rests on one refusal, or on refusals
        while nothing paced the requests (a short burst refused looks just
        like a cap; a real one is found again by one quick refusal). Once a
        pace holds the rate, slow start ends and only a cap holds the
        parallel limit under ``max_concurrency``."""
        if (self.refusals == 1 or self.unpaced) and self._undo is not None:
            self.allowed = max(self.allowed, self._undo)
            self.cap, self._undo, self.refusals = None, None, 0
        if paced:
            self.slow_start = False
            self.allowed = self.ceiling if self.cap is None else self.allowed
