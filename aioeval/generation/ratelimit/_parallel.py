"""Parallel caps: requests allowed in flight, learned apart from the rate.

A gateway may cap a key's parallel requests and answer the one too many
with 429 and a long ``Retry-After`` (60 s) although a slot frees within
milliseconds. `ParallelCap` starts at one request in flight and adds one per
success, or doubles what has been admitted (slow start), until the first
429. A 429 with a hint (a cap's says how long to wait) that arrives with
more in flight than ever worked, and no budget reported exhausted, reads
as a cap; a bare 429 never does (at low parallelism a token bucket's
refusal looks just like a cap, and the pace learned from it holds a cap
that says nothing too):
the limit drops to one below, the request is retried as soon as a slot
frees, and the server's hint is not waited out. One more in flight is tried
after a few successes at the cap; once a second refusal confirmed it, only
after many, doubled after each refused try. Pure arithmetic.
"""

from __future__ import annotations

import math

from ._hints import RateHeaders, exhausted_reset_s

PARALLEL_PROBE_AFTER = (4, 64)
"""Successes at the parallel cap before one more in flight is tried: few
while the cap rests on one refusal (it may have been a rate limit), many
once a second refusal confirmed it (doubled after each refused try)."""


class ParallelCap:
    """Requests allowed in flight (see the module docstring)."""

    def __init__(self, ceiling: int, *, slow_start: bool) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = 1 if slow_start else self.ceiling
        self.slow_start = slow_start
        self.peak_ok = 0
        """The most requests in flight (counting itself) when one succeeded."""
        self.admitted = 0
        """The most in flight when a request now running past the time a 429
        takes was sent. Not a peak: a request counted so before the first
        429 (when that time is not known yet) may still come back refused."""
        self.cap: int | None = None
        """A parallel cap concluded from a 429 (raised when a probe above it works)."""
        self.probe_after = PARALLEL_PROBE_AFTER[0]
        self.streak = 0
        self.refusals = 0
        """Parallel 429s since the cap was concluded."""
        self.unpaced = False
        """The last refusal came while nothing paced the requests."""
        self.concluded_at = -math.inf
        self._undo: int | None = None

    @property
    def allowed(self) -> int:
        return self.limit

    @property
    def works(self) -> int:
        """The most in flight seen to work (succeeded or admitted), within a learned cap."""
        works = max(self.peak_ok, self.admitted)
        return works if self.cap is None else min(works, self.cap)

    def saw_admitted(self, parallel: int) -> None:
        """Requests sent at up to ``parallel`` are running past the time a 429 takes."""
        self.admitted = parallel

    def on_success(self, parallel: int) -> None:
        self.peak_ok = max(self.peak_ok, parallel)
        if self.cap is not None and parallel > self.cap:
            self.cap = parallel  # a probe above it worked: the cap is higher
        if self.slow_start:
            self.limit = min(self.ceiling, self.limit + 1)
            return
        if parallel >= self.limit:
            self.streak += 1
            if self.limit < self.ceiling and self.streak >= self.probe_after:
                self.limit += 1
                self.streak = 0

    def on_admitted(self, running: int) -> None:
        """Slow start: ``running`` requests in flight have been admitted
        (they run long past the time a 429 takes), so twice as many may be;
        slow generations need not finish before the limit grows. Only once
        one request has succeeded: its headers may set a pace first."""
        if self.slow_start and self.peak_ok > 0:
            self.limit = max(self.limit, min(self.ceiling, 2 * running))

    def is_parallel_429(self, parallel: int, admitted: int, hints: RateHeaders) -> bool:
        """Whether a 429 for a request sent at ``parallel`` reads as a
        parallel cap: it came with a hint, no budget reported exhausted,
        and more in flight than ever worked (``admitted``: the most in
        flight when a request still running, long past the time a 429
        takes, was sent)."""
        if exhausted_reset_s(hints) is not None or 0 in (
            hints.remaining_requests,
            hints.remaining_tokens,
        ):
            return False
        # A tie reads as a cap too: the client counts a request in flight
        # until its answer is read, the server only until it answered, so a
        # level seen to work may have been one fewer at the server (issue 14:
        # the cap's 429 then read as a rate limit and its 60 s were waited).
        if not hints.any:
            return False
        return parallel >= 2 and parallel >= max(self.peak_ok, admitted)

    def on_parallel_429(self, parallel: int, sent_at: float, now: float, *, paced: bool) -> None:
        """A parallel 429 for a request sent at ``sent_at``. Requests sent
        before the last conclusion (a burst already in flight) only keep the
        limit down: they are the same evidence, not a confirmation."""
        self.slow_start = False
        if self.cap is None:
            self._undo = self.limit
        self.limit = max(1, min(self.limit, parallel - 1))
        if self.cap is not None and sent_at < self.concluded_at:
            self.cap = min(self.cap, self.limit)
            return
        self.unpaced = not paced
        if self.cap is not None and self.refusals == 1:
            self.probe_after = PARALLEL_PROBE_AFTER[1]  # confirmed
        elif self.cap is not None:
            self.probe_after *= 2  # a refused probe above a known cap
        self.refusals += 1
        self.cap = self.limit
        self.concluded_at = now
        self.streak = 0

    def on_rate_429(self, *, paced: bool) -> None:
        """A rate 429 ends slow start once the pace has been lowered (the
        pace holds the rate from then on). It also voids a cap that rests on
        one refusal, or on refusals while nothing paced the requests: those
        were most likely the rate limit too (a short burst refused looks
        just like a cap). A real cap is found again by one quick refusal."""
        self.slow_start = self.slow_start and not paced
        if (self.refusals == 1 or self.unpaced) and self._undo is not None:
            self.limit = max(self.limit, self._undo)
            self.cap, self._undo, self.refusals = None, None, 0
