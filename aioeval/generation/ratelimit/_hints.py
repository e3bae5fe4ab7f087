"""What a server's response headers say about its rate limits (pure).

Real servers spell their limits many ways, and all of them are read here:

- ``Retry-After`` (delay-seconds or an HTTP date) and ``retry-after-ms``,
  also in the ``llm_provider-`` prefixed form an LLM gateway uses to forward
  an upstream provider's headers.
- ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (OpenAI's names;
  resets in its duration format: ``1s``, ``6m0s``, ``20ms``, or a bare number
  of seconds, or a Unix time), their ``llm_provider-`` forms, and scoped
  variants such as ``x-ratelimit-api_key-remaining-requests`` (any
  ``x-ratelimit-<scope>-<field>-<resource>``).

Each distinct prefix and scope is one *family* (a key's own limit, a model's,
the upstream provider's): its three numbers are kept together as a `Budget`,
because a reset only means something next to the remaining count it belongs
to. The tightest family wins everywhere. Headers are read on successes as
well as on 429s.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Iterable, Mapping

import msgspec

UNIX_TIME_AFTER = 1_000_000_000.0
"""A reset value this large is a Unix timestamp, not a duration."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_FAMILY = re.compile(
    r"^(?P<prefix>llm_provider-)?x-ratelimit-(?:(?P<scope>[a-z0-9_.]+(?:-[a-z0-9_.]+)*?)-)?"
    r"(?P<field>limit|remaining|reset)-(?P<resource>requests|tokens)$"
)
_RETRY_AFTER_MS = ("retry-after-ms", "llm_provider-retry-after-ms")
_RETRY_AFTER = ("retry-after", "llm_provider-retry-after")


def parse_duration(value: str) -> float | None:
    """Seconds from ``"20ms"``, ``"1s"``, ``"6m0s"``, ``"1h2m3.5s"`` or a bare number."""
    value = value.strip().lower()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 and math.isfinite(seconds) else None
    pos, total = 0, 0.0
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for m in _DURATION.finditer(value):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * scale[m.group(2)]
        pos = m.end()
    return total if pos == len(value) and pos > 0 else None


def parse_retry_after(value: str, now_unix: float) -> float | None:
    """Seconds to wait from a Retry-After value: delay-seconds or an HTTP date."""
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now_unix)


def _reset_s(value: str, now_unix: float) -> float | None:
    seconds = parse_duration(value)
    if seconds is not None and seconds >= UNIX_TIME_AFTER:
        return max(0.0, seconds - now_unix)
    return seconds


def _count(value: str) -> int | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """One family's numbers for one resource (requests or tokens)."""

    limit: int | None = None
    """The family's limit; taken as per minute (rpm, tpm), as OpenAI and
    LLM gateways mean it."""
    remaining: int | None = None
    reset_s: float | None = None
    """Seconds until the budget is restored."""


class RateHeaders(msgspec.Struct, frozen=True, kw_only=True):
    """The rate-limit hints of one response."""

    retry_after_s: float | None = None
    requests: tuple[Budget, ...] = ()
    tokens: tuple[Budget, ...] = ()
    ignored: int = 0
    """Hints left unread as absurd: a wait or reset beyond `MAX_HINT_S`
    (a server asking for 10**20 seconds is broken, not throttling)."""

    @property
    def any(self) -> bool:
        return self.retry_after_s is not None or bool(self.requests or self.tokens)

    @property
    def remaining_requests(self) -> int | None:
        return _least(b.remaining for b in self.requests)

    @property
    def remaining_tokens(self) -> int | None:
        return _least(b.remaining for b in self.tokens)

    @property
    def limit_requests(self) -> int | None:
        return _least(b.limit for b in self.requests)

    @property
    def limit_tokens(self) -> int | None:
        return _least(b.limit for b in self.tokens)


def _least(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


MAX_HINT_S = 86_400.0
"""The longest wait or reset read from a header; anything longer is ignored
(and counted), never obeyed."""


def _sane(seconds: float | None) -> bool:
    return seconds is None or seconds <= MAX_HINT_S


def read_headers(headers: Mapping[str, str], now_unix: float) -> RateHeaders:
    """Extract rate hints; unknown or malformed values are ignored, absurd
    ones ignored and counted. ``headers`` must be case-insensitive
    (aiohttp's are)."""
    ignored = 0
    retry_after: float | None = None
    for name in _RETRY_AFTER_MS:
        raw = headers.get(name)
        ms = parse_duration(raw) if raw is not None else None
        if ms is not None:
            retry_after = ms / 1000.0
            break
    if retry_after is None:
        for name in _RETRY_AFTER:
            raw = headers.get(name)
            if raw is not None and (retry_after := parse_retry_after(raw, now_unix)) is not None:
                break
    if not _sane(retry_after):
        retry_after, ignored = None, ignored + 1
    families: dict[tuple[str, str, str], dict[str, int | float | None]] = {}
    for name, value in headers.items():
        m = _FAMILY.match(name.lower())
        if m is None:
            continue
        key = (m["prefix"] or "", m["scope"] or "", m["resource"])
        fields = families.setdefault(key, {})
        if m["field"] == "reset":
            reset = _reset_s(value, now_unix)
            if not _sane(reset):
                reset, ignored = None, ignored + 1
            fields["reset_s"] = reset
        else:
            fields[m["field"]] = _count(value)
    budgets: dict[str, list[Budget]] = {"requests": [], "tokens": []}
    for (_, _, resource), fields in sorted(families.items()):
        budget = msgspec.convert(fields, Budget)
        if budget != Budget():
            budgets[resource].append(budget)
    return RateHeaders(
        retry_after_s=retry_after,
        requests=tuple(budgets["requests"]),
        tokens=tuple(budgets["tokens"]),
        ignored=ignored,
    )


def exhausted_reset_s(hints: RateHeaders) -> float | None:
    """How long until a budget that reached zero allows one more request
    (None if none reached zero). With the limit known, the reset is read as
    OpenAI means it (until the whole budget is back, refilled evenly), so
    one request's share of it; without, the whole reset."""
    waits = [
        b.reset_s / b.limit if b.limit else b.reset_s
        for b in (*hints.requests, *hints.tokens)
        if b.remaining == 0 and b.reset_s
    ]
    return max(waits) if waits else None


def pause_for(hints: RateHeaders, throttled: bool) -> float | None:
    """How long every request should hold off after a response, if the
    headers say: a 429's Retry-After, else (429 or not) until an exhausted
    budget allows a request again. The reset of a budget that is not
    exhausted says nothing about now (OpenAI's token reset may read
    ``6m0s`` while plenty remain), so a 429 without either is hint-less."""
    if throttled and hints.retry_after_s is not None:
        return hints.retry_after_s
    return exhausted_reset_s(hints)
