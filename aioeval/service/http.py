"""``aioeval serve``: a `Scorer` behind HTTP (aiohttp).

- ``POST /v1/score``: ``{"benchmark", "problem_id" | "problem", "completion"}``,
  or ``{"items": [...]}`` of those; answers the fields of a results.jsonl
  row (one object, or ``{"results": [...]}`` in order).
- ``GET /healthz``; ``GET /metrics`` (Prometheus text format).
- Every client error is a 4xx with a one-line ``{"error": ...}``: malformed
  JSON, a missing or mistyped field, an unknown benchmark or problem (404),
  a body over the size limit (413), a missing or wrong bearer token (401),
  a full queue for a ``"wait": false`` request (429). While draining after
  SIGTERM, new requests get 503 and the ones in flight finish.
"""

from __future__ import annotations

import bisect
import hmac
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
from aiohttp import web

from aioeval.config import RunConfig
from aioeval.errors import InputError

from .scorer import Busy, Scorer, UnknownProblem

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
MAX_ITEMS = 1000


class Item(msgspec.Struct, forbid_unknown_fields=True):
    benchmark: str
    completion: str
    problem_id: str | None = None
    problem: dict[str, Any] | None = None
    wait: bool = True


class Batch(msgspec.Struct, forbid_unknown_fields=True):
    items: list[Item]


class Metrics:
    """Counters and a latency histogram, written in Prometheus text format."""

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self.latency_sum = 0.0
        self.requests: dict[int, int] = {}

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
        self.latency_sum += seconds

    def text(self, scorer: Scorer, draining: bool) -> str:
        lines = [
            "# TYPE aioeval_queue_depth gauge",
            f"aioeval_queue_depth {scorer.queued}",
            "# TYPE aioeval_in_flight gauge",
            f"aioeval_in_flight {scorer.in_flight}",
            "# TYPE aioeval_slots gauge",
            f"aioeval_slots {scorer.slots}",
            "# TYPE aioeval_draining gauge",
            f"aioeval_draining {int(draining)}",
            "# TYPE aioeval_executions_total counter",
            f"aioeval_executions_total {scorer.executed}",
            "# TYPE aioeval_verdicts_total counter",
        ]
        for status in ("passed", "failed", "timeout", "error", "infra_error"):
            lines.append(f'aioeval_verdicts_total{{status="{status}"}} {scorer.counts[status]}')
        lines.append("# TYPE aioeval_http_responses_total counter")
        for code, n in sorted(self.requests.items()):
            lines.append(f'aioeval_http_responses_total{{code="{code}"}} {n}')
        lines.append("# TYPE aioeval_score_seconds histogram")
        total = 0
        for bound, n in zip((*LATENCY_BUCKETS_S, float("inf")), self.buckets, strict=True):
            total += n
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            lines.append(f'aioeval_score_seconds_bucket{{le="{le}"}} {total}')
        lines.append(f"aioeval_score_seconds_sum {self.latency_sum:.6f}")
        lines.append(f"aioeval_score_seconds_count {total}")
        return "\n".join(lines) + "\n"


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class Service:
    """The routes over one scorer; `draining` turns new requests away."""

    def __init__(self, scorer: Scorer, token: str | None = None) -> None:
        self.scorer = scorer
        self.token = token
        self.metrics = Metrics()
        self.draining = False
        self.in_flight = 0
        self.idle = anyio.Event()
        self.idle.set()

    def app(self, max_body_mb: float) -> web.Application:
        app = web.Application(client_max_size=int(max_body_mb * 2**20), middlewares=[self._guard])
        app.router.add_post("/v1/score", self._score)
        app.router.add_get("/healthz", self._health)
        app.router.add_get("/metrics", self._metrics)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if self.token is not None and request.path != "/healthz":
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return self._count(_error(401, "missing or wrong bearer token"))
        try:
            response = await handler(request)
        except web.HTTPRequestEntityTooLarge:
            response = _error(413, "request body over the size limit (--max-body-mb)")
        except web.HTTPException as exc:
            response = _error(exc.status, exc.reason)
        except Exception as exc:  # the engine's fault, said in one line; the server lives on
            response = _error(500, f"internal error: {type(exc).__name__}: {exc}"[:500])
        return self._count(response)

    def _count(self, response: web.StreamResponse) -> web.StreamResponse:
        self.metrics.requests[response.status] = self.metrics.requests.get(response.status, 0) + 1
        return response

    async def _health(self, _request: web.Request) -> web.Response:
        body = {"ok": not self.draining, "slots": self.scorer.slots, "draining": self.draining}
        return web.json_response(body, status=503 if self.draining else 200)

    async def _metrics(self, _request: web.Request) -> web.Response:
        return web.Response(text=self.metrics.text(self.scorer, self.draining))

    async def _score(self, request: web.Request) -> web.Response:
        if self.draining:
            return _error(503, "the server is shutting down")
        body = await request.read()
        try:
            raw = msgspec.json.decode(body)
            parsed: Item | Batch
            if isinstance(raw, dict) and "items" in raw:
                parsed = msgspec.convert(raw, Batch)
            else:
                parsed = msgspec.convert(raw, Item)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return _error(400, f"bad request body: {exc}")
        items = parsed.items if isinstance(parsed, Batch) else [parsed]
        if len(items) > MAX_ITEMS:
            return _error(400, f"at most {MAX_ITEMS} items per request")
        for i, item in enumerate(items):
            if (item.problem_id is None) == (item.problem is None):
                where = f"items[{i}]: " if isinstance(parsed, Batch) else ""
                return _error(400, f"{where}give exactly one of problem_id and problem")
        self.in_flight += 1
        self.idle = anyio.Event() if self.idle.is_set() else self.idle
        started = time.perf_counter()
        results: list[Any] = [None] * len(items)
        try:
            async with anyio.create_task_group() as tg:
                for i, item in enumerate(items):
                    tg.start_soon(self._one, item, results, i)
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self.idle.set()
        for outcome in results:
            if isinstance(outcome, UnknownProblem):
                return _error(404, str(outcome))
            if isinstance(outcome, Busy):
                return _error(429, str(outcome))
            if isinstance(outcome, InputError):
                return _error(400, str(outcome))
        self.metrics.observe(time.perf_counter() - started)
        rows = [msgspec.to_builtins(r) for r in results]
        return web.json_response({"results": rows} if isinstance(parsed, Batch) else rows[0])

    async def _one(self, item: Item, into: list[Any], i: int) -> None:
        problem = item.problem_id if item.problem_id is not None else item.problem
        assert problem is not None
        try:
            into[i] = await self.scorer.score(
                item.benchmark, problem, item.completion, wait=item.wait
            )
        except (InputError, Busy) as exc:  # UnknownProblem is an InputError
            into[i] = exc


async def serve(
    config: RunConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8321,
    token: str | None = None,
    max_body_mb: float = 8.0,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT, then drain: requests in flight finish,
    new ones get 503, and the pool is closed with nothing left behind."""
    async with Scorer(config) as scorer:
        service = Service(scorer, token)
        runner = web.AppRunner(service.app(max_body_mb), handle_signals=False)
        await runner.setup()
        try:
            site = web.TCPSite(runner, host, port)
            await site.start()
            bound = runner.addresses[0] if runner.addresses else (host, port)
            if on_ready is not None:
                on_ready(f"http://{bound[0]}:{bound[1]}")
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    break
            service.draining = True
            await service.idle.wait()
        finally:
            await runner.cleanup()
