"""``aioeval serve`` under load from callers who are not honest: memory and
the honest callers' latency.

A real ``aioeval serve`` (subprocess, 127.0.0.1, a token, ``--workers``
slots) and, in one run:

- ``baseline``: ``--honest`` calls, one at a time, of a caller's own
  HumanEval problem with a new correct answer each (so none is cached):
  p50 and p99 latency, and the server's resident memory.
- ``large_bodies``: ``--bodies`` concurrent requests of ``--body-mb`` MiB
  each (under the body limit), sent while the honest calls run again:
  the server's peak and settled RSS, the answers' statuses, the honest
  latency and its ratio to the baseline.
- ``idle_connections``: ``--idle`` connections that send half a request
  line and stall, held open while the honest calls run again: RSS, the
  honest latency and its ratio, and how many of the stalled ones the
  server closed.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import aiohttp

TOKEN = "bench-token"
PROMPT = "def add(a, b):\n"
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Server:
    def __init__(self, workers: int) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "AIOEVAL_BENCH_TOKEN": TOKEN}
        cmd = [sys.executable, "-m", "aioeval", "serve", "--port", str(self.port)]
        cmd += ["--token-env", "AIOEVAL_BENCH_TOKEN", "--set", f"params.workers={workers}"]
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    async def ready(self, http: aiohttp.ClientSession) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"aioeval serve exited with {self.proc.returncode}")
            try:
                async with http.get(self.url + "/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        raise SystemExit("aioeval serve did not answer /healthz within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


async def _honest(http: aiohttp.ClientSession, url: str, n: int, tag: str) -> dict[str, Any]:
    """n calls one at a time: latency p50/p99 (ms), all verdicts passed."""
    took, ok = [], 0
    for i in range(n):
        body = {
            "benchmark": "human-eval",
            "problem": {"prompt": PROMPT, "test": TEST, "entry_point": "add"},
            "completion": f"    return a + b  # {tag} {i}\n",
        }
        t0 = time.perf_counter()
        async with http.post(url + "/v1/score", json=body, headers=HEADERS) as r:
            got = await r.json(content_type=None)
        took.append((time.perf_counter() - t0) * 1000)
        ok += r.status == 200 and got.get("status") == "passed"
    took.sort()
    return {
        "p50_ms": round(statistics.median(took), 1),
        "p99_ms": round(took[min(len(took) - 1, int(len(took) * 0.99))], 1),
        "passed": ok,
        "calls": n,
    }


async def _watch_rss(pid: int, peak: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], _rss_mb(pid))
        await asyncio.sleep(0.05)


async def _large(http: aiohttp.ClientSession, url: str, count: int, mb: float) -> dict[str, int]:
    filler = "x" * int(mb * 1024 * 1024 - 200)
    body = json.dumps(
        {"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": filler}
    ).encode()
    statuses: dict[str, int] = {}

    async def one() -> None:
        try:
            async with http.post(url + "/v1/score", data=body, headers=HEADERS) as r:
                await r.read()
                key = str(r.status)
        except aiohttp.ClientError as exc:
            key = type(exc).__name__
        statuses[key] = statuses.get(key, 0) + 1

    await asyncio.gather(*(one() for _ in range(count)))
    return statuses


async def _idle(port: int, count: int) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        socks.append(s)
    return socks


def _closed_by_server(socks: list[socket.socket]) -> int:
    """How many the server answered (a 408) or hung up on."""
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            s.recv(1)  # a response's first byte, or b"" at its end of stream
            n += 1
        except BlockingIOError:
            pass  # still open, nothing said
        except ConnectionError:
            n += 1
        s.close()
    return n


async def main(args: argparse.Namespace) -> dict[str, Any]:
    server = Server(args.workers)
    out: dict[str, Any] = {"bench": "serve_load", "loadavg_before": os.getloadavg()[0]}
    try:
        timeout = aiohttp.ClientTimeout(total=600)
        conn = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(timeout=timeout, connector=conn) as http:
            await server.ready(http)
            pid = server.proc.pid
            base = await _honest(http, server.url, args.honest, "base")
            base["rss_mb"] = round(_rss_mb(pid), 1)
            out["baseline"] = base

            peak, stop = [0.0], asyncio.Event()
            watcher = asyncio.create_task(_watch_rss(pid, peak, stop))
            large = asyncio.create_task(_large(http, server.url, args.bodies, args.body_mb))
            during = await _honest(http, server.url, args.honest, "large")
            statuses = await large
            stop.set()
            await watcher
            await asyncio.sleep(2.0)  # what the server gives back once they are answered
            during.update(
                statuses=statuses,
                peak_rss_mb=round(peak[0], 1),
                settled_rss_mb=round(_rss_mb(pid), 1),
                p50_ratio=round(during["p50_ms"] / base["p50_ms"], 2),
            )
            out["large_bodies"] = during

            socks = await _idle(server.port, args.idle)
            idle = await _honest(http, server.url, args.honest, "idle")
            idle.update(
                rss_mb=round(_rss_mb(pid), 1),
                p50_ratio=round(idle["p50_ms"] / base["p50_ms"], 2),
            )
            await asyncio.sleep(args.wait_closed)
            idle["closed_by_server"] = _closed_by_server(socks)
            idle["held"] = len(socks)
            out["idle_connections"] = idle
    finally:
        server.stop()
    return out


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--honest", type=int, default=40)
    p.add_argument("--bodies", type=int, default=150)
    p.add_argument("--body-mb", type=float, default=7.0)
    p.add_argument("--idle", type=int, default=300)
    p.add_argument(
        "--wait-closed",
        type=float,
        default=12.0,
        help="seconds to hold the stalled connections before counting those the server closed",
    )
    return p.parse_args()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(_args()))))
