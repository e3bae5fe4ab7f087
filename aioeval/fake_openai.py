"""A fake OpenAI-compatible server for tests and benchmarks (real aiohttp, on
127.0.0.1, free port).

It serves ``GET /v1/models``, ``POST /v1/chat/completions`` and
``POST /v1/completions`` and can misbehave on purpose: latency drawn from a
range, a requests-per-minute limit enforced with 429 + Retry-After (and
``x-ratelimit-*`` headers on every answer), and faults injected per request
either from a script (``faults=["503", "drop", ...]``, consumed in order) or
at random rates with a seeded generator. Fault kinds:

    429        rate-limited (Retry-After: ``retry_after_s``)
    500, 503   server errors
    400        a client error (never worth retrying)
    drop       the connection is closed without an answer
    malformed  valid JSON without ``choices``
    nonjson    an HTML page with status 200
    nousage    a normal answer without ``usage``
    slow       an answer after ``slow_s`` seconds (to trip client timeouts)

Answers come from ``answer(prompt_text, sample_number)``; `human_eval_answers`
builds one that returns each HumanEval problem's canonical solution in a
```python fence, or a wrong body for chosen problems.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from aiohttp import web

from .ratelimit import Bucket
from .types import Problem

Answerer = Callable[[str, int], str]

FAULTS = ("429", "500", "503", "400", "drop", "malformed", "nonjson", "nousage", "slow")


class FakeConfig(msgspec.Struct, kw_only=True):
    latency_s: tuple[float, float] = (0.0, 0.0)
    """Each completion waits a uniform draw from this range."""
    rpm: float | None = None
    """Requests per minute enforced with a token bucket (None: unlimited)."""
    burst: float | None = None
    """Bucket capacity; default one second's worth of rpm, at least 1."""
    honour_n: bool = True
    """False: ignore ``n`` and always return one choice."""
    faults: list[str] = []
    """Scripted faults, one per generation request, consumed in order ("ok" for none)."""
    fault_rates: dict[str, float] = {}
    """Random faults: kind -> probability per request (after the script runs out)."""
    retry_after_s: float = 1.0
    """Retry-After sent with scripted/random 429s."""
    slow_s: float = 30.0
    require_key: str | None = None
    """When set, requests without ``Authorization: Bearer <key>`` get 401."""
    models: list[str] = msgspec.field(default_factory=lambda: ["fake-model"])
    seed: int = 0


def default_answer(prompt: str, sample: int) -> str:
    return "```python\npass\n```"


def human_eval_answers(problems: Iterable[Problem], wrong: Iterable[str] = ()) -> Answerer:
    """Answer each HumanEval prompt with its whole function (prompt plus
    canonical solution) in a ```python fence; problems in ``wrong`` get a
    body that fails its check. The problem is found by its prompt text."""
    bad = set(wrong)
    table = [(p.fields["prompt"], p.id, p.fields["canonical_solution"]) for p in problems]

    def answer(text: str, sample: int) -> str:
        for prompt, pid, solution in table:
            if prompt in text:
                body = "    raise AssertionError('wrong on purpose')\n" if pid in bad else solution
                return f"Here you go:\n```python\n{prompt}{body}```\n"
        return "```python\npass\n```"

    return answer


def _prompt_text(body: dict[str, Any]) -> str:
    if isinstance(body.get("messages"), list):
        return "\n".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
    return str(body.get("prompt", ""))


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class FakeOpenAI:
    """``async with FakeOpenAI(cfg, answer) as fake: fake.url`` (base URL
    ending in /v1). Counters: ``requests`` (generation POSTs), ``served``
    (completions returned), ``samples`` (choices returned), ``rate_limited``
    (429s sent), ``faults`` (Counter of injected faults), ``auth_seen``."""

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
        self.faults: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self.n_asked: Counter[int] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.bucket: Bucket | None = None
        if self.config.rpm:
            burst = self.config.burst or max(1.0, self.config.rpm / 60.0)
            self.bucket = Bucket(self.config.rpm / 60.0, burst, time.monotonic())
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
        await site.start()
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

    # ------------------------------------------------------------ handlers

    def _authorized(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        self.auth_seen.add(auth)
        key = self.config.require_key
        return key is None or auth == f"Bearer {key}"

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.model_requests += 1
        if not self._authorized(request):
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.json_response(
            {"object": "list", "data": [{"id": m} for m in self.config.models]}
        )

    def _rate_headers(self, now: float) -> dict[str, str]:
        if self.bucket is None or self.config.rpm is None:
            return {}
        level = self.bucket.level
        wait = self.bucket.wait_s(1, now)
        return {
            "x-ratelimit-limit-requests": str(int(self.config.rpm)),
            "x-ratelimit-remaining-requests": str(max(0, math.floor(level))),
            "x-ratelimit-reset-requests": f"{math.ceil(wait * 1000)}ms",
        }

    def _next_fault(self) -> str:
        if self.script:
            return self.script.pop(0)
        for kind, p in self.config.fault_rates.items():
            if self.rng.random() < p:
                return kind
        return "ok"

    def _too_many(self, wait_s: float, headers: dict[str, str]) -> web.Response:
        self.rate_limited += 1
        headers = {
            **headers,
            "Retry-After": str(max(1, math.ceil(wait_s))),
            "retry-after-ms": str(max(1, math.ceil(wait_s * 1000))),
        }
        return web.json_response(
            {"error": {"message": "rate limit exceeded", "type": "rate_limit"}},
            status=429,
            headers=headers,
        )

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if not self._authorized(request):
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        now = time.monotonic()
        if self.bucket is not None:
            wait = self.bucket.wait_s(1, now)
            if wait > 0:
                return self._too_many(wait, self._rate_headers(now))
            self.bucket.take(1, now)
        headers = self._rate_headers(now)
        fault = self._next_fault()
        if fault != "ok":
            self.faults[fault] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request, fault, headers)
        finally:
            self.in_flight -= 1

    async def _answer(
        self, request: web.Request, fault: str, headers: dict[str, str]
    ) -> web.StreamResponse:
        lo, hi = self.config.latency_s
        delay = self.rng.uniform(lo, hi) if hi > 0 else 0.0
        if fault == "slow":
            delay = self.config.slow_s
        if delay > 0:
            await asyncio.sleep(delay)
        if fault == "429":
            return self._too_many(self.config.retry_after_s, headers)
        if fault in ("500", "503", "400"):
            return web.json_response(
                {"error": {"message": f"injected {fault}"}}, status=int(fault), headers=headers
            )
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
        body = await request.json()
        n = int(body.get("n", 1)) if self.config.honour_n else 1
        self.n_asked[int(body.get("n", 1))] += 1
        text = _prompt_text(body)
        answers = [self.answer(text, self.samples + i) for i in range(n)]
        chat = request.path.endswith("/chat/completions")
        choices = [
            {"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
            if chat
            else {"index": i, "text": a, "finish_reason": "stop"}
            for i, a in enumerate(answers)
        ]
        out: dict[str, Any] = {"id": f"cmpl-{self.requests}", "object": "x", "choices": choices}
        if fault != "nousage":
            completion = sum(_tokens(a) for a in answers)
            out["usage"] = {
                "prompt_tokens": _tokens(text),
                "completion_tokens": completion,
                "total_tokens": _tokens(text) + completion,
            }
            self.tokens += out["usage"]["total_tokens"]
        self.served += 1
        self.samples += n
        return web.json_response(out, headers=headers)


async def _serve(args: argparse.Namespace) -> None:
    answer: Answerer | None = None
    if args.human_eval:
        from .suites.human_eval import load_problems

        answer = human_eval_answers(load_problems())
    lo, _, hi = args.latency.partition(",")
    cfg = FakeConfig(
        latency_s=(float(lo or 0), float(hi or lo or 0)),
        rpm=args.rpm,
        honour_n=not args.ignore_n,
    )
    fake = FakeOpenAI(cfg, answer)
    await fake.start(args.port)
    try:
        print(fake.url, flush=True)
        await asyncio.Event().wait()
    finally:
        await fake.close()


def main() -> None:
    """``python -m aioeval.fake_openai --port 8000 --human-eval --rpm 600``"""
    p = argparse.ArgumentParser(prog="python -m aioeval.fake_openai")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--rpm", type=float, default=None)
    p.add_argument("--latency", default="0", help="seconds, or a range lo,hi")
    p.add_argument("--ignore-n", action="store_true")
    p.add_argument("--human-eval", action="store_true", help="answer with canonical solutions")
    args = p.parse_args()
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
