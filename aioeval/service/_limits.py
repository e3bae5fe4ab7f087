"""What ``aioeval serve`` lets its callers hold: connections, time to send a
request, and bytes.

- Connections past ``max_connections`` get a 503 and are closed at once.
- A request's headers must arrive within ``header_timeout_s`` of the
  connection opening (or of the previous answer on a kept-alive one):
  aiohttp's keep-alive timer, which starts when a connection opens and
  closes it while no whole request has arrived. The body must arrive
  within ``body_timeout_s`` (408).
- Memory: a request reserves ``BYTES_PER_BODY_BYTE`` times its body's size
  (its declared length, or the largest body for a chunked one) from one
  budget shared by every request before reading it, and gives it back once
  answered; the reservation covers the raw body, the decoded items and the
  work they wait in the scorer's queue for. Past the budget a request gets
  503 without its body being read.
"""

from __future__ import annotations

import asyncio
import ctypes
from typing import Any

import msgspec
from aiohttp import web

from ._problems import FIELD_BYTES, KEEP_BYTES, PROBLEM_BYTES

M_MMAP_THRESHOLD = -3
LARGE_BLOCK = 1 << 20


def return_large_blocks() -> None:
    """Bodies and their decoded texts are megabytes each. glibc serves such
    blocks from its heap once it has freed one it had mapped (its threshold
    rises to the largest block freed) and keeps that heap after they are
    freed: a burst of large bodies left hundreds of megabytes behind. A
    fixed threshold maps every block over 1 MiB on its own, so its memory
    goes back to the system the moment its request is answered."""
    try:
        ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator's own policy applies


BYTES_PER_BODY_BYTE = 4
"""A decoded JSON string takes up to 4 bytes a character, beside the raw body."""


class ServeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The server's bounds (``aioeval serve --help`` names the flags)."""

    max_body_mb: float = 8.0
    """The largest request body."""
    max_memory_mb: float = 256.0
    """Bytes all requests together may hold while read and scored."""
    max_connections: int = 512
    """Open connections; more are refused with 503."""
    header_timeout_s: float = 10.0
    """Time for a request's headers to arrive (and for an idle keep-alive)."""
    body_timeout_s: float = 30.0
    """Time for a request's body to arrive once its headers have."""
    max_problem_kb: int = PROBLEM_BYTES // 2**10
    """The largest caller problem, as JSON."""
    max_field_kb: int = FIELD_BYTES // 2**10
    """The largest field of a caller problem, as JSON."""
    problems_mb: int = KEEP_BYTES // 2**20
    """Caller problems kept for reuse, as JSON."""

    @property
    def max_body(self) -> int:
        return int(self.max_body_mb * 2**20)

    @property
    def max_memory(self) -> int:
        return int(self.max_memory_mb * 2**20)


class Budget:
    """Bytes reserved by requests, all together, against one limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size


_REFUSED = (
    b'{"error": "too many connections (--max-connections); retry later"}',
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n",
)


class _Refuse(asyncio.Protocol):
    """A connection past the cap: one 503, then closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        body, head = _REFUSED
        transport.write(head % len(body) + body)
        transport.close()


class CappedSite(web.BaseSite):
    """A TCP site that admits at most ``cap`` connections at a time."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, cap: int) -> None:
        super().__init__(runner)
        self._host, self._port, self._cap = host, port, cap

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None

        def factory() -> Any:
            if len(server.connections) >= self._cap:
                return _Refuse()
            return server()

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(factory, self._host, self._port)
