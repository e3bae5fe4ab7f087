"""`RateLimiter`: the pace, the token budget, the parallel limit and the
shared pause, tied to a `Clock`.

On a rate 429 every sender pauses: until the server's hint plus
PAUSE_MARGIN or, without one, the intervals at the lowered pace a probe last
needed, doubled each time it is refused again (at most ``max_quiet_s``).
Then one request probes; the rest follow at the pace once it is admitted,
so no herd goes at once. Nothing but 429 for ``patience_s``: `acquire`
raises `Stalled`.
"""

from __future__ import annotations

import math
from typing import Literal

import anyio
import msgspec

from ..ratehints import RateHeaders
from ..retry import Clock
from ._hints import pause_for
from ._pace import HINT_MARGIN, Pace
from ._parallel import ParallelCap
from ._tokens import Ask, TokenBudget, TpmCounts

PAUSE_MARGIN = (0.02, 0.02)
"""A server's pause is extended by 20 ms plus 2%, so the probe does not land early."""
ADMITTED_AFTER_S = 0.02
"""A request in flight longer than this (and than twice the slowest 429
seen) has been admitted by the server."""
PROBE_GAP_S = 0.1
"""Unpaced, a parallelism never seen to work is tried this long after the
last send, and a bare 429 pauses this long first (then doubles)."""
HEADERS_WAIT_S = 1.0
"""Slow start waits this long for a first answer whose headers may state the
limits: a request running longer is being generated, and more may go."""
EPSILON_S = 1e-6
"""Shorter waits are rounding error (a virtual clock would never pass them)."""

Throttle = Literal["rate", "concurrency"]
Outcome = Literal["ok", "throttled", "failed"]


class Stalled(Exception):
    """The endpoint has answered nothing but 429 for ``patience_s``."""


class Permit(msgspec.Struct, kw_only=True):
    """One admitted request."""

    id: int
    started_at: float
    parallel: int
    """Requests in flight when it was sent, itself included."""
    tokens: int = 0  # reserved or charged for it
    n: int = 1
    probe: bool = False


class RateLimiter:
    """``permit = await acquire(ask)``, then exactly one ``release(permit,
    outcome, ...)``, which says how a 429 was read."""

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
        self.pace = Pace(clock.now(), rpm)
        self.tokens = TokenBudget(tpm, tpm_counts, clock.now()) if tpm else None
        self.parallel = ParallelCap(max_concurrency, slow_start=not rpm)
        self.patience_s, self.max_quiet_s = patience_s, max_quiet_s
        self.out: dict[int, Permit] = {}
        self.paused_until = -math.inf
        self.quiet_s = 0.0
        # Intervals a bare 429's probe waits: doubled if refused again (a budget
        # metered on usage owes what was in flight), halved if through at once.
        self.quiet_intervals = 1.0
        self.reprobed = False
        self.probing = False
        self.refused_since: float | None = None  # the first rate 429 since the last success
        self.refusal_rtt_s = 0.0  # the slowest 429 answer seen
        self._ids = 0
        self._changed = anyio.Event()
        # Admitted in the order they asked: only the first in line waits on the
        # limits, so a release wakes one task, not every waiter.
        self._turn = anyio.Lock()

    @property
    def rate_rpm(self) -> float | None:
        """The pace now, in requests per minute (None: not paced)."""
        interval = self.pace.interval_s(self.clock.now())
        return None if interval is None else 60.0 / interval

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def acquire(self, ask: Ask | int) -> Permit:
        if isinstance(ask, int):
            ask = Ask(prompt=ask, max_tokens=0)
        async with self._turn:
            return await self._admit(ask)

    async def _admit(self, ask: Ask) -> Permit:
        while True:
            now = self.clock.now()
            if self.refused_since is not None and now - self.refused_since >= self.patience_s:
                raise Stalled(f"the endpoint has answered only 429 for {self.patience_s:.0f} s")
            admitted_in = self._grow(now)
            probe_out = self.probing and any(p.probe for p in self.out.values())
            if len(self.out) >= self.parallel.allowed or probe_out:
                if admitted_in is None:
                    await self._changed.wait()
                else:
                    await self.clock.wait(self._changed, admitted_in)
                continue
            cost = self.tokens.cost(ask) if self.tokens is not None else 0
            wait = max(
                self.paused_until - now,
                self.pace.wait_s(now),
                self._probe_wait(now),
                self.tokens.wait_s(cost, now) if self.tokens is not None else 0.0,
            )
            if wait > EPSILON_S:
                await self.clock.wait(self._changed, wait)
                continue
            self.pace.take(now)
            if self.tokens is not None:
                self.tokens.take(cost, now)
            self._ids += 1
            permit = Permit(
                id=self._ids,
                started_at=now,
                parallel=len(self.out) + 1,
                tokens=cost,
                n=ask.n,
                probe=self.probing,
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
        self.out.pop(permit.id, None)
        self._read_limits(hints, now, now - permit.started_at)
        verdict: Throttle | None = None
        if outcome == "ok":
            self._on_success(permit, now, used_tokens, completion_tokens)
        elif outcome == "throttled":
            self._unslot(permit)
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
            self.tokens.settle(permit, now, used=used, completion=completion)
        self.refused_since = None
        if permit.started_at >= self.pace.learner.last_429:  # sent after it: serving again
            if permit.probe and self.quiet_s and not self.reprobed:  # through at once
                self.quiet_intervals = max(1.0, self.quiet_intervals / 2.0)
            self.probing, self.quiet_s = False, 0.0

    def _on_429(self, permit: Permit, now: float, hints: RateHeaders) -> Throttle:
        self.refusal_rtt_s = max(self.refusal_rtt_s, now - permit.started_at)
        if self.tokens is not None:
            self.tokens.refused(permit.tokens, now)
        self._grow(now)
        if self.parallel.is_parallel_429(permit.parallel, self.parallel.admitted, hints):
            paced = self.pace.rate(permit.started_at) is not None
            self.parallel.on_parallel_429(permit.parallel, permit.started_at, now, paced=paced)
            return "concurrency"
        lowered = self.pace.on_refused(permit.started_at, now)
        self.parallel.on_rate_429(paced=self.pace.rate(now) is not None)
        self.refused_since = now if self.refused_since is None else self.refused_since
        hinted = pause_for(hints, throttled=True)
        if hinted is not None:
            pause = hinted * (1.0 + PAUSE_MARGIN[1]) + PAUSE_MARGIN[0]
        else:
            interval = min(self.pace.interval_s(now) or PROBE_GAP_S, self.max_quiet_s)
            if lowered or not self.quiet_s:
                self.reprobed = False
            elif permit.probe:  # refused again: wait longer before the next probe
                self.quiet_intervals = min(2.0 * self.quiet_intervals, self.max_quiet_s / interval)
                self.reprobed = True
            self.quiet_s = pause = min(self.quiet_intervals * interval, self.max_quiet_s)
        self.paused_until = max(self.paused_until, now + min(pause, self.patience_s))
        self.pace.resumed = self.paused_until
        if lowered:
            self.pace.learner.pause_s = min(pause, self.max_quiet_s)
        self.probing = True
        return "rate"

    def _unslot(self, refused: Permit) -> None:
        """A refused request held no slot at the server: those sent while it
        was out had one fewer in flight (else one would look like a success
        above a parallel cap)."""
        for other in self.out.values():
            if other.id > refused.id:
                other.parallel = max(1, other.parallel - 1)

    def _probe_wait(self, now: float) -> float:
        """A send to a parallelism never seen to work goes an interval (or
        PROBE_GAP_S) after the last: its refusal means a cap, not a burst."""
        if len(self.out) < self.parallel.works or not self.pace.sent:
            return 0.0
        gap = self.pace.interval_s(now) or PROBE_GAP_S
        return self.pace.sent[-1] + gap - now

    def _grow(self, now: float) -> float | None:
        """Requests running longer than twice the slowest 429 took (at least
        ADMITTED_AFTER_S) were admitted: tell the parallel limit, and let the
        rest follow an admitted probe. Returns when the next request will
        count as admitted, while that can let a request go."""
        after = max(ADMITTED_AFTER_S, 2.0 * self.refusal_rtt_s)
        admitted = [p for p in self.out.values() if now - p.started_at > after]
        self.probing = self.probing and not any(p.probe for p in admitted)
        self.parallel.admitted = max((p.parallel for p in admitted), default=0)
        grow_after = after if self.parallel.peak_ok else max(after, HEADERS_WAIT_S)
        self.parallel.on_admitted(sum(now - p.started_at > grow_after for p in self.out.values()))
        waits = [after] if self.probing else []
        waits += [grow_after] if self.parallel.slow_start else []
        due = [d for p in self.out.values() for w in waits if (d := p.started_at + w - now) >= 0]
        return min(due) + EPSILON_S if due else None

    def _read_limits(self, hints: RateHeaders, now: float, age_s: float) -> None:
        """A stated request limit caps the pace; a stated token limit, with
        none configured, becomes a budget counted on usage (a bound either
        way the server counts), kept no fuller than the server says."""
        if (limit := hints.least("limit", "requests")) is not None and limit > 0:
            self.pace.hinted = limit / 60.0
        if (limit := hints.least("limit", "tokens")) is not None and limit > 0:
            if self.tokens is None:
                self.tokens = TokenBudget(HINT_MARGIN * limit, "usage", now, hinted=True)
        if (
            (left := hints.least("remaining", "tokens")) is not None
            and self.tokens
            and self.tokens.hinted
        ):
            self.tokens.sync(left, now, age_s)
