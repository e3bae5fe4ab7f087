"""Reading a server's rate-limit headers into `RateHeaders` (pure): the
dialects the client understands; what they mean for the pace is
``ratelimit``'s business.

Read: ``Retry-After`` (seconds or an HTTP date), ``retry-after-ms``, and
their ``llm_provider-`` forms (a gateway forwarding its upstream's);
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (OpenAI's names;
resets as ``1s``, ``6m0s``, ``20ms``, seconds or a Unix time), their
``llm_provider-`` forms and scoped forms
``x-ratelimit-<scope>-<field>-<resource>``. Each prefix and scope is one
*family* (a key's own limit, a model's, the upstream's), kept together as
a `Budget` because a reset means something only next to its remaining
count. The tightest family wins.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping
from typing import Literal

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

Resource = Literal["requests", "tokens"]


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

    def least(self, field: Literal["limit", "remaining"], resource: Resource) -> int | None:
        """The tightest family's ``field`` for ``resource`` (None: not sent)."""
        budgets = self.requests if resource == "requests" else self.tokens
        known = [b.limit if field == "limit" else b.remaining for b in budgets]
        return min((v for v in known if v is not None), default=None)


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
        if retry_after is None and (ms := parse_duration(headers.get(name, ""))) is not None:
            retry_after = ms / 1000.0
    for name in _RETRY_AFTER:
        if retry_after is None:
            retry_after = parse_retry_after(headers.get(name, ""), now_unix)
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
