"""A real ``aioeval serve`` front end on 127.0.0.1 for the tests: in process
(`serving`) or as the ``aioeval serve`` command (`ServeProcess`), raw
HTTP/1.1 over a socket, and one POST."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import anyio
import anyio.abc

import aioeval
from aioeval.service import Scorer, ServeLimits
from aioeval.service.http import Service

ADD = {
    "prompt": "def add(a, b):\n",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    "entry_point": "add",
}
"""A caller's own HumanEval problem."""
TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json", **AUTH}


def config(*overrides: str) -> aioeval.RunConfig:
    return aioeval.load_config(overrides=["params.workers=1", *overrides])


@asynccontextmanager
async def serving(
    *overrides: str,
    limits: ServeLimits | None = None,
    token: str | None = TOKEN,
    allow_hosts: tuple[str, ...] = (),
    **scorer: Any,
) -> AsyncIterator[tuple[str, Service]]:
    """(url, service) of a server over a one-slot scorer."""
    async with Scorer(config(*overrides), **scorer) as warm:
        service = Service(warm, token, limits=limits, allow_hosts=allow_hosts)
        try:
            yield await service.start("127.0.0.1", 0), service
        finally:
            await service.aclose()


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


async def post(url: str, body: Any, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """POST ``body`` (bytes as they are, anything else as JSON) to /v1/score."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with (
        aiohttp.ClientSession() as http,
        http.post(url + "/v1/score", data=data, headers=dict(headers or JSON)) as r,
    ):
        return r.status, await r.json(content_type=None)


async def exchange(url: str, request: bytes) -> bytes:
    """Send raw bytes on a new connection; what the server answers until it
    closes the connection."""
    async with await anyio.connect_tcp("127.0.0.1", port_of(url)) as stream:
        await stream.send(request)
        return await until_closed(stream)


async def first_answer(url: str, request: bytes) -> bytes:
    """Send raw bytes on a new connection; the first bytes the server answers."""
    async with await anyio.connect_tcp("127.0.0.1", port_of(url)) as stream:
        await stream.send(request)
        return await stream.receive()


async def until_closed(stream: anyio.abc.ByteStream) -> bytes:
    out = b""
    try:
        while True:
            out += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
        return out


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ServeProcess:
    """``python -m aioeval serve ARGS`` on a free port, its output lines
    collected by a thread (a line that never comes cannot hang a test)."""

    def __init__(self, *args: str, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "aioeval", "serve", "--port", str(self.port), *args]
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=_collect, args=(stream, into), daemon=True).start()

    async def line(self, words: str, *, stderr: bool = False, within_s: float = 60) -> str:
        """The first output line that has ``words`` (waiting for it)."""
        lines = self.err if stderr else self.out
        with anyio.fail_after(within_s):
            while True:
                found = [line for line in lines if words in line]
                if found:
                    return found[0]
                if self.proc.poll() is not None and not found:
                    await anyio.sleep(0.1)  # the reader threads catch up
                    found = [line for line in lines if words in line]
                    assert found, (words, self.out, self.err)
                await anyio.sleep(0.01)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _collect(stream: Any, into: list[str]) -> None:
    for line in stream:
        into.append(line)
