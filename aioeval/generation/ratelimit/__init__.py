"""Client-side rate control: pace requests under an endpoint's limits,
stated or not (docs/rate-control.md).

`RateLimiter` (``_limiter``) is what the producer talks to; behind it, pure
arithmetic: ``_pace`` (the pace; the rule for a rate nobody states),
``_parallel`` (parallel caps), ``_tokens`` (tpm), ``_hints`` (what the
headers ``..ratehints`` read say about now).
"""

from __future__ import annotations

from ..ratehints import RateHeaders, read_headers
from ._limiter import Outcome, Permit, RateLimiter, Stalled, Throttle
from ._tokens import Ask, estimate_tokens

__all__ = [
    "Ask",
    "Outcome",
    "Permit",
    "RateHeaders",
    "RateLimiter",
    "Stalled",
    "Throttle",
    "estimate_tokens",
    "read_headers",
]
