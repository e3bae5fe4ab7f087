"""Client-side rate limiting: learn an endpoint's limits and stay just under them.

Rate limits are on request and token *rates*, parallel caps on requests in
flight, and they are learned separately, each by a piece of pure arithmetic
that takes the time as an argument:

- `_pace.Pace`: even spacing at the lowest of the configured ``rpm``, the
  limit the headers state, and the rate `_pace.RateLearner` estimates from
  429s (it brackets the allowed rate between the refused pace and a lower
  bound from the requests accepted since the last 429s, and remembers the
  level where 429s began so probing above it is rare);
- `_parallel.ParallelCap`: a parallel cap, read from a hinted 429 that came
  with more in flight than ever worked; such a 429 pauses nobody, and its
  request is retried at the next free slot whatever ``Retry-After`` says;
- `_tokens.TokenBudget`: tpm counted as the server counts it, configured,
  stated in the headers, or learned from bare 429s (`_tokens.LearnedTokens`:
  refusals only a usage-metered token bucket explains, or a server still in
  debt after a 429's pause, mean the limit is on tokens);
- `_fit.Fits`: every bucket that explains the run's answers; its bounds
  narrow the learners' brackets, and its likely ranges (a whole-number
  request burst, a token bucket sized as a window) set their goals.

`RateLimiter` ties them to a `Clock`. On a rate 429 every sender pauses
together until the server's hint (plus a small margin) or, without a hint,
one request's time at the slowest rate the endpoint may allow (the floor,
or half the lowered pace), doubled while the endpoint keeps refusing
(at most ``max_quiet_s``); then a single request probes, and the rest
follow at the pace once it succeeds, so no herd is released at once. An
endpoint that has answered nothing but 429 for ``patience_s`` is stalled:
`acquire` raises `Stalled` instead of queueing more requests.

aiolimiter's leaky bucket cannot refund a reservation and reads the loop's
own clock; the buckets here are small and take their time from a `Clock`,
so tests run in virtual time.
"""

from __future__ import annotations

import math
from typing import Literal

import anyio
import msgspec

from ..retry import Clock
from ._fit import Fits, Region
from ._hints import RateHeaders, pause_for
from ._pace import CLOSE, HINT_MARGIN, Pace, RateLearner
from ._parallel import ParallelCap
from ._tokens import TOKEN_WINDOWS_S, Ask, LearnedTokens, TokenBudget, TpmCounts

PAUSE_MARGIN = (0.02, 0.02)
"""A server's pause is extended by 20 ms plus 2%, so a probe does not land early."""
ADMITTED_AFTER_S = 0.02
"""A request in flight longer than this (and than twice the slowest 429
seen) has been admitted by the server."""
PROBE_GAP_S = 0.1
"""Unpaced, a new parallelism is tried this long after the last send."""
FIRST_QUIET_S = 0.1
"""A hint-less 429 with no pace yet pauses this long first (then doubles)."""
DEEP = 0.9
"""A request bucket fit whose feasible depths reach this share of the
deepest possible explains the refusals only as everything served so far
being a burst (a fixed window used up, or tokens in debt): its bounds
would drag the pace to nothing, and are not used."""
FIT_MIN_S = 0.2
"""A bare 429 refits the bucket at most this often (a fit of hundreds of
answers takes milliseconds on the event loop), unless it is the probe's."""
REFIT_S = 2.0
"""While the bracket is open, the bucket is fitted again this often (the
admissions since rule out deep buckets, and with them high rates)."""
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
    tokens: int = 0
    """Tokens reserved or charged for it."""
    n: int = 1
    probe: bool = False
    first: bool = False
    """The first request sent after the last rate 429 came back."""


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
        self.learned = LearnedTokens()
        self.fits = Fits(now)
        self.fitted_at: float | None = None
        """When the server's bucket was last fitted (None: no bare 429 yet)."""
        self.fitted: tuple[Region | None, Region | None] = (None, None)
        self.answered_429: float | None = None
        """When the last rate 429 came back."""
        self.ok_since_429 = False
        """A request sent after it has succeeded."""
        self.sent_since_429 = True
        """A request has been sent since it."""
        # Slow start only when nothing says how fast to go.
        self.parallel = ParallelCap(max_concurrency, slow_start=not rpm)
        self.patience_s = patience_s
        self.max_quiet_s = max_quiet_s
        self.in_flight = 0
        self.paused_until = -math.inf
        self.quiet_s = 0.0
        self.probing = False
        self.probe_out = False
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
            self._grow(now)
            if self.in_flight >= self.parallel.allowed or (self.probing and self.probe_out):
                admitted_in = self._until_admitted(now)
                if admitted_in is None:
                    await self._changed.wait()
                else:
                    await self.clock.wait(self._changed, admitted_in)
                continue
            if self.tokens is not None and (tpm := self.learned.rate_tpm(now)):
                self.tokens.set_tpm(tpm, now)
            cost = self.tokens.cost(ask) if self.tokens is not None else 0
            wait = max(
                self.paused_until - now,
                self.pace.wait_s(now, self.parallel.allowed, self._admitted_after_s()),
                self._probe_wait(now),
                self.learned.gap_s(self.pace.sent[-1], now) if self.pace.sent else 0.0,
            )
            if self.tokens is not None:
                wait = max(wait, self.tokens.wait_s(cost, now))
            if wait > EPSILON_S:
                await self.clock.wait(self._changed, wait)
                continue
            self.pace.take(now)
            self.learned.last_cost = cost
            if self.tokens is not None:
                self.tokens.take(cost, now)
            self.in_flight += 1
            probe = self.probing
            self.probe_out = self.probe_out or probe
            first, self.sent_since_429 = not self.sent_since_429, True
            self._ids += 1
            permit = Permit(
                id=self._ids,
                started_at=now,
                parallel=self.in_flight,
                tokens=cost,
                n=ask.n,
                probe=probe,
                first=first,
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
        if outcome == "throttled":
            self._unslot(permit)
        if permit.probe:
            self.probe_out = False
        self._read_limits(hints, now, now - permit.started_at)
        verdict: Throttle | None = None
        if outcome == "ok":
            self.fits.answered(permit.started_at, now, "ok", used_tokens)
            self._on_success(permit, now, used_tokens, completion_tokens)
        elif outcome == "throttled":
            verdict = self._on_429(permit, now, hints)
        else:
            self.fits.answered(permit.started_at, now, "failed", None)
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
        self.pace.on_success(permit.started_at, now)
        if used is not None:
            self.learned.used(now, used)
            if self.learned.learner is not None:
                self.learned.learner.on_success(permit.started_at, now, used, taken_at=now)
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
        if self.answered_429 is not None and permit.started_at >= self.answered_429:
            self.ok_since_429 = True
            self.learned.confirm(self.tokens)
        if self.fitted_at is not None and now - self.fitted_at >= REFIT_S and self._open():
            self._refit(now)

    def _open(self) -> bool:
        """The learned bracket is still wide enough to probe in (learned
        tokens always: their goal follows the likely range's rising low end)."""
        top, floor = self.pace.learner.top, self.pace.learner.floor
        closed = top is not None and floor is not None and floor >= CLOSE * top
        return self.learned.learner is not None or not closed

    def _refit(self, now: float, *, fresh: bool = False) -> tuple[Region | None, Region | None]:
        """Fit the server's bucket again (at most every FIT_MIN_S unless
        ``fresh``: a fit of hundreds of answers takes milliseconds on the
        event loop) and narrow the learner's bracket to it."""
        if fresh or self.fitted_at is None or now - self.fitted_at >= FIT_MIN_S:
            self.fitted = self.fits.read([p.started_at for p in self.out.values()])
            self.fitted_at = now
        requests, usage = self.fitted
        if self.learned.learner is not None:
            if usage is not None:
                self.learned.learner.bound(usage.lo, usage.hi, usage.windowed(TOKEN_WINDOWS_S))
        elif requests is not None and requests.depth < DEEP:
            self.pace.learner.bound(requests.lo, requests.hi, requests.whole())
        return requests, usage

    def _on_429(self, permit: Permit, now: float, hints: RateHeaders) -> Throttle:
        self.refusal_rtt_s = max(self.refusal_rtt_s, now - permit.started_at)
        if self.tokens is not None:
            self.tokens.refused(permit.tokens, now)
        if self.parallel.is_parallel_429(permit.parallel, self._admitted(now), hints):
            paced = self.pace.rate(permit.started_at) is not None
            self.parallel.on_parallel_429(permit.parallel, permit.started_at, now, paced=paced)
            return "concurrency"
        self.fits.answered(permit.started_at, now, "refused", None)
        lowered = self._rate_429(permit, now, hints)
        self.answered_429, self.ok_since_429, self.sent_since_429 = now, False, False
        self.parallel.on_rate_429(paced=self.pace.rate(now) is not None)
        if self.refused_since is None:
            self.refused_since = now
        hinted = pause_for(hints, throttled=True)
        if hinted is not None:
            pause = hinted * (1.0 + PAUSE_MARGIN[1]) + PAUSE_MARGIN[0]
        else:
            interval = self.pace.refill_s(now) or self.learned.refill_s(now) or FIRST_QUIET_S
            interval = min(interval, self.max_quiet_s)
            if lowered or not self.quiet_s:
                self.quiet_s = interval
            elif permit.probe:  # refused again: wait longer before the next probe
                self.quiet_s = min(2.0 * self.quiet_s, max(self.max_quiet_s, interval))
            pause = self.quiet_s
        self.paused_until = max(self.paused_until, now + min(pause, self.patience_s))
        self.probing = True
        return "rate"

    def _rate_429(self, permit: Permit, now: float, hints: RateHeaders) -> bool:
        """Lower the request pace, or the token rate once the bare 429s
        show the limit is on tokens; returns whether lowered. A bare 429
        also refits the server's bucket (`_fit.Fits`): its bounds narrow
        the learner's bracket, and refusals that no request bucket explains,
        while a usage-metered one does, switch the pacing to tokens."""
        learned = self.learned
        sent_at = permit.started_at
        alone = self.refused_alone(permit)
        if learned.requests is not None and alone and not learned.confirmed:
            # Refused alone again after the debt was waited out: the debt was
            # deeper than reckoned (the token pace is lowered below), or, the
            # second time, there is none (a window used up, say): back to
            # requests.
            if learned.doubted:
                self.pace.learner, self.tokens = learned.undo(), None
                for p in self.out.values():
                    p.tokens = 0
            learned.doubted = True
        if learned.learner is not None:
            paced = learned.learner.rate(sent_at)
            served = learned.served(now) or 0.0
            lowered = learned.learner.on_throttle(sent_at, now, paced, served)
            # Refit at once: the climb back (1 s) would reach the refused pace
            # before a refit due in REFIT_S, and the range tells it where to stop.
            if not hints.any:
                usage = self._refit(now, fresh=True)[1]
                if self.tokens is not None:
                    learned.sync(self.tokens, usage, self.fits.usage, sent_at, now)
            return lowered
        lowered = self.pace.on_throttle(sent_at, now)
        if hints.any:
            return lowered
        requests, usage = self._refit(now, fresh=alone)
        # The first request sent after the pause was refused too: the budget
        # did not come back in a request's time. With usage metered, that is
        # a token bucket in debt from the requests that were out before.
        debt = self.fits.metered and alone and not learned.refuted
        if self.tokens is None and usage is not None and (requests is None or debt):
            self.tokens = learned.begin(usage, self.fits.usage, self.pace.learner, now)
            self.pace.learner = RateLearner()  # requests are not what is limited
            self._hold_out(learned.mean() or 0.0)
            return True
        return lowered

    def refused_alone(self, permit: Permit) -> bool:
        """The first request sent after a rate 429 came back was refused
        too, and nothing sent since that 429 has succeeded."""
        return (
            permit.first
            and self.answered_429 is not None
            and permit.started_at >= self.answered_429
            and not self.ok_since_429
        )

    def _hold_out(self, each: float) -> None:
        """Requests sent before tokens were paced hold a typical charge."""
        assert self.tokens is not None
        for p in self.out.values():
            if not p.tokens:
                p.tokens = math.ceil(each)
                self.tokens.held += p.tokens

    def _unslot(self, refused: Permit) -> None:
        """A refused request never held a slot at the server, so the requests
        sent while it was out had one fewer in flight than counted: without
        this, one sent just after a refusal (before its 429 came back) and
        admitted would look like a success above a parallel cap, and the
        cap's next 429 would read as a rate limit (a 60 s pause)."""
        for other in self.out.values():
            if other.id > refused.id:
                other.parallel = max(1, other.parallel - 1)

    def _probe_wait(self, now: float) -> float:
        """A send that reaches a parallelism never seen to work (above a
        learned cap, or new in slow start) is a probe: it goes PROBE_GAP_S
        (or one interval at the pace) after the last send, never in a burst,
        so a refusal means a cap and not a short burst refused, and comes
        back before the next level is tried."""
        works = self.parallel.works
        if self.in_flight < works or not self.pace.sent:
            return 0.0
        rate = self.pace.rate(now)
        return self.pace.sent[-1] + (1.0 / rate if rate else PROBE_GAP_S) - now

    def _admitted_after_s(self) -> float:
        return max(ADMITTED_AFTER_S, 2.0 * self.refusal_rtt_s)

    def _admitted(self, now: float) -> int:
        """The most in flight when a request still running was sent, among
        those running longer than a 429 takes to come back (so admitted)."""
        after = self._admitted_after_s()
        level = max(
            (p.parallel for p in self.out.values() if now - p.started_at > after), default=0
        )
        self.parallel.saw_admitted(level)
        return level

    def _grow(self, now: float) -> None:
        self._admitted(now)
        if self.parallel.slow_start:
            after = self._admitted_after_s()
            self.parallel.on_admitted(sum(now - p.started_at > after for p in self.out.values()))

    def _until_admitted(self, now: float) -> float | None:
        """In slow start, when the next request in flight counts as admitted."""
        if not self.parallel.slow_start or self.parallel.peak_ok == 0:
            return None
        after = self._admitted_after_s()
        ages = [now - p.started_at for p in self.out.values() if now - p.started_at <= after]
        return after - max(ages) + EPSILON_S if ages else None

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
