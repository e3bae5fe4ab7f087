"""The fake server's own behaviours, read with plain aiohttp requests: the
header dialects, the limits it enforces, injected faults, and its command
line on a busy port."""

from __future__ import annotations

import socket
import sys
from typing import Any

import aiohttp
import anyio
import pytest

from aioeval.testing.fake_limits import ServerLimits
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI

BODY = {"model": "fake-model", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}


async def post(
    session: aiohttp.ClientSession, fake: FakeOpenAI, body: dict[str, Any] = BODY
) -> tuple[int, dict[str, str]]:
    async with session.post(fake.url + "/chat/completions", json=body) as resp:
        await resp.read()
        return resp.status, {k.lower(): v for k, v in resp.headers.items()}


@pytest.mark.anyio
async def test_openai_dialect_counts_after_the_request_with_resets() -> None:
    cfg = FakeConfig(rpm=60, burst=2)
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        status, h = await post(s, fake)
        assert status == 200
        assert h["x-ratelimit-limit-requests"] == "60"
        assert h["x-ratelimit-remaining-requests"] == "1"
        assert h["x-ratelimit-reset-requests"].endswith("ms")
        await post(s, fake)
        status, h = await post(s, fake)
    assert status == 429 and int(h["retry-after"]) >= 1 and "retry-after-ms" in h
    assert h["x-ratelimit-remaining-requests"] == "0"


@pytest.mark.anyio
async def test_gateway_dialect_counts_before_the_request_without_resets() -> None:
    cfg = FakeConfig(rpm=60, burst=2, hints="gateway")
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        statuses = [await post(s, fake) for _ in range(3)]
    (ok1, h1), (ok2, h2), (refused, h3) = statuses
    assert (ok1, ok2, refused) == (200, 200, 429)
    assert (
        h1["x-ratelimit-remaining-requests"] == "2" and h2["x-ratelimit-remaining-requests"] == "1"
    )
    assert h2["x-ratelimit-api_key-remaining-requests"] == "1"
    assert h2["llm_provider-x-ratelimit-limit-requests"] == "600"
    assert not any("reset" in k for k in h1)
    assert {k for k in h3 if "ratelimit" in k or "retry" in k} == {"llm_provider-retry-after"}


@pytest.mark.anyio
async def test_no_dialect_and_fixed_windows() -> None:
    cfg = FakeConfig(rpm=120, window_s=1.0, hints="none")
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        statuses = [await post(s, fake) for _ in range(3)]
    assert [st for st, _ in statuses] == [200, 200, 429]
    assert not any("ratelimit" in k or "retry" in k for _, h in statuses for k in h)


def test_a_fixed_window_answers_retry_after_until_it_ends() -> None:
    limits = ServerLimits(0.0, rpm=60, window_s=60.0, dialect="retry-after")
    assert all(limits.admit(t / 10, charge=1, in_flight=0) is None for t in range(60))
    refusal = limits.admit(20.0, charge=1, in_flight=0)
    assert refusal is not None and refusal.headers == {"Retry-After": "40"}
    assert limits.headers(20.0) == {}  # nothing on successes
    assert limits.admit(60.0, charge=1, in_flight=0) is None  # the next minute


def test_lying_headers_say_nothing_left_on_successes_and_nothing_on_a_429() -> None:
    limits = ServerLimits(0.0, rpm=60, burst=1, dialect="liar", seed=3)
    said = {limits.headers(0.0)["x-ratelimit-remaining-requests"] for _ in range(50)}
    assert said == {"-1", "0"}
    assert limits.admit(0.0, charge=1, in_flight=0) is None
    refusal = limits.admit(0.1, charge=1, in_flight=0)
    assert refusal is not None and refusal.headers == {}


def test_another_client_on_the_key_takes_its_share_at_random_times() -> None:
    limits = ServerLimits(0.0, rpm=600, burst=10, others_rpm=200, dialect="none", seed=1)
    ours = sum(limits.admit(t / 2, charge=1, in_flight=0) is None for t in range(1200))
    # ten minutes at 120 a minute, with room for both: it took about 200 a minute
    assert 1500 <= limits.others_taken <= 2500 and ours > 1100
    # and a client that wants everything gets only what it leaves
    greedy = ServerLimits(0.0, rpm=600, burst=10, others_rpm=200, dialect="none", seed=1)
    ours = sum(greedy.admit(t / 100, charge=1, in_flight=0) is None for t in range(60000))
    assert 0 < greedy.others_taken and ours + greedy.others_taken <= 600 * 10 + 10


@pytest.mark.anyio
async def test_parallel_cap_answers_a_long_retry_after() -> None:
    cfg = FakeConfig(max_parallel=2, latency_s=(0.3, 0.3))
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        results: list[tuple[int, dict[str, str]]] = []

        async def one() -> None:
            results.append(await post(s, fake))

        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(one)
            while fake.in_flight < 2:
                await anyio.sleep(0.01)
            results.append(await post(s, fake))
    assert sorted(st for st, _ in results) == [200, 200, 429]
    refused = next(h for st, h in results if st == 429)
    assert refused["retry-after"] == "60" and fake.parallel_refused == 1


@pytest.mark.anyio
async def test_tpm_metered_on_usage_admits_while_positive_and_charges_usage() -> None:
    # 60 tokens per second, a one-second bucket: max_tokens is not what counts
    cfg = FakeConfig(tpm=3600, tpm_counts="usage")
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        big = {**BODY, "max_tokens": 10_000}
        first, _ = await post(s, fake, big)
        assert first == 200 and fake.tokens > 0
        statuses = [(await post(s, fake, big))[0] for _ in range(30)]
    assert 429 in statuses and statuses.count(200) >= 5


@pytest.mark.anyio
async def test_tpm_metered_on_max_tokens_charges_up_front() -> None:
    cfg = FakeConfig(tpm=3600, tpm_counts="max_tokens")
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        ok, _ = await post(s, fake, {**BODY, "max_tokens": 40})
        refused, _ = await post(s, fake, {**BODY, "max_tokens": 40})
    assert (ok, refused) == (200, 429)


@pytest.mark.anyio
async def test_every_nth_request_faults() -> None:
    cfg = FakeConfig(fault_every={"503": 3, "500": 4})
    async with FakeOpenAI(cfg) as fake, aiohttp.ClientSession() as s:
        statuses = [(await post(s, fake))[0] for _ in range(8)]
    assert statuses == [200, 200, 503, 500, 200, 503, 200, 500]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_cli_on_a_busy_port_says_so_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with anyio.fail_after(30):
            proc = await anyio.run_process(
                [sys.executable, "-m", "aioeval.fake_openai", "--port", str(port)], check=False
            )
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, lines
    assert f"port {port}" in lines[0] and "already in use" in lines[0]
