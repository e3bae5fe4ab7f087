"""Bodies a broken or hostile server sends (the fake's ``huge`` and ``bomb``
faults): a completion that never ends, plain or gzip-compressed."""

from __future__ import annotations

import zlib

from aiohttp import web

MB = 1 << 20
_OPENING = b'{"choices": [{"message": {"content": "'


def _flood_blocks(compressed: bool) -> tuple[bytes, bytes]:
    """The first megabyte of a body that never ends, and each one after.
    Compressed, each block ends in a full flush, so every later megabyte of
    spaces compresses to the same kilobyte, computed once."""
    first, rest = _OPENING + b" " * (MB - len(_OPENING)), b" " * MB
    if not compressed:
        return first, rest
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = packer.compress(first) + packer.flush(zlib.Z_FULL_FLUSH)
    return head, packer.compress(rest) + packer.flush(zlib.Z_FULL_FLUSH)


async def flood(request: web.Request, mb: int, *, compressed: bool) -> web.StreamResponse:
    """``mb`` MB (once decompressed) of a completion that never ends."""
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    if compressed:
        resp.headers["Content-Encoding"] = "gzip"
    await resp.prepare(request)
    first, rest = _flood_blocks(compressed)
    for i in range(mb):
        if request.transport is None or request.transport.is_closing():
            break  # the client stopped reading: that is the point
        try:
            await resp.write(first if i == 0 else rest)
        except (ConnectionError, RuntimeError):
            break
    return resp
