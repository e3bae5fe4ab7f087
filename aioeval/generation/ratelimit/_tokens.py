"""Token budgets: tokens per minute, counted the way the server counts them.

``tpm_counts: max_tokens`` (OpenAI): each request is charged the larger of
its prompt estimate and ``max_tokens`` x n when sent, and nothing is
refunded. ``usage`` (gateways that meter usage): a request holds a
reservation while in flight (its prompt estimate plus the completion length
seen so far) and is charged its reported usage when it returns; the
limiter wakes waiting requests as soon as a reservation comes back. A
``limit-tokens`` header, with no tpm configured, becomes a usage budget of
its own, kept no fuller than the ``remaining-tokens`` the server reports.
Pure arithmetic: every method takes the time.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

import msgspec

from ._bucket import Bucket
from ._fit import BucketFit, Region
from ._pace import UNPACED_BACKOFF, RateLearner

CHARS_PER_TOKEN = 4
"""Prompt tokens are estimated as characters / 4 (rounded up) for reservations."""
TOKEN_BURST_S = 1.0
"""A token budget holds one second of tpm: servers allow at least that burst
(OpenAI a minute's worth), so the client never bursts past them."""

TpmCounts = Literal["max_tokens", "usage"]


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """What one request may cost in tokens."""

    prompt: int
    """Prompt tokens, estimated from its length."""
    max_tokens: int
    """Completion cap per sample."""
    n: int = 1


class TokenBudget:
    """Tokens per minute, counted the way the server counts them."""

    def __init__(self, tpm: float, counts: TpmCounts, now: float, *, hinted: bool = False) -> None:
        self.counts = counts
        self.hinted = hinted
        """Read from the headers, not configured."""
        self.bucket = Bucket(tpm / 60.0, max(tpm / 60.0 * TOKEN_BURST_S, 1.0), now)
        self.held = 0.0
        """Reservations of requests in flight (usage counting)."""
        self.per_sample: float | None = None
        """Mean completion tokens per sample seen so far."""
        self.latency_s = 0.0
        """Mean time a request is in flight."""
        self.credit = True
        """Credit in-flight reservations with a latency's refill (`wait_s`)."""
        self.positive = False
        """Send once the level, less what is held, is one token (see `wait_s`)."""

    def set_tpm(self, tpm: float, now: float) -> None:
        self.bucket.refill(now)
        self.bucket.rate = tpm / 60.0
        self.bucket.capacity = max(tpm / 60.0 * TOKEN_BURST_S, 1.0)

    def sync(self, remaining: int, now: float, age_s: float) -> None:
        """The server said only ``remaining`` were left, at most ``age_s``
        ago (servers may count when a request arrives): never assume more
        than that plus the refill since."""
        self.bucket.refill(now)
        self.bucket.level = min(self.bucket.level, remaining + self.bucket.rate * age_s)

    def cost(self, ask: Ask) -> int:
        if self.counts == "max_tokens":
            return max(ask.prompt, ask.max_tokens * ask.n)
        expected = ask.max_tokens if self.per_sample is None else self.per_sample
        return ask.prompt + math.ceil(min(float(ask.max_tokens), expected) * ask.n)

    def wait_s(self, cost: int, now: float) -> float:
        """Usage counting: what requests in flight hold is charged only when
        they return, and the bucket refills meanwhile, so a typical
        latency's refill is credited against it (else long generations
        could never have the rate's worth of tokens in flight).

        ``positive`` (`LearnedTokens.confirm`): a usage-metered server
        admits a request while its level is positive, and a budget that
        refills no faster than the server, charged the same usage at the
        same time, never holds more than it does; so a request waits for
        the level, less what is held, to reach one token, not its own cost.
        Reserving the cost let the budget sit at its cap while requests
        were in flight, under the learned rate. After a refusal the learned
        rate may be the faster one, and sending on one token put the server
        deeper in debt (a 4th 429 in the virtual-time model)."""
        credit = self.bucket.rate * self.latency_s if self.credit else 0.0
        need = 1 if self.positive else cost
        return self.bucket.wait_s(need, now, held=max(0.0, self.held - credit))

    def take(self, cost: int, now: float) -> None:
        if self.counts == "max_tokens":
            self.bucket.take(cost, now)
        else:
            self.held += cost

    def settle(
        self,
        cost: int,
        now: float,
        *,
        used: int | None,
        completion: int | None,
        n: int,
        took_s: float = 0.0,
    ) -> None:
        """The request returned after ``took_s``: ``used`` tokens by its
        usage (None: unknown)."""
        if self.counts == "max_tokens":
            return  # charged when sent, never refunded
        self.latency_s = took_s if not self.latency_s else 0.8 * self.latency_s + 0.2 * took_s
        self.held -= cost
        self.bucket.take(cost if used is None else used, now)
        if completion is not None and n > 0:
            seen = completion / n
            self.per_sample = (
                seen if self.per_sample is None else 0.8 * self.per_sample + 0.2 * seen
            )

    def refused(self, cost: int, now: float) -> None:
        """The server refused the request (429): it was not charged, and
        requests wait for their cost again (see `wait_s`)."""
        self.positive = False
        if self.counts == "max_tokens":
            self.bucket.give(cost, now)
        else:
            self.held -= cost

    def failed(self, cost: int, now: float) -> None:
        """The request failed otherwise: assume it was charged in full."""
        if self.counts == "usage":
            self.held -= cost
            self.bucket.take(cost, now)


USAGE_WINDOW_S = 10.0
"""The token rate served is measured over this window of answers."""
TOKEN_WINDOW_S = 1.0
"""A token bucket learned from bare 429s is first taken to hold this much
of its rate (`_fit.Region.sized`)."""
DEBT_SHARE = UNPACED_BACKOFF
"""After the switch to tokens, the server's debt is reckoned repaid at this
share of the fitted rate (at BACKOFF, 0.7, the first probe waited about a
second longer than the debt needed: 0.955 of the limit on average in the
virtual-time model, 0.961 at 0.9, and at 1.0 a probe was refused)."""
DEBT_TOP_SHARE = 0.65
"""...and at no less than this share of the greatest rate a bucket of
TOKEN_WINDOW_S allows. The refusal that made the switch met at most the
debt the requests then in flight added, so that rate was at most 1.58x
the limit, while the admissions before it bound the rate only loosely from
below (down to 0.38x; virtual-time model, 32 seeds): with a wide range the
middle that `Region.sized` picks reckoned the debt too slowly, and the
first probe waited up to 2.4 s after the server's bucket was positive."""
TOKEN_WINDOWS_S = (1.0, 60.0)
"""Windows a server sizes its token bucket as (`_fit.Region.windowed`):
the rates a fit allows for one of them are the learner's likely range."""
CLOSE_TOKENS = 0.85
"""`RateLearner.close` for learned tokens: a refused token pace overshoots
the limit by more than a request pace does (a deep bucket drains slowly),
so a bracket this close is as good as the request learner's at CLOSE."""
APPROACH_TOKENS_S = 1.0
"""`RateLearner.approach_s` for learned tokens: a climb that starts at the
likely range's low end gains by closing in on its goal faster (virtual-time
model, 16 seeds: mean 0.970 of the limit at 1 s, 0.967 at APPROACH_S; at
0.25 s a 4th 429 appeared)."""
TOKEN_SPREAD = 2.0
"""Learned token pacing spaces requests at this many times the learned
token rate (`LearnedTokens.gap_s`)."""


class LearnedTokens:
    """A token rate learned from bare 429s, for a server that limits tokens
    and says nothing (issue 14: paced by requests, a usage-metered tpm limit
    refused whenever a few long prompts came together, and a start faster
    than the limit put it in debt, refusing every probe until repaid).

    The limiter reads the limit as tokens when refusals no request bucket
    explains while a usage-metered one does, or when the first request sent
    after a 429's pause is refused too with usage metered (a budget that did
    not come back in a request's time: debt). `begin` then starts a usage
    budget at a bucket the answers allow, at the level that bucket would
    hold now, and a `RateLearner` in tokens per second; a reading on debt
    that the next two probes refute as well is undone (`undo`): a window
    used up refuses every probe, a debt reckoned a little short one."""

    def __init__(self) -> None:
        self.usage: deque[tuple[float, int]] = deque(maxlen=4096)
        """(answered at, tokens used) of successes that reported usage."""
        self.learner: RateLearner | None = None
        self.requests: RateLearner | None = None
        """The request learner, kept while a reading on debt is unconfirmed."""
        self.confirmed = False
        """A request sent after the reading succeeded: it stands."""
        self.refuted = False
        """A reading on debt was undone: no second one."""
        self.doubted = False
        """A probe after the debt was waited out was refused: one more undoes it."""
        self.last_cost = 0
        """Tokens reserved for the last request sent (set by the limiter)."""

    def used(self, now: float, tokens: int) -> None:
        self.usage.append((now, tokens))

    def served(self, now: float) -> float | None:
        """Tokens used per second over the window (None: too few answers)."""
        if len(self.usage) < 4:
            return None
        span = min(USAGE_WINDOW_S, now - self.usage[0][0])
        if span <= 0:
            return None
        return sum(n for at, n in self.usage if now - at <= span) / span

    def mean(self) -> float | None:
        return sum(n for _, n in self.usage) / len(self.usage) if self.usage else None

    def begin(
        self, usage: Region, fit: BucketFit, requests: RateLearner, now: float
    ) -> TokenBudget:
        """Pace tokens from now on: a start under the rate of a feasible
        bucket sized as TOKEN_WINDOW_S of it (growth slows past that rate),
        or at the likely range's low end when the fit has one already, and
        a budget that holds no more than that bucket would hold now
        (reckoned at a lower rate still, DEBT_SHARE, or DEBT_TOP_SHARE of
        the top: the first probe after the debt is repaid must not be
        refused too, which would undo the reading)."""
        rate, burst = usage.sized(TOKEN_WINDOW_S)
        window = usage.windowed((TOKEN_WINDOW_S,))
        if window is not None and DEBT_TOP_SHARE * window[1] > DEBT_SHARE * rate:
            rate = DEBT_TOP_SHARE * window[1] / DEBT_SHARE
            burst = rate * TOKEN_WINDOW_S
        learner = RateLearner(close=CLOSE_TOKENS, approach_s=APPROACH_TOKENS_S, from_likely=True)
        learner.begin(UNPACED_BACKOFF * rate, now, guess=rate)
        learner.bound(usage.lo, usage.hi, usage.windowed(TOKEN_WINDOWS_S))
        assert learner.start is not None
        self.learner, self.requests, self.confirmed = learner, requests, False
        self.doubted = False
        budget = TokenBudget(learner.start * 60.0, "usage", now)
        budget.credit = False  # a server in debt refuses: keep clear of it
        budget.bucket.level = min(budget.bucket.level, fit.level(now, DEBT_SHARE * rate, burst))
        return budget

    def confirm(self, budget: TokenBudget | None) -> None:
        """A request sent after the last 429 succeeded: the reading stands,
        and while the likely range is narrow and no pace was refused, the
        budget sends on one token (`TokenBudget.wait_s`)."""
        self.confirmed = True
        if budget is not None and self.learner is not None:
            budget.positive = self.learner.untested_narrow()

    def undo(self) -> RateLearner:
        """Give up the reading on debt: the request learner to pace by again."""
        assert self.requests is not None
        requests, self.requests = self.requests, None
        self.learner, self.refuted = None, True
        return requests

    def sync(
        self,
        budget: TokenBudget,
        usage: Region | None,
        fit: BucketFit,
        refused_at: float,
        now: float,
    ) -> None:
        """After a 429, the budget holds no more than the server's bucket
        can: under one token when the request sent at ``refused_at`` was
        refused, plus the learned rate's refill since, less what was charged
        since (the requests then out are charged as they settle); and no
        more than the fitted bucket would at that rate. Held to the fit
        alone, a budget of 157 tokens sent the first request after the
        pause while the server was 10 in debt (virtual-time model)."""
        rate = self.learner.rate(now) if self.learner is not None else None
        if not rate:
            return
        budget.bucket.refill(now)
        charged = sum(n for at, n in self.usage if at > refused_at)
        level = 1.0 + rate * max(0.0, now - refused_at) - charged
        if usage is not None:
            level = min(level, fit.level(now, rate, usage.sized(TOKEN_WINDOW_S)[1]))
        budget.bucket.level = min(budget.bucket.level, level)

    def gap_s(self, last_sent: float, now: float) -> float:
        """Learned tokens are paced one request at a time, the next one
        ``last_cost`` (the last request's tokens; a typical request's when
        unknown) at TOKEN_SPREAD times the learned rate after the last: a
        budget that filled while everyone waited would otherwise let a crowd
        go at once, and a server still in debt refuses each of them. Spaced
        by a typical request instead, the small requests the budget lets go
        first (they fit it soonest) went at 0.4 of the limit while the
        server's bucket sat full (virtual-time model, seed 18)."""
        rate = self.learner.rate(now) if self.learner is not None else None
        cost = self.last_cost or self.mean()
        if not rate or not cost:
            return 0.0
        return last_sent + cost / (TOKEN_SPREAD * rate) - now

    def rate_tpm(self, now: float) -> float | None:
        rate = None if self.learner is None else self.learner.rate(now)
        return None if rate is None else rate * 60.0

    def refill_s(self, now: float) -> float | None:
        """A typical request's tokens at the learned rate."""
        rate = None if self.learner is None else self.learner.rate(now)
        mean = self.mean()
        return mean / rate if rate and mean else None
