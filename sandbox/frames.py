"""Blocking frame I/O for the sandbox's own processes (template, verifier).

Both read `protocol` frames from the engine on stdin and write theirs to
stdout, with plain blocking syscalls: they have nothing else to do while
they wait. Reads are exact (never ahead of the frame), so raw bytes that
follow a frame (a job's program, see `protocol.JobHead`) stay in the pipe
for whoever reads them next.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from collections.abc import Callable

from . import protocol

_clock = time.perf_counter
"""The real clock, bound once: a test that patches ``time.perf_counter``
(in the verifier, or handed to the child) must not feed the poll loop."""


class FrameReader:
    """Reads length-prefixed frames from `fd`, exactly; EOFError at the end."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def exactly(self, view: memoryview) -> None:
        while view:
            n = os.readv(self.fd, [view])
            if n == 0:
                raise EOFError
            view = view[n:]

    def frame_size(self) -> int:
        """The next frame's length; its body is the caller's to read."""
        head = bytearray(protocol.HEADER.size)
        self.exactly(memoryview(head))
        size: int = protocol.HEADER.unpack(head)[0]
        if size > protocol.MAX_FRAME:
            raise EOFError("oversized frame")
        return size

    def frame(self) -> bytes:
        size = self.frame_size()
        body = bytearray(size)
        self.exactly(memoryview(body))
        return bytes(body)


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_into(fd: int, view: memoryview) -> int | None:
    """Read what a non-blocking `fd` has into `view`; 0 at EOF, None if
    nothing is ready. No bytes object is made: what a child wrote stays in
    the caller's buffer, which it wipes."""
    try:
        return os.readv(fd, [view])
    except BlockingIOError:
        return None
    except OSError as exc:
        if exc.errno == errno.EINTR:
            return None
        return 0


class JobReader(FrameReader):
    """A template's reader: frames, and each job's program bytes read
    straight into one reusable buffer that is wiped after every fork (see
    `protocol.JobHead`)."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self.buf = bytearray(1 << 16)

    def read_program(self, size: int) -> None:
        if size > len(self.buf):
            self.wipe(len(self.buf))
            self.buf = bytearray(max(size, 2 * len(self.buf)))
        self.exactly(memoryview(self.buf)[:size])

    def take(self, size: int) -> bytes:
        """The program, as the child's own object (call after fork only)."""
        return bytes(self.buf[:size])

    def wipe(self, size: int) -> None:
        self.buf[:size] = bytes(size)


_len = len
_type = type
_bytes = bytes
_bytearray = bytearray
_memoryview = memoryview
_min = min


class Frames:
    """Length-prefixed frames (`protocol.HEADER`) out of a call channel,
    which arrives in reads of any size: a frame one read brings whole (the
    usual case, as the two ends take turns) is decoded where it lies, one in
    pieces is gathered in place. Names are bound at import: in the
    candidate's child this runs after the program could rebind builtins."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf: bytes | bytearray = b""
        self.head = protocol.HEADER

    def next(self, read: Callable[[], memoryview]) -> memoryview | None:
        """The next frame's body, calling `read` for more as needed; None
        for a frame past the cap, or when `read` brings nothing (the end)."""
        buf, head = self.buf, self.head
        while True:
            have = _len(buf)
            if have >= head.size:
                (size,) = head.unpack_from(buf)
                if size > self.cap:
                    return None
                end = head.size + size
                if have >= end:
                    self.buf = buf[end:]
                    return _memoryview(buf)[head.size : end]
            chunk = read()
            if not chunk:
                return None
            if not buf:
                buf = self.buf = _bytes(chunk)
                continue
            if _type(buf) is _bytes:
                buf = self.buf = _bytearray(buf)
            buf += chunk


SPIN_S = 50e-6
"""How long a reader on a call channel polls before it sleeps, when the
pool has a core for every reader (see `spin`)."""
_spin = SPIN_S


def spin(seconds: float) -> None:
    """Set this process's poll time (its children inherit it). A poll is a
    win only while the other end runs on a core of its own: with fewer
    cores than the busy ends of all the slots' channels, a polling reader
    takes the core its answer needs (2,000 calls in each of two slots on
    two cores took 1.6 times as long polling as sleeping)."""
    global _spin
    _spin = seconds


_CREDIT = 16
_credit = _CREDIT
_skipped = 0


def recv_soon(sock: socket.socket, view: memoryview) -> int:
    """Read what `sock` has into `view`, the caller's one buffer (a fresh
    bytes object per read of a large size is memory mapped and unmapped
    again on every call); the count, 0 at EOF. Polls without sleeping for
    a while first (`spin`). The two ends of a call channel answer each
    other within microseconds, and waking a sleeping reader costs tens of
    them (more in a VM): a reader that is still awake when the answer
    lands gets it for the price of a syscall. Then a plain blocking read
    (the socket's own timeout, if any, applies).

    A poll that runs out is CPU taken from someone (on a loaded machine,
    often the other end): each one costs four polls' credit, each answered
    poll earns one back, and at no credit the reader sleeps at once, trying
    a poll again every 64 reads."""
    global _credit, _skipped
    if _spin <= 0:
        return sock.recv_into(view)
    if _credit <= 0:
        _skipped += 1
        if _skipped < 64:
            return sock.recv_into(view)
        _skipped, _credit = 0, 1
    until = _clock() + _spin
    while True:
        try:
            n = sock.recv_into(view, 0, socket.MSG_DONTWAIT)
        except BlockingIOError:
            if _clock() >= until:
                _credit -= 4
                return sock.recv_into(view)
        else:
            _credit = _min(_credit + 1, _CREDIT)
            return n


_kept: dict[str, int] = {}
_CHUNK = 1 << 16


def read_kept(path: str) -> bytes:
    """A small kernel file (a /proc table, a cgroup counter) read afresh
    through a descriptor opened on first use: reading from offset 0 makes
    the kernel produce it again, without a path walk and an open per read.
    For a template's per-job checks; its children close every descriptor
    they were not given before any candidate code runs."""
    for attempt in (0, 1):
        fd = _kept.get(path)
        if fd is None:
            fd = _kept[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            chunks, offset = [], 0
            while True:
                chunk = os.pread(fd, _CHUNK, offset)
                chunks.append(chunk)
                offset += len(chunk)
                if len(chunk) < _CHUNK:
                    return b"".join(chunks)
        except OSError:
            del _kept[path]
            os.close(fd)
            if attempt:
                raise
    raise AssertionError("unreachable")
