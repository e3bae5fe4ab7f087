"""The async limiter in virtual time, and the whole control loop against a
modelled server in virtual time (FakeClock): minutes of a rate-limited run
take seconds and are exactly reproducible. The arithmetic is tested in
test_pace, test_parallel and test_tokenbudget; end-to-end behaviour against
the real fake server in test_endpoint."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Awaitable, Callable

import anyio
import msgspec
import pytest

from aioeval.config import RetryConfig
from aioeval.generation.ratelimit._bucket import Bucket
from aioeval.generation.ratelimit._hints import Budget, RateHeaders
from aioeval.generation.ratelimit._limiter import (
    PAUSE_MARGIN,
    PROBE_GAP_S,
    REFIT_S,
    Permit,
    RateLimiter,
    Stalled,
)
from aioeval.generation.ratelimit._pace import HINT_MARGIN
from aioeval.generation.ratelimit._tokens import Ask
from aioeval.generation.retry import Failure, call_with_retry
from aioeval.testing import FakeClock


async def _in_virtual_time(clock: FakeClock, fn: Callable[[], Awaitable[None]]) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(clock.autojump)
        await fn()
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_rpm_spaces_requests_evenly() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, rpm=120, max_concurrency=100)
    times: list[float] = []

    async def run() -> None:
        for _ in range(10):
            p = await limiter.acquire(1)
            times.append(clock.now())
            limiter.release(p, "ok")

    await _in_virtual_time(clock, run)
    assert times[0] == 0.0
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps == pytest.approx([0.5] * 9)


@pytest.mark.anyio
async def test_a_usage_refund_wakes_a_waiting_request_at_once() -> None:
    clock = FakeClock()
    # 6000 tokens per minute = 100/s, a bucket of 100
    limiter = RateLimiter(clock, tpm=6000, tpm_counts="usage", max_concurrency=10, rpm=6000)
    ask = Ask(prompt=10, max_tokens=60)
    admitted: list[float] = []

    async def run() -> None:
        first = await limiter.acquire(ask)  # holds 70: another 70 does not fit
        async with anyio.create_task_group() as tg:

            async def second() -> None:
                p = await limiter.acquire(ask)
                admitted.append(clock.now())
                limiter.release(p, "ok", used_tokens=20, completion_tokens=10)

            tg.start_soon(second)
            await clock.sleep(1.0)
            limiter.release(first, "ok", used_tokens=20, completion_tokens=10)

    await _in_virtual_time(clock, run)
    assert admitted == [1.0]  # the moment the first one's reservation came back


@pytest.mark.anyio
async def test_a_rate_429_pauses_everyone_then_one_probe_then_the_pace() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=8)
    sent: list[tuple[float, bool]] = []

    async def run() -> None:
        for _ in range(4):  # 4 per second: a send rate to lower the pace from
            limiter.release(await limiter.acquire(1), "ok")
            await clock.sleep(0.25)
        first = await limiter.acquire(1)
        hint = RateHeaders(retry_after_s=3.0, requests=(Budget(remaining=0),))
        assert limiter.release(first, "throttled", hints=hint) == "rate"
        async with anyio.create_task_group() as tg:

            async def sender() -> None:
                p = await limiter.acquire(1)
                sent.append((clock.now(), p.probe))
                await clock.sleep(0.2)
                limiter.release(p, "ok")

            for _ in range(3):
                tg.start_soon(sender)

    await _in_virtual_time(clock, run)
    resume = 1.0 + 3.0 * (1 + PAUSE_MARGIN[1]) + PAUSE_MARGIN[0]
    assert sent[0] == (pytest.approx(resume), True)  # one probe after the pause
    assert sent[1][0] >= resume + 0.2 and not sent[1][1]  # the rest after its success
    assert sent[2][0] - sent[1][0] > 0.2  # ... at the lowered pace


@pytest.mark.anyio
async def test_a_parallel_429_costs_no_pause_and_the_retry_takes_the_next_free_slot() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=8)
    refused_at: list[float] = []
    retried: list[float] = []
    sent: list[float] = []

    async def run() -> None:
        for _ in range(4):
            limiter.release(await limiter.acquire(1), "ok")
        running = []
        for _ in range(4):
            running.append(await limiter.acquire(1))
            sent.append(clock.now())
        await clock.sleep(0.5)  # they are running: admitted
        fifth = await limiter.acquire(1)
        long_hint = RateHeaders(retry_after_s=60.0)
        assert limiter.release(fifth, "throttled", hints=long_hint) == "concurrency"
        refused_at.append(clock.now())
        assert limiter.parallel.allowed == 4 and limiter.paused_until < clock.now()
        async with anyio.create_task_group() as tg:

            async def retry() -> None:
                p = await limiter.acquire(1)
                retried.append(clock.now())
                limiter.release(p, "ok")

            tg.start_soon(retry)
            await clock.sleep(0.05)
            limiter.release(running.pop(), "ok")
        for p in running:
            limiter.release(p, "ok")

    await _in_virtual_time(clock, run)
    # each new level of parallelism went out PROBE_GAP_S after the last send
    assert [b - a for a, b in itertools.pairwise(sent)] == pytest.approx([PROBE_GAP_S] * 3)
    assert retried == [pytest.approx(refused_at[0] + 0.05)]  # the moment a slot freed


@pytest.mark.anyio
async def test_limits_in_headers_set_the_pace_before_any_429() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=16)
    gateway = RateHeaders(
        requests=(Budget(limit=600, remaining=40), Budget(limit=120, remaining=100))
    )
    times: list[float] = []

    async def run() -> None:
        limiter.release(await limiter.acquire(1), "ok", hints=gateway)
        for _ in range(5):
            p = await limiter.acquire(1)
            times.append(clock.now())
            limiter.release(p, "ok", hints=gateway)

    await _in_virtual_time(clock, run)
    assert limiter.rate_rpm == pytest.approx(120 * HINT_MARGIN)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps == pytest.approx([0.5 / HINT_MARGIN] * 4)


@pytest.mark.anyio
async def test_a_token_limit_in_headers_paces_each_request_by_its_size() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=16)
    hints = RateHeaders(tokens=(Budget(limit=6000, remaining=0),))  # 100/s, none left
    times: list[float] = []

    async def run() -> None:
        first = await limiter.acquire(Ask(prompt=50, max_tokens=100))
        limiter.release(first, "ok", hints=hints, used_tokens=80, completion_tokens=30)
        assert limiter.tokens is not None and limiter.tokens.hinted
        assert limiter.tokens.counts == "usage" and limiter.tokens.bucket.level <= 0
        for prompt in (10, 170, 10):  # costs 40, 200, 40 with 30 per sample seen
            p = await limiter.acquire(Ask(prompt=prompt, max_tokens=100))
            times.append(clock.now())
            limiter.release(p, "ok", used_tokens=prompt + 30, completion_tokens=30)

    await _in_virtual_time(clock, run)
    rate = HINT_MARGIN * 100.0  # tokens/s; the bucket holds one second of it
    # The first used 80 with none left: the next (40) waits for 80 + 40 to
    # refill; the big one (200) for a full bucket, leaving 101 of debt; the
    # last (40) for that debt and its own 40.
    assert times == pytest.approx([120 / rate, 120 / rate + 1.0, 120 / rate + 1.0 + 141 / rate])


@pytest.mark.anyio
async def test_configured_rpm_is_exact_and_only_a_tighter_header_lowers_it() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, rpm=600, max_concurrency=16)
    rates: list[float | None] = []

    async def run() -> None:
        for limit in (600, 300):
            hints = RateHeaders(requests=(Budget(limit=limit),))
            limiter.release(await limiter.acquire(1), "ok", hints=hints)
            rates.append(limiter.pace.rate(clock.now()))

    await _in_virtual_time(clock, run)
    assert rates == [10.0, pytest.approx(5.0 * HINT_MARGIN)]


@pytest.mark.anyio
async def test_remaining_zero_pauses_until_a_request_is_back() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=4)
    times: list[float] = []

    async def run() -> None:
        p = await limiter.acquire(1)
        limiter.release(p, "ok", hints=RateHeaders(requests=(Budget(remaining=0, reset_s=0.25),)))
        p = await limiter.acquire(1)
        times.append(clock.now())
        limiter.release(p, "ok")

    await _in_virtual_time(clock, run)
    assert times == [pytest.approx(0.25)]


@pytest.mark.anyio
async def test_an_endpoint_refusing_everything_stalls_after_the_patience() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock, max_concurrency=4, patience_s=10.0, max_quiet_s=2.0)
    probes: list[float] = []

    async def run() -> None:
        with pytest.raises(Stalled):
            while True:
                p = await limiter.acquire(1)
                probes.append(clock.now())
                limiter.release(p, "throttled")

    await _in_virtual_time(clock, run)
    # the quiet period doubles up to max_quiet_s: few probes, then a clear stop
    assert 5 <= len(probes) <= 12
    assert all(b - a <= 2.0 + 1e-9 for a, b in itertools.pairwise(probes))
    assert clock.now() == pytest.approx(10.0, abs=2.0)


# ---------------------------------------------------------------- closed loop


class ModelServer:
    """A rate-limited server in virtual time: a request bucket (or fixed
    windows), an optional parallel cap answered with a 60 s Retry-After,
    and OpenAI-style headers, a gateway's (limit and remaining counted
    before the request, no reset; a 429 says only ``retry-after`` in whole
    seconds) or none. ``reply_s`` delays each answer after the server is
    done with it (so the client counts it in flight longer than the server
    does); ``jitter_s`` delays arrivals by up to that much (a loaded loop)."""

    def __init__(
        self,
        clock: FakeClock,
        *,
        rpm: float | None = None,
        burst: float = 2.0,
        window_s: float | None = None,
        cap: int | None = None,
        hints: bool = False,
        gateway: bool = False,
        latency_s: tuple[float, float] = (0.15, 0.45),
        reply_s: float = 0.0,
        jitter_s: float = 0.0,
        refuse: frozenset[int] = frozenset(),
        tpm: float | None = None,
        seed: int = 1,
    ) -> None:
        self.clock = clock
        self.latency_s = latency_s
        self.rpm = rpm
        self.rng = random.Random(seed)
        self.cap = cap
        self.hints = hints
        self.gateway = gateway
        self.reply_s = reply_s
        self.jitter_s = jitter_s
        self.refuse = refuse
        """Arrivals (counted from 0) refused as if the bucket were empty."""
        self.arrivals = 0
        self.window_s = window_s
        self.window_used = 0
        self.bucket = Bucket(rpm / 60, burst, 0.0) if rpm and not window_s else None
        self.in_flight = 0
        self.accepted: list[float] = []
        self.refused = 0
        self.tokens = Bucket(tpm / 60, tpm / 60, 0.0) if tpm else None
        """Tokens metered on usage: a request needs one token's worth to be
        admitted and is charged what it used when it is done."""
        self.used: list[tuple[float, int]] = []

    def _limited(self, now: float) -> RateHeaders | None:
        if self.cap is not None and self.in_flight >= self.cap:
            return RateHeaders(retry_after_s=60.0)
        if self.window_s is not None and self.rpm is not None:
            window = math.floor(now / self.window_s)
            if window != getattr(self, "_window", None):
                self._window, self.window_used = window, 0
            if self.window_used >= self.rpm * self.window_s / 60:
                return RateHeaders()  # no hint at all
            self.window_used += 1
            return None
        if self.bucket is not None:
            wait = self.bucket.wait_s(1, now)
            self.arrivals += 1
            if self.arrivals - 1 in self.refuse:
                wait = max(wait, 1.0 / self.bucket.rate)
            if wait > 0:
                if self.gateway:
                    return RateHeaders(retry_after_s=float(max(1, math.ceil(wait))))
                if not self.hints:
                    return RateHeaders()
                return RateHeaders(retry_after_s=wait, requests=(self._budget(),))
            self.bucket.take(1, now)
        if self.tokens is not None and self.tokens.wait_s(1, now) > 0:
            return RateHeaders()
        return None

    def _budget(self) -> Budget:
        assert self.bucket is not None and self.rpm is not None
        b = self.bucket
        return Budget(
            limit=int(self.rpm),
            remaining=max(0, int(b.level)),
            reset_s=(b.capacity - b.level) / b.rate,
        )

    def _success_hints(self) -> RateHeaders:
        if self.gateway and self.bucket is not None and self.rpm is not None:
            left = max(0, int(self.bucket.level)) + 1  # counted before this one
            return RateHeaders(requests=(Budget(limit=int(self.rpm), remaining=left),))
        if self.hints and self.bucket is not None:
            return RateHeaders(requests=(self._budget(),))
        return RateHeaders()

    async def request(self, size: int = 0) -> tuple[int, RateHeaders]:
        if self.jitter_s:
            await self.clock.sleep(self.rng.uniform(0.0, self.jitter_s))
        now = self.clock.now()
        refused = self._limited(now)
        if refused is not None:
            self.refused += 1
            if self.reply_s:
                await self.clock.sleep(self.reply_s)
            return 429, refused
        self.accepted.append(now)
        hints = self._success_hints()
        self.in_flight += 1
        await self.clock.sleep(self.rng.uniform(*self.latency_s))
        if self.tokens is not None:
            self.tokens.take(size, self.clock.now())
            self.used.append((self.clock.now(), size))
        self.in_flight -= 1
        if self.reply_s:
            await self.clock.sleep(self.reply_s)
        return 200, hints

    def ratio(self) -> float:
        t = self.accepted
        assert self.rpm is not None
        return (len(t) - 1) / (t[-1] - t[0]) * 60 / self.rpm

    def token_ratio(self) -> float:
        """Tokens served per second over the limit, as the bench counts
        them: the bucket's first second is not counted, and the run ends
        with the last charge."""
        assert self.tokens is not None
        start, end = self.accepted[0], self.used[-1][0]
        burst = self.tokens.capacity
        return (sum(n for _, n in self.used) - burst) / (end - start) / self.tokens.rate


class _Refused(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


README_POLICY = RetryConfig(max_attempts=4, backoff_base_s=0.2, backoff_max_s=5.0)


async def closed_loop(
    server: ModelServer, requests: int, *, max_concurrency: int = 16
) -> tuple[float, RateLimiter]:
    """``requests`` samples through the limiter and the retry loop, exactly
    as the generator drives them; returns the virtual time taken."""
    clock = server.clock
    limiter = RateLimiter(clock, max_concurrency=max_concurrency, max_quiet_s=5.0)
    rng = random.Random(3)

    sizes = random.Random(5)

    async def one() -> None:
        size = sizes.randint(100, 600)

        async def attempt(number: int) -> None:
            permit: Permit = await limiter.acquire(Ask(prompt=size, max_tokens=0))
            status, hints = await server.request(size)
            if status == 200:
                limiter.release(permit, "ok", hints=hints, used_tokens=size)
                return
            reading = limiter.release(permit, "throttled", hints=hints)
            failure = Failure(kind="status", status=429, retry_after_s=hints.retry_after_s)
            raise _Refused(msgspec.structs.replace(failure, throttle=reading))

        result = await call_with_retry(
            attempt,
            README_POLICY,
            lambda e: e.failure if isinstance(e, _Refused) else None,
            clock=clock,
            rng=rng,
        )
        assert result.decision is None, result.decision  # no sample is lost

    async with anyio.create_task_group() as tg:
        tg.start_soon(clock.autojump)
        async with anyio.create_task_group() as senders:
            for _ in range(requests):
                senders.start_soon(one)
        tg.cancel_scope.cancel()
    return clock.now(), limiter


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_with_openai_headers_never_sees_a_429() -> None:
    server = ModelServer(FakeClock(), rpm=600, hints=True)
    await closed_loop(server, 120)
    assert server.refused == 0 and server.ratio() > 0.95


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("rpm", [240.0, 600.0])
async def test_closed_loop_learns_a_hintless_rate_limit(rpm: float) -> None:
    """Burst 2, nothing but bare 429s: the limit is found with a handful of
    429s and the pace ends close under it. At 240 rpm a bare 429 with two
    in flight once read as a parallel cap of one (0.83 of the limit), and
    a floor from two 429s 0.8 s apart paced the run at 0.32 of it; before
    the bucket fit, a probe inside a bracket too wide to close cost a 5th,
    and before the likely range of a whole-number burst, a climb into a
    loose top a 4th (the target: 2% of 164 requests)."""
    server = ModelServer(FakeClock(), rpm=rpm)
    _, limiter = await closed_loop(server, 164)
    assert server.refused <= 3
    assert server.ratio() > 0.95
    assert limiter.rate_rpm is not None and 0.9 * rpm < limiter.rate_rpm < 1.05 * rpm
    assert limiter.learned.learner is None  # requests are what is limited, not tokens


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_refused_token_probe_refits_before_the_climb_back() -> None:
    """The bench's run (164 requests, 60k tpm on usage, bare 429s) on the
    seed where a probe far into a wide likely range was refused: the fit
    is read again at once, so the climb back (1 s) stops inside the
    narrowed range; refitted on the next success 2 s later, it reached
    the refused pace again and cost a 4th 429 (2.4%, over the 2% target)."""
    server = ModelServer(FakeClock(), tpm=60_000.0, seed=25)
    _, limiter = await closed_loop(server, 164)
    assert server.refused <= 3
    assert server.token_ratio() >= 0.95
    assert limiter.learned.learner is not None and limiter.learned.learner.top is not None


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_token_limit_at_the_top_of_the_likely_range_is_reached() -> None:
    """The bench's run on the seed where the slow start's refusals put the
    likely range's top at the limit itself: the debt is waited out at 0.65
    of it, so the run is won back after. Before the climb aimed at an
    untested top, gaps followed the last request's tokens and a narrow
    untested range sent on one token, it served 0.93-0.94 of the limit."""
    server = ModelServer(FakeClock(), tpm=60_000.0, seed=18)
    _, limiter = await closed_loop(server, 164)
    assert server.refused <= 3
    assert server.token_ratio() >= 0.95
    assert limiter.learned.learner is not None and limiter.learned.learner.top is None


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_paced_refusal_is_waited_out_until_the_server_can_admit() -> None:
    """A refusal says the server's bucket held under one token when that
    request arrived; the requests still out were charged after. Synced only
    to the fitted bucket, the budget held 157 tokens when the server was 10
    in debt, and the first request after the pause was a 4th 429 (model
    seed 179, 0.9656 of the limit)."""
    server = ModelServer(FakeClock(), tpm=60_000.0, seed=179)
    await closed_loop(server, 164)
    assert server.refused <= 3
    assert server.token_ratio() >= 0.95


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_freed_slots_are_spread_before_the_first_429_comes_back() -> None:
    """A 429 that takes 3 ms to come back (the bench's fake server): sent
    together, freed slots met one empty budget and two were refused before
    the client heard of the first, a 4th 429 in the run (model seed 16; over
    seeds 0-127, 22 runs spent a 4th 429 before unpaced sends were spread, 2
    after)."""
    server = ModelServer(FakeClock(), tpm=60_000.0, seed=16, reply_s=0.003)
    await closed_loop(server, 164)
    assert server.refused <= 3
    assert server.token_ratio() >= 0.95


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_learned_token_range_is_refitted_to_the_end() -> None:
    """The likely range's low end rises with every admission, and the token
    goal with it: refits go on after the bracket closes (they stopped there,
    and the pace stayed at its goal of 17 s into the run, model seed 35)."""
    server = ModelServer(FakeClock(), tpm=60_000.0, seed=35)
    end, limiter = await closed_loop(server, 164)
    assert limiter.learned.learner is not None and limiter.fitted_at is not None
    assert end - limiter.fitted_at <= 2 * REFIT_S


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_learns_a_hintless_token_limit() -> None:
    """60k tokens per minute metered on usage (100-600 tokens a request),
    bare 429s: slow start puts the server in debt, and the first request
    after the pause is refused too; the limiter reads that as tokens, waits
    the debt out and paces tokens, serving at least 0.95 of the limit with
    1% of requests refused (paced by requests until two 429s came at a
    request rate already proven, it once spent 5%, and 7% in the bench;
    a debt reckoned a little short once undid the reading, and a climb
    with no likely range overshot the limit by a quarter)."""
    server = ModelServer(FakeClock(), tpm=60_000.0)
    _, limiter = await closed_loop(server, 400)
    assert server.token_ratio() >= 0.95
    assert server.refused <= 0.01 * 400
    assert limiter.learned.learner is not None and limiter.tokens is not None


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_a_parallel_cap_with_a_long_retry_after_is_not_waited_out() -> None:
    told, _ = await closed_loop(ModelServer(FakeClock()), 100, max_concurrency=4)
    server = ModelServer(FakeClock(), cap=4)
    took, limiter = await closed_loop(server, 100)
    assert took < 1.5 * told  # never a 60 s pause
    assert limiter.parallel.cap == 4 and server.refused <= 4


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_outlasts_a_per_minute_window_with_the_readme_policy() -> None:
    """60 per fixed minute, bare 429s when a window is used up: with 4
    attempts and a 5 s backoff cap no sample is lost (closed_loop asserts
    it), and the pace learned is about a minute's worth per minute."""
    server = ModelServer(FakeClock(), rpm=60, window_s=60.0)
    took, limiter = await closed_loop(server, 150)
    assert 120 < took < 190
    # Its refused probes looked like token debt once; the next undid that.
    assert limiter.learned.refuted and limiter.tokens is None
    # While a window is used up, one probe at a time, at most 5 s apart
    # after a few doublings: about a dozen 429s per minute, not one per sample.
    assert server.refused < 20 * 3
    assert limiter.rate_rpm is not None and 45 < limiter.rate_rpm < 75


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_slow_generations_reach_full_concurrency_in_one_round_trip() -> None:
    """No limits, 30 s per answer: slow start doubles what the server has
    admitted (each new level PROBE_GAP_S after the last send), so the run
    takes about one round trip more than 64 / 16 (four without it)."""
    server = ModelServer(FakeClock(), latency_s=(30.0, 30.0))
    took, limiter = await closed_loop(server, 64)
    assert took < (1 + 64 / 16) * 30.0 + 16 * PROBE_GAP_S + 1.0
    assert limiter.parallel.allowed == 16 and server.refused == 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_a_parallel_cap_is_found_though_answers_arrive_late() -> None:
    """Issue 14 regression: answers read 50 ms after the server is done, so
    the client saw requests "at 5 in flight" admitted under a cap of 4,
    read the cap's next 429 as a rate limit, waited its 60 s and then paced
    the rest of the run at the few requests per minute served over that
    pause (9x the told run's time here, 66x in the bench). Within 2x of a
    run told max_concurrency 4, with a handful of 429s."""
    told, _ = await closed_loop(ModelServer(FakeClock(), reply_s=0.05), 164, max_concurrency=4)
    server = ModelServer(FakeClock(), cap=4, reply_s=0.05)
    took, _ = await closed_loop(server, 164)
    assert took < 2 * told
    assert server.refused <= 5


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_closed_loop_gateway_headers_at_600_rpm_survive_a_jittered_429() -> None:
    """Issue 14 regression: the gateway dialect states the limit (remaining
    counted before the request, no reset) and rounds a 429's wait up to a
    whole second. Arrivals bunched on a loaded machine draw a 429 (here the
    20th arrival is refused); the second waited out after it was read as
    a fixed window, and the pace stayed at the rate served over it (0.4-0.5
    of R). Now: >= 0.95 of R, <= 2% of requests refused (the whole-second
    pause alone costs 3% of this 30 s run)."""
    server = ModelServer(FakeClock(), rpm=600, gateway=True, refuse=frozenset({20}))
    await closed_loop(server, 300)
    assert server.refused >= 1
    assert server.refused <= 0.02 * 300
    assert server.ratio() >= 0.95
