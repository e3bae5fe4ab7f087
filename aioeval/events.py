"""Progress events. The library never prints: it calls an optional hook
with these, and the CLI renders them (rich). Hooks must be cheap and must
not raise."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from .types import CandidateResult, Summary


class RunStarted(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    benchmark: str
    total: int
    out_dir: str
    layers: list[str] = []
    warnings: list[str] = []


class ResultReady(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    result: CandidateResult


class GenerationUpdate(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Snapshot of the generation stage (endpoint runs)."""

    done: int
    """HTTP requests finished (any outcome)."""
    in_flight: int
    rate_limited: int
    """429 answers so far."""
    ignored_hints: int = 0
    """Rate-limit headers left unread as absurd (a wait of 10**20 s)."""
    retries: int
    failed: int
    """Samples whose generation finally failed (infra_error)."""
    samples: int = 0
    """Samples generated so far."""
    concurrency: int = 0
    """Requests currently allowed in flight (learned parallel limit)."""
    rate_rpm: float | None = None
    """The pace requests are sent at, per minute (None: not paced)."""


class RunFinished(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    summary: Summary


Event = RunStarted | ResultReady | GenerationUpdate | RunFinished
EventHook = Callable[[Event], None]
