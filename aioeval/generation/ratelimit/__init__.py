"""Client-side rate limiting: learn an endpoint's limits and stay just under them.

`RateLimiter` is the one object the producer talks to (``acquire`` a
permit, ``release`` it with how the request went). Behind it, each kind of
limit is a private module of pure arithmetic that takes the time as an
argument: ``_pace`` (even spacing at the lowest known request rate, and the
rate learned from 429s), ``_parallel`` (parallel caps), ``_tokens`` (tpm,
counted as the server counts it) and ``_hints`` (what response headers say
about the limits, in every dialect servers use).
"""

from __future__ import annotations

from ._bucket import Bucket
from ._hints import Budget, RateHeaders, read_headers
from ._limiter import Outcome, Permit, RateLimiter, Stalled, Throttle
from ._tokens import Ask, TpmCounts, estimate_tokens

__all__ = [
    "Ask",
    "Bucket",
    "Budget",
    "Outcome",
    "Permit",
    "RateHeaders",
    "RateLimiter",
    "Stalled",
    "Throttle",
    "TpmCounts",
    "estimate_tokens",
    "read_headers",
]
