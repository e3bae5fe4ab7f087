"""A fake OpenAI-compatible server for tests and benchmarks (real aiohttp, on
127.0.0.1, free port).

It serves ``GET /v1/models``, ``POST /v1/chat/completions`` and
``POST /v1/completions`` and can misbehave on purpose, the way real servers
and LLM gateways do:

- a requests-per-minute limit, as a token bucket (``burst``) or a fixed
  window (``window_s``), answered with 429;
- a tokens-per-minute limit counted from ``max_tokens`` when a request
  arrives (OpenAI) or from the reported usage when it returns (gateways);
- a parallel cap (``max_parallel``) answered with 429 and a long
  ``Retry-After`` although a slot frees within milliseconds;
- another client on the same key (``others_rpm``), taking requests from
  the same budget in bursts at random times;
- rate-limit headers in one of the dialects `fake_limits` describes
  (``hints``: ``openai``, ``gateway``, ``retry-after``, ``liar``, ``none``);
- faults injected per request from a script (``faults=["503", "drop", ...]``,
  consumed in order), every Nth request (``fault_every={"503": 7}``), or at
  random rates with a seeded generator. Fault kinds:

    429        rate-limited (Retry-After: ``retry_after_s``)
    500, 503   server errors
    400        a client error (never worth retrying)
    drop       the connection is closed without an answer
    malformed  valid JSON without ``choices``
    nonjson    an HTML page with status 200
    nousage    a normal answer without ``usage``
    slow       an answer after ``slow_s`` seconds (to trip client timeouts)
    huge       a 200 answer of ``huge_mb`` MB (streamed, never held whole)
    bomb       the same, gzip-compressed (``Content-Encoding: gzip``)
    absurd     a 429 asking to wait 10**20 seconds

- a start-up probe that fails (``models_status``: the listing answers with
  that status and ``models_message``).

Answers come from ``answer(prompt_text, sample_number)``, cut at the
request's ``max_tokens`` (``finish_reason: length``) as real servers do (a
token is four characters here); `human_eval_answers` (`fake_answers`) builds
one that returns each HumanEval problem's canonical solution in a ```python
fence, or a wrong body for chosen problems. The command line is `fake_cli`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from typing import Any, Literal

import msgspec
from aiohttp import web

from . import fake_answers
from .fake_answers import Answerer, default_answer, human_eval_answers
from .fake_hostile import flood
from .fake_limits import Dialect, ServerLimits


class FakeConfig(msgspec.Struct, kw_only=True):
    latency_s: tuple[float, float] = (0.0, 0.0)
    """Each completion waits a uniform draw from this range."""
    rpm: float | None = None
    """Requests per minute (None: unlimited)."""
    burst: float | None = None
    """Request bucket capacity; default one second's worth of rpm, at least 1."""
    window_s: float | None = None
    """Count rpm in fixed windows of this length instead of a token bucket."""
    tpm: float | None = None
    """Tokens per minute (None: unlimited)."""
    tpm_counts: Literal["usage", "max_tokens"] = "usage"
    """usage: charged the reported usage when a request returns (a request is
    admitted while the budget is positive); max_tokens: charged the larger of
    the prompt and max_tokens x n when it arrives."""
    tpm_burst_s: float = 1.0
    """Token bucket capacity, in seconds' worth of tpm."""
    max_parallel: int | None = None
    """Requests allowed in flight; more get 429 with ``parallel_retry_after_s``."""
    parallel_retry_after_s: float = 60.0
    hints: Dialect = "openai"
    """Which rate-limit headers to send (see `fake_limits`)."""
    others_rpm: float = 0.0
    """Requests per minute another client on the same key takes, on average."""
    upstream_factor: float = 10.0
    """gateway hints: the upstream limit reported is this many times the gateway's."""
    honour_n: bool = True
    """False: ignore ``n`` and always return one choice."""
    faults: list[str] = []
    """Scripted faults, one per generation request, consumed in order ("ok" for none)."""
    fault_every: dict[str, int] = {}
    """kind -> N: every Nth generation request gets that fault."""
    fault_rates: dict[str, float] = {}
    """Random faults: kind -> probability per request (after the script runs out)."""
    retry_after_s: float = 1.0
    """Retry-After sent with scripted/random 429s."""
    slow_s: float = 30.0
    huge_mb: int = 64
    """Size of a ``huge`` or ``bomb`` answer once decompressed."""
    require_key: str | None = None
    """When set, requests without ``Authorization: Bearer <key>`` get 401."""
    models: list[str] = msgspec.field(default_factory=lambda: ["fake-model"])
    models_status: int = 200
    """Status of ``GET /models``; anything else answers ``models_message``."""
    models_message: str = "no model listing here"
    seed: int = 0


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"message": message}}, status=status, headers=headers)


class FakeOpenAI:
    """``async with FakeOpenAI(cfg, answer) as fake: fake.url`` (base URL
    ending in /v1). Counters: ``requests`` (generation POSTs), ``served``
    (completions returned), ``samples`` (choices returned), ``rate_limited``
    (429s sent), ``parallel_refused`` (of those, for the parallel cap),
    ``faults`` (Counter of injected faults), ``auth_seen``, ``accepted_at``
    (monotonic times of requests let through the limits)."""

    def __init__(self, config: FakeConfig | None = None, answer: Answerer | None = None) -> None:
        self.config = config or FakeConfig()
        self.answer = answer or default_answer
        self.rng = random.Random(self.config.seed)
        self.script = list(self.config.faults)
        self.requests = 0
        self.model_requests = 0
        self.served = 0
        self.samples = 0
        self.tokens = 0
        """Total tokens reported in usage."""
        self.rate_limited = 0
        self.parallel_refused = 0
        self.faults: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self.n_asked: Counter[int] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.accepted_at: list[float] = []
        self.usage_at: list[tuple[float, int]] = []
        """(monotonic time, tokens) of each usage reported."""
        cfg = self.config
        self.limits = ServerLimits(
            time.monotonic(),
            rpm=cfg.rpm,
            burst=cfg.burst,
            window_s=cfg.window_s,
            tpm=cfg.tpm,
            tpm_counts=cfg.tpm_counts,
            tpm_burst_s=cfg.tpm_burst_s,
            max_parallel=cfg.max_parallel,
            parallel_retry_after_s=cfg.parallel_retry_after_s,
            dialect=cfg.hints,
            upstream_factor=cfg.upstream_factor,
            others_rpm=cfg.others_rpm,
            seed=cfg.seed,
        )
        self._gate: asyncio.Event | None = None
        self._moved = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._generate)
        app.router.add_post("/v1/completions", self._generate)
        return app

    async def start(self, port: int = 0) -> str:
        self._runner = web.AppRunner(
            self.app(),
            access_log=None,
            handle_signals=False,
            handler_cancellation=True,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        try:
            await site.start()
        except BaseException:
            await self.close()
            raise
        self.port = int(self._runner.addresses[0][1])
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def hold_answers(self) -> None:
        """Accepted requests wait for `release_answers` before answering, so a
        test can see how many a client keeps in flight."""
        self._gate = asyncio.Event()

    def release_answers(self) -> None:
        if self._gate is not None:
            self._gate.set()

    async def wait_in_flight(self, n: int) -> None:
        """Return once ``n`` requests are in flight together."""
        while self.in_flight < n:
            await self._moved.wait()

    def _next_fault(self) -> str:
        if self.script:
            return self.script.pop(0)
        for kind, every in self.config.fault_every.items():
            if every > 0 and self.requests % every == 0:
                return kind
        for kind, p in self.config.fault_rates.items():
            if self.rng.random() < p:
                return kind
        return "ok"

    # ------------------------------------------------------------ handlers

    def _authorized(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        self.auth_seen.add(auth)
        key = self.config.require_key
        return key is None or auth == f"Bearer {key}"

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.model_requests += 1
        if not self._authorized(request):
            return _error("bad key", 401)
        if self.config.models_status != 200:
            return _error(self.config.models_message, self.config.models_status)
        return web.json_response(
            {"object": "list", "data": [{"id": m} for m in self.config.models]}
        )

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if not self._authorized(request):
            return _error("bad key", 401)
        body = await request.json()
        n = int(body.get("n", 1))
        text = fake_answers.prompt_text(body)
        charge = max(fake_answers.tokens(text), int(body.get("max_tokens", 16)) * n)
        now = time.monotonic()
        refused = self.limits.admit(now, charge=charge, in_flight=self.in_flight)
        if refused is not None:
            self.rate_limited += 1
            self.parallel_refused += refused.parallel
            return _error(refused.message, 429, refused.headers)
        self.accepted_at.append(now)
        headers = self.limits.headers(now)
        fault = self._next_fault()
        if fault != "ok":
            self.faults[fault] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self._moved.set()
        self._moved = asyncio.Event()
        try:
            return await self._answer(request, body, fault, headers)
        finally:
            self.in_flight -= 1

    async def _answer(
        self, request: web.Request, body: dict[str, Any], fault: str, headers: dict[str, str]
    ) -> web.StreamResponse:
        if self._gate is not None:
            await self._gate.wait()
        lo, hi = self.config.latency_s
        delay = self.rng.uniform(lo, hi) if hi > 0 else 0.0
        if fault == "slow":
            delay = self.config.slow_s
        if delay > 0:
            await asyncio.sleep(delay)
        if fault == "429":
            self.rate_limited += 1
            return _error(
                "rate limit exceeded", 429, {"Retry-After": str(self.config.retry_after_s)}
            )
        if fault in ("500", "503", "400"):
            return _error(f"injected {fault}", int(fault), headers)
        if fault == "absurd":
            self.rate_limited += 1
            return _error("rate limit exceeded", 429, {"Retry-After": "99999999999999999999"})
        if fault in ("huge", "bomb"):
            return await flood(request, self.config.huge_mb, compressed=fault == "bomb")
        if fault == "drop":
            assert request.transport is not None
            request.transport.abort()
            raise asyncio.CancelledError  # nothing more to say on this connection
        if fault == "malformed":
            return web.json_response({"id": "x", "object": "weird"}, headers=headers)
        if fault == "nonjson":
            return web.Response(
                text="<html><body>502 Bad Gateway</body></html>",
                content_type="text/html",
                headers=headers,
            )
        n = int(body.get("n", 1)) if self.config.honour_n else 1
        self.n_asked[int(body.get("n", 1))] += 1
        text = fake_answers.prompt_text(body)
        cut = [
            fake_answers.cut(self.answer(text, self.samples + i), body.get("max_tokens"))
            for i in range(n)
        ]
        answers = [a for a, _ in cut]
        chat = request.path.endswith("/chat/completions")
        choices = [
            {"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": why}
            if chat
            else {"index": i, "text": a, "finish_reason": why}
            for i, (a, why) in enumerate(cut)
        ]
        out: dict[str, Any] = {"id": f"cmpl-{self.requests}", "object": "x", "choices": choices}
        out["model"] = str(body.get("model", ""))  # as real servers; inspect_ai requires it
        used = fake_answers.tokens(text) + sum(fake_answers.tokens(a) for a in answers)
        self.limits.used(used, time.monotonic())
        if fault != "nousage":
            completion = used - fake_answers.tokens(text)
            out["usage"] = {
                "prompt_tokens": fake_answers.tokens(text),
                "completion_tokens": completion,
                "total_tokens": used,
            }
            self.tokens += used
            self.usage_at.append((time.monotonic(), used))
        self.served += 1
        self.samples += n
        return web.json_response(out, headers=headers)


__all__ = ["Answerer", "FakeConfig", "FakeOpenAI", "default_answer", "human_eval_answers"]
