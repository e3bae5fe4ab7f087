"""The verifier's end of one job's channel to the candidate's child.

Frames in and out, with a wall-clock deadline and a size cap on what the
child sends; a reply that outgrows the verifier's memory while it is
decoded is the candidate's failure, not the verifier's.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from typing import Any

import msgspec

try:
    from . import frames, protocol
    from .handles import CandidateGone
except ImportError:  # loaded as a top-level module inside the verifier
    import frames  # type: ignore[no-redef,import-not-found]
    import protocol  # type: ignore[no-redef,import-not-found]
    from handles import CandidateGone  # type: ignore[no-redef,import-not-found]

MAX_MESSAGE = 16 * 1024 * 1024 + 1024
_message = msgspec.msgpack.Decoder(protocol.ChannelMessage)  # type: ignore[var-annotated]


class Channel:
    """The verifier's end of one job's channel: frames in, frames out, with
    a wall-clock deadline and a size cap on everything the child sends."""

    def __init__(self, fd: int, deadline: float) -> None:
        self.fd = fd
        self.deadline = deadline
        self.buf = bytearray()
        # Reads block with a kernel timeout rather than a select() per read:
        # one syscall per message on the hot path of every call.
        self.sock = socket.socket(fileno=os.dup(fd))
        self.sock.settimeout(None)
        left = max(0.001, deadline - time.monotonic())
        whole = int(left)
        self.sock.setsockopt(
            socket.SOL_SOCKET,
            socket.SO_RCVTIMEO,
            struct.pack("ll", whole, int((left - whole) * 1e6)),
        )

    def close(self) -> None:
        self.sock.close()

    def send(self, msg: object) -> None:
        try:
            frames.write_all(self.fd, protocol.encode_frame(msg))
        except OSError:
            raise CandidateGone(
                "the candidate's process ended before the check completed"
            ) from None

    def receive(self) -> Any:
        (size,) = struct.unpack("<I", self._take(4))
        if size > MAX_MESSAGE:
            raise CandidateGone("the candidate's value is too large")
        try:
            return _message.decode(self._take(size))
        except msgspec.DecodeError:
            raise CandidateGone("the candidate's process sent a malformed message") from None
        except MemoryError:  # our address-space limit, reached while decoding
            raise CandidateGone("the candidate's value does not fit in the memory limit") from None

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            try:
                chunk = frames.recv_soon(self.sock, 1 << 20)
            except BlockingIOError:  # SO_RCVTIMEO ran out
                chunk = None
            except OSError:
                chunk = b""
            if chunk is None or time.monotonic() > self.deadline:
                raise CandidateGone("no answer from the candidate within the wall-clock budget")
            if not chunk:
                raise CandidateGone("the candidate's process ended before the check completed")
            self.buf += chunk
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out
