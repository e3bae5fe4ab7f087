"""``aioeval serve``: a `Scorer` behind HTTP (aiohttp).

- ``POST /v1/score``: ``{"benchmark", "problem_id" | "problem", "completion"}``
  (optional ``"wait"``, ``"detail"``), or ``{"items": [...]}`` of those; answers the fields of a results.jsonl
  row (one object, or ``{"results": [...]}`` in order).
- ``GET /healthz``; ``GET /metrics`` (Prometheus text format).
- Safe by default: who may call is decided from the headers before any body
  is read (`_guard`: bearer token, ``Host``, ``Origin``, JSON only), and
  what a caller may hold is bounded (`_limits`: connections, header and
  body timeouts, one byte budget for every request being read or scored).
- A client that hangs up cancels its items, queued or running (aiohttp's
  handler cancellation; the scorer cancels per caller).
- Every refusal is a one-line ``{"error": ...}``: 400 malformed JSON, a
  missing or mistyped field, JSON nested too deeply, a problem that does
  not parse; 401 token; 403 ``Host`` or ``Origin``; 404 unknown benchmark
  or problem; 408 a body too slow to arrive; 413 a body or caller problem
  over its limit; 415 not JSON; 429 a full queue for ``"wait": false``;
  503 while draining, past the byte budget or the connection cap, or when
  a benchmark's dataset is not available (the message says what to do).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import msgspec
from aiohttp import web

from aioeval.config import RunConfig
from aioeval.errors import DatasetError, InputError, SandboxError

from ._guard import Guard
from ._limits import BYTES_PER_BODY_BYTE, Budget, CappedSite, ServeLimits, return_large_blocks
from ._metrics import Metrics
from ._problems import ProblemTooLarge
from .scorer import Busy, Scorer, UnknownProblem

MAX_ITEMS = 1000
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (UnknownProblem, 404),
    (ProblemTooLarge, 413),
    (InputError, 400),
    (Busy, 429),
    (DatasetError, 503),
    (SandboxError, 503),
)
"""A scorer's refusal of an item, as the request's status (first match)."""


class Item(msgspec.Struct, forbid_unknown_fields=True):
    benchmark: str
    completion: str
    problem_id: str | None = None
    problem: dict[str, Any] | None = None
    wait: bool = True
    detail: bool = False
    """Per-test detail (tests passed of all, the first failing test) where
    the benchmark's tests are data; the verdict is the same either way."""


class Batch(msgspec.Struct, forbid_unknown_fields=True):
    items: list[Item]


class Refused(Exception):
    """A request answered with ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status, self.message, self.close = status, message, close


_ONE_LINE = {c: f"\\x{c:02x}" for c in (*range(0x0A, 0x0E), 0x1C, 0x1D, 0x1E, 0x85)} | {
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
"""Line breaks escaped: a message may quote the caller's text (a field name)."""


def _error(status: int, message: str, *, close: bool = False) -> web.Response:
    response = web.json_response({"error": message.translate(_ONE_LINE)}, status=status)
    if status in (429, 503):
        response.headers["Retry-After"] = "1"
    if close:
        response.force_close()
    return response


class Service:
    """The routes over one scorer; `draining` turns new requests away."""

    def __init__(
        self,
        scorer: Scorer,
        token: str | None = None,
        *,
        limits: ServeLimits | None = None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.scorer = scorer
        self.limits = limits if limits is not None else ServeLimits()
        self.guard = Guard(token, allow_hosts)
        self.budget = Budget(self.limits.max_memory)
        self.metrics = Metrics()
        self.draining = False
        self.in_flight = 0
        self.idle = anyio.Event()
        self.idle.set()
        self.runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.limits.max_body, middlewares=[self._guarded])
        app.router.add_post("/v1/score", self._score, expect_handler=self._expect)
        app.router.add_get("/healthz", self._health)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port``; the URL (with the port bound)."""
        return_large_blocks()
        runner = self.runner = web.AppRunner(
            self.app(),
            handle_signals=False,
            handler_cancellation=True,
            keepalive_timeout=self.limits.header_timeout_s,
            max_headers=32,
        )
        await runner.setup()
        await CappedSite(runner, host, port, self.limits.max_connections).start()
        address, bound = runner.addresses[0][:2]
        return f"http://[{address}]:{bound}" if ":" in address else f"http://{address}:{bound}"

    async def aclose(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @web.middleware
    async def _guarded(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        refusal = self.guard.refusal(request.method, request.path, request.headers)
        if refusal is not None:
            return self._count(_error(*refusal))
        try:
            response = await handler(request)
        except Refused as exc:
            response = _error(exc.status, exc.message, close=exc.close)
            if exc.close:  # sent now, then the connection closed: no lingering read
                await response.prepare(request)
                await response.write_eof()
                if request.transport is not None:
                    request.transport.close()
        except web.HTTPException as exc:
            response = _error(exc.status, exc.reason)
        except Exception as exc:  # the engine's fault, said in one line; the server lives on
            response = _error(500, f"internal error: {_cause(exc)}"[:500])
        return self._count(response)

    async def _expect(self, request: web.Request) -> web.StreamResponse | None:
        """``Expect: 100-continue``: refuse before the client sends its body."""
        refusal = self.guard.refusal(request.method, request.path, request.headers)
        if refusal is not None:
            return self._count(_error(*refusal, close=True))
        if request.headers.get("Expect", "").lower() != "100-continue":
            return self._count(_error(417, "only Expect: 100-continue is understood", close=True))
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0
        return None

    def _count(self, response: web.StreamResponse) -> web.StreamResponse:
        self.metrics.requests[response.status] = self.metrics.requests.get(response.status, 0) + 1
        return response

    async def _health(self, _request: web.Request) -> web.Response:
        body = {"ok": not self.draining, "slots": self.scorer.slots, "draining": self.draining}
        return web.json_response(body, status=503 if self.draining else 200)

    async def _metrics(self, _request: web.Request) -> web.Response:
        server = self.runner.server if self.runner is not None else None
        gauges = {
            "request_bytes_reserved": self.budget.held,
            "connections": len(server.connections) if server is not None else 0,
        }
        return web.Response(text=self.metrics.text(self.scorer, self.draining, gauges))

    async def _score(self, request: web.Request) -> web.Response:
        if self.draining:
            raise Refused(503, "the server is shutting down")
        size = self._reserve(request)
        try:
            items, batch = _decode(await self._read(request))
            return await self._answer(items, batch)
        finally:
            self.budget.give(size)

    def _reserve(self, request: web.Request) -> int:
        """Reserve what this request may hold before reading its body."""
        declared = request.content_length
        limits = self.limits
        if declared is not None and declared > limits.max_body:
            raise Refused(413, f"request body over the size limit of {limits.max_body} bytes")
        size = BYTES_PER_BODY_BYTE * (limits.max_body if declared is None else declared)
        if not self.budget.take(size):
            raise Refused(503, "the server holds as many request bytes as it may; retry later")
        return size

    async def _read(self, request: web.Request) -> bytes:
        try:
            with anyio.fail_after(self.limits.body_timeout_s):
                return await request.read()
        except TimeoutError:
            raise Refused(
                408, f"the body did not arrive within {self.limits.body_timeout_s:g} s", close=True
            ) from None
        except web.HTTPRequestEntityTooLarge:
            raise Refused(
                413, f"request body over the size limit of {self.limits.max_body} bytes"
            ) from None

    async def _answer(self, items: list[Item], batch: bool) -> web.Response:
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
            for kind, status in STATUS:
                if isinstance(outcome, kind):
                    raise Refused(status, str(outcome))
        self.metrics.observe(time.perf_counter() - started)
        rows = [msgspec.to_builtins(r) for r in results]
        body = msgspec.json.encode({"results": rows} if batch else rows[0])
        return web.Response(body=body, content_type="application/json")

    async def _one(self, item: Item, into: list[Any], i: int) -> None:
        problem = item.problem_id if item.problem_id is not None else item.problem
        assert problem is not None
        try:
            into[i] = await self.scorer.score(
                item.benchmark, problem, item.completion, wait=item.wait, detail=item.detail
            )
        except (InputError, Busy, DatasetError, SandboxError) as exc:
            into[i] = exc


def _decode(body: bytes) -> tuple[list[Item], bool]:
    """The items of a request body, and whether it was a batch."""
    try:
        raw = msgspec.json.decode(body)
        parsed: Item | Batch
        if isinstance(raw, dict) and "items" in raw:
            parsed = msgspec.convert(raw, Batch)
        else:
            parsed = msgspec.convert(raw, Item)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise Refused(400, f"bad request body: {exc}") from None
    except RecursionError:
        raise Refused(400, "bad request body: JSON nested too deeply") from None
    items = parsed.items if isinstance(parsed, Batch) else [parsed]
    if len(items) > MAX_ITEMS:
        raise Refused(400, f"at most {MAX_ITEMS} items per request")
    for i, item in enumerate(items):
        if (item.problem_id is None) == (item.problem is None):
            where = f"items[{i}]: " if isinstance(parsed, Batch) else ""
            raise Refused(400, f"{where}give exactly one of problem_id and problem")
    return items, isinstance(parsed, Batch)


def _cause(exc: BaseException) -> str:
    """The first leaf of an exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


async def serve(
    config: RunConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8321,
    token: str | None = None,
    max_body_mb: float = 8.0,
    limits: ServeLimits | None = None,
    allow_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT, then drain: requests in flight finish,
    new ones get 503, and the pool is closed with nothing left behind.
    ``token=None`` serves without one; ``limits`` (whose body limit
    ``max_body_mb`` sets when not given) bound what callers may hold."""
    limits = limits if limits is not None else ServeLimits(max_body_mb=max_body_mb)
    async with Scorer(
        config,
        problem_bytes=limits.max_problem_kb * 2**10,
        field_bytes=limits.max_field_kb * 2**10,
        problems_bytes=limits.problems_mb * 2**20,
    ) as scorer:
        service = Service(scorer, token, limits=limits, allow_hosts=allow_hosts)
        try:
            url = await service.start(host, port)
            if on_ready is not None:
                on_ready(url)
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    break
            service.draining = True
            await service.idle.wait()
        finally:
            await service.aclose()
