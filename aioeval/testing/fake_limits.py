"""The limits the fake OpenAI server enforces, and the headers it reports
them in. Kept apart from the HTTP side: this part decides, the server
answers. Nothing here comes from the engine's limiter (a fake that
borrowed the client's own arithmetic would agree with it by construction).

Header dialects (``Dialect``):

    openai       ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` on
                 every answer (remaining after this request, reset until the
                 budget is whole again); 429s add ``Retry-After`` and
                 ``retry-after-ms``
    gateway      ``x-ratelimit-limit-*`` and ``x-ratelimit-remaining-*``
                 counted before this request (never 0 on a success), no
                 reset, the same under the per-key names
                 ``x-ratelimit-api_key-*``, and a looser upstream limit as
                 ``llm_provider-x-ratelimit-*``; a 429 carries only
                 ``llm_provider-retry-after`` (whole seconds)
    retry-after  nothing on successes; a 429 says ``Retry-After`` (whole
                 seconds until the budget allows one more request: the end
                 of a fixed window)
    liar         ``x-ratelimit-remaining-*`` of ``-1`` or ``0`` on successes
                 (as some hosted APIs send whatever is left), bare 429s
    none         no rate headers at all, 429s included (an upstream 429
                 passed through)

A shared key (``others_rpm``): another client takes requests from the same
request budget at random times, in bursts of one to five requests spaced
exponentially, ``others_rpm`` a minute on average (what the budget lets
it have: its refused requests are not retried).
"""

from __future__ import annotations

import math
import random
from typing import Literal

import msgspec

Dialect = Literal["openai", "gateway", "retry-after", "liar", "none"]

OTHERS_BURST = (1, 5)
"""The other client on a shared key sends bursts of this many requests."""


class ServerBucket:
    """A server's token bucket: holds up to ``capacity``, refills at
    ``rate`` a second; a charge larger than what is held leaves the level
    negative (debt)."""

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate, self.capacity = rate, capacity
        self.level, self.updated = capacity, now

    def refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.updated)
        self.level = min(self.capacity, self.level + elapsed * self.rate)
        self.updated = max(self.updated, now)

    def wait_s(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` (at most a full bucket) is held."""
        self.refill(now)
        short = min(amount, self.capacity) - self.level
        return max(0.0, short / self.rate)

    def take(self, amount: float, now: float) -> None:
        self.refill(now)
        self.level -= amount


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """A 429 to send: its message, headers, and whether the parallel cap said no."""

    message: str
    headers: dict[str, str]
    parallel: bool = False


class Window:
    """A fixed-window counter: ``rpm`` per minute, counted in windows of ``length`` s."""

    def __init__(self, rpm: float, length: float, now: float) -> None:
        self.limit = int(rpm * length / 60.0)
        self.length = length
        self.start: float | None = None
        """The first window opens at the first request (so a client's start-up
        does not decide how much of it the client gets)."""
        self.used = 0

    def roll(self, now: float) -> float:
        """The current window's start."""
        start = now if self.start is None else self.start
        if now - start >= self.length:
            start += self.length * math.floor((now - start) / self.length)
            self.used = 0
        self.start = start
        return start

    def remaining(self, now: float) -> int:
        self.roll(now)
        return max(0, self.limit - self.used)

    def reset_s(self, now: float) -> float:
        return self.roll(now) + self.length - now


class ServerLimits:
    """Requests per minute (a bucket or fixed windows), tokens per minute
    (charged on usage or on max_tokens), a parallel cap, and another client
    on the same key."""

    def __init__(
        self,
        now: float,
        *,
        rpm: float | None = None,
        burst: float | None = None,
        window_s: float | None = None,
        tpm: float | None = None,
        tpm_counts: Literal["usage", "max_tokens"] = "usage",
        tpm_burst_s: float = 1.0,
        max_parallel: int | None = None,
        parallel_retry_after_s: float = 60.0,
        dialect: Dialect = "openai",
        upstream_factor: float = 10.0,
        others_rpm: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self.tpm_counts = tpm_counts
        self.max_parallel = max_parallel
        self.parallel_retry_after_s = parallel_retry_after_s
        self.dialect = dialect
        self.upstream_factor = upstream_factor
        self.bucket: ServerBucket | None = None
        self.window: Window | None = None
        if rpm and window_s:
            self.window = Window(rpm, window_s, now)
        elif rpm:
            self.bucket = ServerBucket(rpm / 60.0, burst or max(1.0, rpm / 60.0), now)
        self.tokens: ServerBucket | None = None
        if tpm:
            self.tokens = ServerBucket(tpm / 60.0, max(1.0, tpm / 60.0 * tpm_burst_s), now)
        self.rng = random.Random(seed)
        self.others_rpm = others_rpm
        self.others_taken = 0
        """Requests the other client on the key was let through."""
        self.others_next = now + self._others_gap()

    def _others_gap(self) -> float:
        mean_burst = sum(OTHERS_BURST) / 2
        return self.rng.expovariate(self.others_rpm / 60.0 / mean_burst) if self.others_rpm else 0.0

    def _others(self, now: float) -> None:
        """The other client's bursts up to ``now``, in time order."""
        while self.others_rpm and self.others_next <= now:
            at = self.others_next
            for _ in range(self.rng.randint(*OTHERS_BURST)):
                if self.window is not None and self.window.remaining(at) >= 1:
                    self.window.used += 1
                    self.others_taken += 1
                elif self.bucket is not None and self.bucket.wait_s(1, at) <= 0:
                    self.bucket.take(1, at)
                    self.others_taken += 1
            self.others_next = at + self._others_gap()

    def admit(self, now: float, *, charge: int, in_flight: int) -> Refusal | None:
        """Check every limit for a request that may cost ``charge`` tokens;
        None lets it in (and counts it)."""
        self._others(now)
        if self.max_parallel is not None and in_flight >= self.max_parallel:
            retry_after = str(math.ceil(self.parallel_retry_after_s))
            return Refusal(
                message="max parallel requests reached",
                headers={"Retry-After": retry_after},
                parallel=True,
            )
        if self.window is not None and self.window.remaining(now) < 1:
            return self._too_many(self.window.reset_s(now), now)
        if self.bucket is not None and (wait := self.bucket.wait_s(1, now)) > 0:
            return self._too_many(wait, now)
        if self.tokens is not None:
            need = charge if self.tpm_counts == "max_tokens" else 1
            if (wait := self.tokens.wait_s(need, now)) > 0:
                return self._too_many(wait, now)
            if self.tpm_counts == "max_tokens":
                self.tokens.take(charge, now)
        if self.window is not None:
            self.window.used += 1
        if self.bucket is not None:
            self.bucket.take(1, now)
        return None

    def used(self, tokens: int, now: float) -> None:
        """A request returned having used ``tokens`` (charged when metered on usage)."""
        if self.tokens is not None and self.tpm_counts == "usage":
            self.tokens.take(tokens, now)

    def headers(self, now: float) -> dict[str, str]:
        """Headers in the configured dialect, for a request just counted."""
        out: dict[str, str] = {}
        if self.dialect in ("none", "retry-after"):
            return out
        if self.dialect == "liar":
            return {"x-ratelimit-remaining-requests": self.rng.choice(("-1", "0"))}
        for resource, budget in (("requests", self._requests(now)), ("tokens", self._tokens(now))):
            if budget is None:
                continue
            limit, reset, remaining = budget
            if self.dialect == "openai":
                out[f"x-ratelimit-limit-{resource}"] = str(limit)
                out[f"x-ratelimit-remaining-{resource}"] = str(remaining)
                out[f"x-ratelimit-reset-{resource}"] = f"{math.ceil(reset * 1000)}ms"
                continue
            shown = remaining + (resource == "requests")  # counted before this one
            up = int(limit * self.upstream_factor)
            out[f"x-ratelimit-limit-{resource}"] = str(limit)
            out[f"x-ratelimit-remaining-{resource}"] = str(shown)
            out[f"x-ratelimit-api_key-limit-{resource}"] = str(limit)
            out[f"x-ratelimit-api_key-remaining-{resource}"] = str(shown)
            out[f"llm_provider-x-ratelimit-limit-{resource}"] = str(up)
            out[f"llm_provider-x-ratelimit-remaining-{resource}"] = str(up - 1)
        return out

    def _requests(self, now: float) -> tuple[int, float, int] | None:
        """(limit per minute, seconds to a whole budget, remaining)."""
        if self.window is not None and self.rpm:
            return int(self.rpm), self.window.reset_s(now), self.window.remaining(now)
        if self.bucket is not None and self.rpm:
            return int(self.rpm), *_state(self.bucket, now)
        return None

    def _tokens(self, now: float) -> tuple[int, float, int] | None:
        if self.tokens is None or not self.tpm:
            return None
        return int(self.tpm), *_state(self.tokens, now)

    def _too_many(self, wait_s: float, now: float) -> Refusal:
        headers: dict[str, str] = {}
        if self.dialect == "openai":
            headers = {
                **self.headers(now),
                "Retry-After": str(max(1, math.ceil(wait_s))),
                "retry-after-ms": str(max(1, math.ceil(wait_s * 1000))),
            }
        elif self.dialect == "gateway":
            headers = {"llm_provider-retry-after": str(max(1, math.ceil(wait_s)))}
        elif self.dialect == "retry-after":
            headers = {"Retry-After": str(max(1, math.ceil(wait_s)))}
        return Refusal(message="rate limit exceeded", headers=headers)


def _state(bucket: ServerBucket, now: float) -> tuple[float, int]:
    bucket.refill(now)
    return (bucket.capacity - bucket.level) / bucket.rate, max(0, math.floor(bucket.level))
