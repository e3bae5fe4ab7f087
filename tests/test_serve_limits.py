"""What a caller of ``aioeval serve`` may hold (`aioeval.service._limits`):
time to send headers and body, connections, request bytes; and a caller
that hangs up cancels its work. A real server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import anyio
import pytest
from hostcheck import candidate_uids, processes_of
from servecheck import (
    JSON,
    exchange,
    first_answer,
    port_of,
    post,
    serving,
    status_of,
    until_closed,
)

from aioeval.executors.local import LocalPool
from aioeval.service import ServeLimits

pytestmark = pytest.mark.anyio

SLEEPER = "    import time\n    time.sleep(60)\n"
HEAD = (
    b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n"
    b"Content-Type: application/json\r\n"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _item(completion: str = "    return 1\n") -> dict[str, str]:
    return {"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": completion}


async def test_half_sent_requests_are_closed_and_refuse_nobody() -> None:
    """300 connections that send part of their headers or body: a caller
    still gets its verdict meanwhile; half-sent headers are closed after
    the header timeout, half-sent bodies answered 408 after the body one."""
    limits = ServeLimits(header_timeout_s=2, body_timeout_s=2)
    async with serving(limits=limits) as (url, _):
        streams = []
        for i in range(300):
            stream = await anyio.connect_tcp("127.0.0.1", port_of(url))
            if i % 2:
                await stream.send(HEAD + b"Content-Length: 1000\r\n\r\n{")
            else:
                await stream.send(b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            streams.append(stream)
        status, row = await post(url, _item())
        assert status == 200 and row["status"] == "failed"
        answers: list[bytes] = [b""] * len(streams)

        async def drain(i: int) -> None:
            answers[i] = await until_closed(streams[i])

        with anyio.fail_after(30):  # far less than aiohttp's own hour
            async with anyio.create_task_group() as tg:
                for i in range(len(streams)):
                    tg.start_soon(drain, i)
        for stream in streams:
            await stream.aclose()
    assert all(answer == b"" for answer in answers[::2])
    assert {status_of(answer) for answer in answers[1::2]} == {408}


async def test_connections_past_the_cap_get_503() -> None:
    async with serving(limits=ServeLimits(max_connections=5)) as (url, _):
        idle = [await anyio.connect_tcp("127.0.0.1", port_of(url)) for _ in range(5)]
        refused = await exchange(url, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert status_of(refused) == 503 and b"--max-connections" in refused
        for stream in idle:
            await stream.aclose()
        with anyio.fail_after(30):
            while True:
                answer = await exchange(
                    url, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                )
                if status_of(answer) == 200:
                    break
                await anyio.sleep(0.01)


async def test_request_bytes_are_bounded_all_together_and_given_back() -> None:
    """Two requests of 1.5 MiB declared against a budget that holds one:
    the second is refused with 503 before its body is read; once the first
    is answered its bytes are free again."""
    limits = ServeLimits(max_memory_mb=10, body_timeout_s=60)
    async with serving(limits=limits) as (url, service):
        first = await anyio.connect_tcp("127.0.0.1", port_of(url))
        await first.send(HEAD + b"Content-Length: 1572864\r\nConnection: close\r\n\r\n{")
        with anyio.fail_after(30):
            while service.budget.held == 0:
                await anyio.sleep(0.01)
        second = HEAD + b"Content-Length: 1572864\r\nConnection: close\r\n\r\n"
        refused = await first_answer(url, second)
        assert status_of(refused) == 503 and b"retry later" in refused
        assert b"Retry-After: 1" in refused
        await first.send(b" " * (1572864 - 1))
        assert status_of(await until_closed(first)) == 400  # "{" and spaces: not JSON
        assert service.budget.held == 0
        big = json.dumps(_item("    return 1\n" + "#" * 1_500_000)).encode()
        status, row = await post(url, big)
        assert status == 200 and row["status"] == "failed"
        async with (
            aiohttp.ClientSession() as http,
            http.post(url + "/v1/score", data=_chunks(big), headers=JSON) as r,
        ):
            # A chunked body reserves the largest body's worth: over this budget.
            assert r.status == 503 and r.headers.get("Transfer-Encoding") is None
    assert service.budget.held == 0


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 2**16):
        yield data[i : i + 2**16]


async def test_a_caller_that_hangs_up_cancels_its_queued_and_running_items() -> None:
    """One slot. A caller posts six sleepers and hangs up while the first
    runs: all six are cancelled (the sleeper's processes killed), and the
    next caller is scored without waiting behind them."""
    overrides = ("params.sandbox.wall_timeout_s=120",)
    async with serving(*overrides) as (url, service):
        scorer = service.scorer
        assert isinstance(scorer.pool, LocalPool)
        batch = {"items": [_item(SLEEPER + f"# {i}\n") for i in range(6)]}
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, url, batch)
            with anyio.fail_after(30):
                while scorer.in_flight < 1:
                    await anyio.sleep(0.01)
            uids = candidate_uids(scorer.pool)
            tg.cancel_scope.cancel()  # the client closes its connection
        with anyio.fail_after(60):  # far less than one sleeper's 120 s
            while scorer.running or scorer.waiting:
                await anyio.sleep(0.01)
            status, row = await post(url, _item())
        assert status == 200 and row["status"] == "failed"
        assert processes_of(uids) == []
        assert scorer.counts["timeout"] == 0


async def test_client_timeouts_leave_no_budget_held() -> None:
    """Callers that give up mid-request (before their answer) hand their
    reserved bytes back."""
    async with serving("params.sandbox.wall_timeout_s=120") as (url, service):
        timeout = aiohttp.ClientTimeout(total=0.5)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            for _ in range(3):
                with pytest.raises(TimeoutError):
                    await http.post(
                        url + "/v1/score", data=json.dumps(_item(SLEEPER)), headers=JSON
                    )
        with anyio.fail_after(30):
            while service.budget.held or service.scorer.running:
                await anyio.sleep(0.01)
