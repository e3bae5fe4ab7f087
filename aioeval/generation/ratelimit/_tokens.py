"""Token budgets: tokens per minute, counted the way the server counts them
(pure: every method takes the time).

``max_tokens`` (OpenAI): a request is charged the larger of its prompt
estimate and ``max_tokens`` x n when sent, never refunded. ``usage``
(gateways that meter usage): it holds a reservation while in flight (prompt
plus the completion length seen so far) and is charged its reported usage
when it returns.
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

import msgspec

CHARS_PER_TOKEN = 4
"""Prompt tokens are estimated as characters / 4 (rounded up) for reservations."""
TOKEN_BURST_S = 1.0
"""A token budget holds one second of tpm: servers allow at least that burst
(OpenAI a minute's worth), so the client never bursts past them."""

TpmCounts = Literal["max_tokens", "usage"]


class Sent(Protocol):
    """A request as the budget settles it (the limiter's permit)."""

    started_at: float
    tokens: int
    n: int


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """What one request may cost in tokens."""

    prompt: int
    """Prompt tokens, estimated from its length."""
    max_tokens: int
    """Completion cap per sample."""
    n: int = 1


class Bucket:
    """A token bucket refilled continuously at ``rate`` per second up to
    ``capacity``; its level may go negative (debt) when more is taken than
    it holds."""

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError("bucket rate and capacity must be > 0")
        self.rate, self.capacity = rate, capacity
        self.level, self.updated = capacity, now

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
            self.updated = now

    def wait_s(self, amount: float, now: float, held: float = 0.0) -> float:
        """Seconds until ``amount`` can be taken with ``held`` set aside
        (amounts above capacity need a full bucket and leave debt)."""
        self.refill(now)
        need = min(amount, self.capacity) + held
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float, now: float) -> None:
        """Take an amount (negative: give it back), never filling above capacity."""
        self.refill(now)
        self.level = min(self.capacity, self.level - amount)


class TokenBudget:
    """Tokens per minute, counted the way the server counts them."""

    def __init__(self, tpm: float, counts: TpmCounts, now: float, *, hinted: bool = False) -> None:
        self.counts = counts
        self.hinted = hinted  # read from the headers, not configured
        self.bucket = Bucket(tpm / 60.0, max(tpm / 60.0 * TOKEN_BURST_S, 1.0), now)
        self.held = 0.0  # reservations of requests in flight (usage counting)
        self.per_sample: float | None = None  # mean completion tokens per sample so far
        self.latency_s = 0.0
        """Mean time a request is in flight."""

    def sync(self, remaining: int, now: float, age_s: float) -> None:
        """The server said ``remaining`` were left at most ``age_s`` ago:
        never assume more than that plus the refill since."""
        self.bucket.refill(now)
        self.bucket.level = min(self.bucket.level, remaining + self.bucket.rate * age_s)

    def cost(self, ask: Ask) -> int:
        if self.counts == "max_tokens":
            return max(ask.prompt, ask.max_tokens * ask.n)
        expected = ask.max_tokens if self.per_sample is None else self.per_sample
        return ask.prompt + math.ceil(min(float(ask.max_tokens), expected) * ask.n)

    def wait_s(self, cost: int, now: float) -> float:
        """Usage counting: what is in flight is charged when it returns, and
        a latency's refill is credited against it (else long generations
        could never have the rate's worth of tokens in flight)."""
        credit = self.bucket.rate * self.latency_s
        return self.bucket.wait_s(cost, now, held=max(0.0, self.held - credit))

    def take(self, cost: int, now: float) -> None:
        if self.counts == "max_tokens":
            self.bucket.take(cost, now)
        else:
            self.held += cost

    def settle(self, sent: Sent, now: float, *, used: int | None, completion: int | None) -> None:
        """The request came back, having used ``used`` tokens (None: unknown)."""
        if self.counts == "max_tokens":
            return  # charged when sent, never refunded
        took_s = now - sent.started_at
        self.latency_s = took_s if not self.latency_s else 0.8 * self.latency_s + 0.2 * took_s
        self.held -= sent.tokens
        self.bucket.take(sent.tokens if used is None else used, now)
        if completion is not None and sent.n > 0:
            seen = completion / sent.n
            self.per_sample = (
                seen if self.per_sample is None else 0.8 * self.per_sample + 0.2 * seen
            )

    def refused(self, cost: int, now: float) -> None:
        """A 429: the request was not charged."""
        if self.counts == "max_tokens":
            self.bucket.take(-cost, now)
        else:
            self.held -= cost

    def failed(self, cost: int, now: float) -> None:
        """The request failed otherwise: assume it was charged in full."""
        if self.counts == "usage":
            self.held -= cost
            self.bucket.take(cost, now)
