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

from .. import frames, protocol
from .handles import CandidateGone

_monotonic = time.monotonic
"""The real clock, bound once: the test may patch ``time.monotonic``."""

MAX_MESSAGE = 16 * 1024 * 1024 + 1024
_CHUNK = memoryview(bytearray(1 << 16))
"""Every read's buffer, one for the process (what a read brings is copied
out at once)."""
_message = msgspec.msgpack.Decoder(protocol.ChannelMessage)  # type: ignore[var-annotated]


class Channel:
    """The verifier's end of one job's channel: frames in, frames out, with
    a wall-clock deadline and a size cap on everything the child sends."""

    def __init__(self, fd: int, deadline: float) -> None:
        self.fd = fd
        self.deadline = deadline
        self.sent = 0
        """Frames the verifier wrote to the child: requests and answers, one
        per crossing (`protocol.served` grants the child CPU for them)."""
        self.asked = 0
        """Of those, the test's own requests: the child cannot make more of
        them by flooding the verifier with its own (`timers.arm`)."""
        self.frames = frames.Frames(MAX_MESSAGE)
        # Reads block with a kernel timeout rather than a select() per read:
        # one syscall per message on the hot path of every call.
        self.sock = socket.socket(fileno=os.dup(fd))
        self.sock.settimeout(None)
        left = max(0.001, deadline - _monotonic())
        whole = int(left)
        self.sock.setsockopt(
            socket.SOL_SOCKET,
            socket.SO_RCVTIMEO,
            struct.pack("ll", whole, int((left - whole) * 1e6)),
        )

    def hang_up(self) -> None:
        """End the exchange both ways, keeping the socket: a thread of the
        test's waiting for an answer wakes with the child gone."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        """Hang up: the child sees the end at once, and a thread of the
        test's still waiting for an answer (refused beside another's
        request) wakes up rather than hold the socket open."""
        self.hang_up()
        self.sock.close()

    def send(self, msg: object) -> None:
        if type(msg) is protocol.Op:
            self.asked += 1
        self.send_frame(protocol.encode_frame(msg))

    def send_frame(self, frame: bytes) -> None:
        """Write one frame already encoded (`protocol.encode_frame`)."""
        self.sent += 1
        try:
            frames.write_all(self.fd, frame)
        except OSError:
            raise CandidateGone(
                "the candidate's process ended before the check completed"
            ) from None

    def receive(self) -> Any:
        frame = self.frames.next(self._read)
        if frame is None:  # _read raises at the end: the frame is past the cap
            raise CandidateGone("the candidate's value is too large")
        return _decoded(frame)

    def _read(self) -> memoryview:
        """What the child sent next (at least a byte), within the deadline."""
        try:
            got: int | None = frames.recv_soon(self.sock, _CHUNK)
        except BlockingIOError:  # SO_RCVTIMEO ran out
            got = None
        except OSError:
            got = 0
        if got is None or _monotonic() > self.deadline:
            raise CandidateGone("no answer from the candidate within the wall-clock budget")
        if not got:
            raise CandidateGone("the candidate's process ended before the check completed")
        return _CHUNK[:got]


def _decoded(frame: memoryview) -> Any:
    """The frame's message. Whatever decoding raises is the candidate's
    doing: a frame nested deeper than the interpreter's recursion limit
    raises RecursionError, which must not reach the verifier's own loop
    (it would die there, and the slot with it) nor the test (which could
    catch it as the candidate's exception)."""
    try:
        return _message.decode(frame)
    except MemoryError:  # our address-space limit, reached while decoding
        raise CandidateGone("the candidate's value does not fit in the memory limit") from None
    except Exception:  # DecodeError, RecursionError
        raise CandidateGone("the candidate's process sent a malformed message") from None
