"""What a response's rate-limit hints (`RateHeaders`, read by
``..ratehints``) say about now: how long everyone holds off (pure)."""

from __future__ import annotations

from ..ratehints import RateHeaders


def exhausted_reset_s(hints: RateHeaders) -> float | None:
    """How long until a budget that reached zero allows one more request
    (None: none did): a reset means until the whole budget is back (OpenAI),
    so one request's share of it when the limit is known."""
    waits = [
        b.reset_s / b.limit if b.limit else b.reset_s
        for b in (*hints.requests, *hints.tokens)
        if b.remaining == 0 and b.reset_s
    ]
    return max(waits) if waits else None


def pause_for(hints: RateHeaders, throttled: bool) -> float | None:
    """How long everyone holds off after a response: a 429's Retry-After,
    else until an exhausted budget allows a request. The reset of a budget
    not exhausted says nothing about now (OpenAI's may read ``6m0s`` while
    plenty remain)."""
    if throttled and hints.retry_after_s is not None:
        return hints.retry_after_s
    return exhausted_reset_s(hints)
