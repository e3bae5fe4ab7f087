"""Reading rate-limit headers in every dialect real servers use (pure)."""

from __future__ import annotations

import email.utils

import pytest
from multidict import CIMultiDict

from aioeval.generation.ratehints import (
    Budget,
    RateHeaders,
    parse_duration,
    parse_retry_after,
    read_headers,
)
from aioeval.generation.ratelimit._hints import exhausted_reset_s, pause_for

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1", 1.0),
        ("0.25", 0.25),
        ("20ms", 0.02),
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("1m30.5s", 90.5),
        ("", None),
        ("soon", None),
        ("-3", None),
        ("5x", None),
        ("1s junk", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    got = parse_duration(text)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_as_http_date() -> None:
    date = email.utils.formatdate(NOW + 30, usegmt=True)
    assert parse_retry_after(date, NOW) == pytest.approx(30.0)
    past = email.utils.formatdate(NOW - 30, usegmt=True)
    assert parse_retry_after(past, NOW) == 0.0
    assert parse_retry_after("7", NOW) == 7.0
    assert parse_retry_after("Someday, never", NOW) is None


def test_openai_headers_case_insensitive_and_ms_preferred() -> None:
    h = CIMultiDict(
        {
            "Retry-After": "2",
            "retry-after-ms": "150",
            "X-RateLimit-Limit-Requests": "600",
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-reset-requests": "50ms",
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "1234",
            "x-ratelimit-reset-tokens": "6m0s",
        }
    )
    hints = read_headers(h, NOW)
    assert hints.retry_after_s == pytest.approx(0.15)
    assert hints.requests == (Budget(limit=600, remaining=0, reset_s=pytest.approx(0.05)),)
    assert hints.tokens == (Budget(limit=150000, remaining=1234, reset_s=360.0),)
    assert (hints.least("limit", "requests"), hints.least("remaining", "requests")) == (600, 0)
    assert (hints.least("limit", "tokens"), hints.least("remaining", "tokens")) == (150000, 1234)
    bad = read_headers(
        CIMultiDict({"retry-after": "later", "x-ratelimit-remaining-requests": "x"}), NOW
    )
    assert bad == RateHeaders() and not bad.any


def test_gateway_prefixed_and_per_key_families_tightest_wins() -> None:
    h = CIMultiDict(
        {
            "x-ratelimit-limit-requests": "240",
            "x-ratelimit-remaining-requests": "17",
            "x-ratelimit-api_key-limit-requests": "120",
            "x-ratelimit-api_key-remaining-requests": "5",
            "x-ratelimit-team-west-remaining-requests": "9",
            "llm_provider-x-ratelimit-limit-requests": "10000",
            "llm_provider-x-ratelimit-remaining-requests": "9999",
            "llm_provider-x-ratelimit-remaining-tokens": "400",
            "x-ratelimit-reset-requests": str(NOW + 12),  # a Unix time
            "x-not-a-limit": "1",
        }
    )
    hints = read_headers(h, NOW)
    assert len(hints.requests) == 4 and len(hints.tokens) == 1
    assert hints.least("limit", "requests") == 120
    assert hints.least("remaining", "requests") == 5
    assert hints.least("remaining", "tokens") == 400
    plain = next(b for b in hints.requests if b.limit == 240)
    assert plain.reset_s == pytest.approx(12.0)


def test_llm_provider_retry_after_is_read() -> None:
    assert read_headers(CIMultiDict({"llm_provider-retry-after": "60"}), NOW).retry_after_s == 60
    both = CIMultiDict({"retry-after": "3", "llm_provider-retry-after": "60"})
    assert read_headers(both, NOW).retry_after_s == 3.0


@pytest.mark.parametrize(
    ("hints", "throttled", "pause"),
    [
        (RateHeaders(), False, None),
        (RateHeaders(), True, None),
        (RateHeaders(retry_after_s=2.0), True, 2.0),
        (RateHeaders(retry_after_s=2.0), False, None),
        (RateHeaders(requests=(Budget(remaining=3, reset_s=1.0),)), False, None),
        # an exhausted budget without a limit: its whole reset
        (RateHeaders(requests=(Budget(remaining=0, reset_s=1.0),)), False, 1.0),
        # with the limit, the reset is until the whole budget is back: one request's share
        (RateHeaders(requests=(Budget(limit=10, remaining=0, reset_s=1.0),)), False, 0.1),
        (
            RateHeaders(
                requests=(Budget(remaining=0, reset_s=1.0),),
                tokens=(Budget(remaining=0, reset_s=4.0),),
            ),
            False,
            4.0,
        ),
        # a 429 with budgets that are not exhausted says nothing about when
        (RateHeaders(requests=(Budget(remaining=5, reset_s=0.5),)), True, None),
        (
            RateHeaders(retry_after_s=1.0, requests=(Budget(remaining=0, reset_s=9),)),
            True,
            1.0,
        ),
    ],
)
def test_pause_for(hints: RateHeaders, throttled: bool, pause: float | None) -> None:
    assert pause_for(hints, throttled) == (pytest.approx(pause) if pause is not None else None)


def test_exhausted_reset() -> None:
    assert exhausted_reset_s(RateHeaders(tokens=(Budget(remaining=1, reset_s=3),))) is None
    assert exhausted_reset_s(RateHeaders(tokens=(Budget(remaining=0, reset_s=3),))) == 3
