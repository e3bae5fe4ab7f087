"""Who may call ``aioeval serve`` (`aioeval.service._guard`): a token by
default, Host and Origin checked, JSON only, all decided before the body is
read; through the real command and a real server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest
from servecheck import (
    AUTH,
    JSON,
    ServeProcess,
    exchange,
    first_answer,
    post,
    serving,
    status_of,
)

pytestmark = pytest.mark.anyio

ITEM = {"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": "    return 1\n"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_serve_makes_a_token_prints_it_and_requires_it(tmp_path: Path) -> None:
    server = ServeProcess("--set", "params.workers=1", cwd=tmp_path)
    try:
        await server.line("serving on")
        async with aiohttp.ClientSession() as http:
            async with http.get(server.url + "/metrics") as r:
                assert r.status == 401
            token = (await server.line("token")).split()[2]
            assert len(token) >= 32
            async with http.get(server.url + "/metrics", headers=_bearer(token)) as r:
                assert r.status == 200
            async with http.get(server.url + "/healthz") as r:
                assert r.status == 200  # a load balancer's probe needs no token
        assert server.stop() == 0
    finally:
        server.stop()
    assert not any("warning" in line for line in server.err)


async def test_serving_without_a_token_takes_a_flag_and_warns(tmp_path: Path) -> None:
    server = ServeProcess("--no-token", "--set", "params.workers=1", cwd=tmp_path)
    try:
        warning = await server.line("without a token", stderr=True)
        assert "warning" in warning and server.url in warning
        async with aiohttp.ClientSession() as http, http.get(server.url + "/metrics") as r:
            assert r.status == 200
    finally:
        server.stop()
    assert not any("token " in line for line in server.out)


async def test_token_env_and_no_token_do_not_mix(tmp_path: Path) -> None:
    server = ServeProcess("--no-token", "--token-env", "X", cwd=tmp_path)
    assert server.proc.wait(timeout=60) == 2
    line = await server.line("not allowed with", stderr=True)
    assert "--no-token" in line


async def test_a_malformed_authorization_header_is_a_401() -> None:
    async with serving() as (url, _):
        for value in (b"Bearer \xc3\xa9\xff", b"\xff\xfe", b"Bearer", b"bearer s3cret x"):
            answer = await exchange(
                url,
                b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                b"Authorization: " + value + b"\r\n\r\n",
            )
            assert status_of(answer) == 401, (value, answer[:200])
            assert b"bearer token" in answer


async def test_the_token_is_checked_before_the_body_is_sent() -> None:
    """A client that waits for ``100 Continue`` with a wrong token gets its
    401 at once, and sends nothing."""
    async with serving() as (url, _):
        head = (
            b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 7000000\r\nExpect: 100-continue\r\n"
        )
        wrong = await first_answer(url, head + b"Authorization: Bearer nope\r\n\r\n")
        assert status_of(wrong) == 401
        right = await first_answer(url, head + b"Authorization: Bearer s3cret\r\n\r\n")
        assert right.startswith(b"HTTP/1.1 100 Continue")


async def test_a_foreign_host_or_origin_is_refused() -> None:
    """DNS rebinding (a name that is not this server in ``Host``) and a web
    page's cross-site post (a foreign ``Origin``) get 403; the server's own
    names, IP literals, a name allowed by the operator and no Origin pass."""
    async with serving(allow_hosts=("scorer.internal",)) as (url, service):
        port = url.rsplit(":", 1)[1]
        refused = [
            {"Host": "evil.example"},
            {"Host": f"evil.example:{port}"},
            {"Host": "localhost.evil.example"},
            {"Origin": "http://evil.example"},
            {"Origin": "null"},
            {"Origin": f"http://localhost:{int(port) + 1}"},
        ]
        for extra in refused:
            status, answer = await post(url, ITEM, {**JSON, **extra})
            assert status == 403, (extra, answer)
        accepted = [
            {},
            {"Host": f"localhost:{port}"},
            {"Host": "[::1]"},
            {"Host": "scorer.internal"},
            {"Origin": url},
        ]
        for extra in accepted:
            status, answer = await post(url, ITEM, {**JSON, **extra})
            assert status == 200, (extra, answer)
    assert service.scorer.executed == 1  # the refused ones never reached the scorer


async def test_a_body_that_is_not_declared_json_is_refused() -> None:
    """A web page may post ``text/plain`` (or a form) across sites without
    asking the server first; only ``application/json`` is read."""
    async with serving() as (url, service):
        body = json.dumps(ITEM).encode()
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""):
            status, answer = await post(url, body, {**AUTH, "Content-Type": kind})
            assert status == 415 and "application/json" in answer["error"], (kind, answer)
        status, _ = await post(
            url, body, {**AUTH, "Content-Type": "application/json; charset=utf-8"}
        )
        assert status == 200
    assert service.scorer.executed == 1


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
