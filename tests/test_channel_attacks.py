"""Red-team findings on the call channel's bytes, kept as tests: a child
that writes its own frames on the channel (it controls its process, so the
socket is its to write) must get a verdict, never take the verifier or the
slot down with it."""

from __future__ import annotations

import os
import socket
import struct
import time

import anyio
import pytest
from test_handle_reads import check_strict

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits
from aioeval.sandbox.strict.channel import Channel
from aioeval.sandbox.strict.handles import CandidateGone

# The child's end of the channel, found in the serve loop's frame, and a
# raw write of whole frames on it.
RAW = """
import os, struct, sys
def _fd():
    f = sys._getframe()
    while f is not None:
        peer = f.f_locals.get("peer")
        if peer is not None and hasattr(peer, "fd"):
            return peer.fd
        f = f.f_back
def _send(body):
    data = memoryview(struct.pack("<I", len(body)) + body)
    while data:
        data = data[os.write(_fd(), data):]
"""

DEEP = 100_000
"""Levels of msgpack arrays: past the interpreter's recursion limit."""
DEEP_LOADED = b"\x92\xa6loaded" + b"\x91" * DEEP + b"\xc0"
DEEP_REPLY = b"\x93\xa5reply\xc3" + b"\x91" * DEEP + b"\xc0"

# Instead of the program's names, a frame nested past the recursion limit.
DEEP_FIRST = RAW + f"_send({DEEP_LOADED!r})\nos._exit(0)\n"

# An honest load, then a reply nested past the recursion limit.
DEEP_ANSWER = (
    RAW
    + f"""
def f(x):
    return x + 1
for _m in list(sys.modules.values()):
    _peer = getattr(_m, "_Peer", None)
    if isinstance(_peer, type) and hasattr(_peer, "serve"):
        _peer.serve = lambda self, op: (_send({DEEP_REPLY!r}), os._exit(0))
"""
)

# The test catches what the candidate raises, as some tests do: nothing the
# verifier raises about the channel may be caught as the candidate's.
TOLERANT_TEST = """
def check(candidate):
    try:
        candidate(1)
    except Exception:
        pass
"""


def _channel() -> tuple[Channel, socket.socket]:
    ours, theirs = socket.socketpair()
    fd = os.dup(ours.fileno())
    ours.close()
    return Channel(fd, time.monotonic() + 5.0), theirs


@pytest.mark.parametrize("body", [DEEP_LOADED, DEEP_REPLY], ids=["loaded", "reply"])
def test_a_frame_nested_past_the_recursion_limit_is_malformed(body: bytes) -> None:
    chan, child = _channel()
    try:
        child.sendall(struct.pack("<I", len(body)) + body)
        with pytest.raises(CandidateGone, match="malformed"):
            chan.receive()
    finally:
        chan.close()
        os.close(chan.fd)
        child.close()


@pytest.mark.parametrize("program", [DEEP_FIRST, DEEP_ANSWER], ids=["first", "answer"])
def test_a_deeply_nested_frame_fails_the_answer_not_the_verifier(program: str) -> None:
    status, reason = check_strict(program, TOLERANT_TEST, "f")
    assert status == "failed" and "malformed" in reason, reason


# Answers the first call, then puts its own end of the channel in flight
# (SCM_RIGHTS into the verifier's receive queue, behind the answer) and
# exits: that end outlives every process of the candidate's, and the
# verifier's next request, larger than a socket's buffer, had nowhere to go.
IN_FLIGHT = (
    RAW
    + """
import socket, time
def f(xs):
    return len(xs)
for _m in list(sys.modules.values()):
    _peer = getattr(_m, "_Peer", None)
    if isinstance(_peer, type) and hasattr(_peer, "serve"):
        _serve = _peer.serve
        def _once(self, op):
            self.send(_serve(self, op))
            time.sleep(0.3)  # the verifier has read the answer
            end = socket.socket(fileno=os.dup(_fd()))
            socket.send_fds(end, [b"x"], [_fd()])
            os._exit(0)
        _peer.serve = _once
"""
)

LARGE_REQUEST_TEST = """
def check(candidate):
    assert candidate([1]) == 1
    assert candidate(list(range(300_000))) == 300_000
"""


def test_a_channel_end_kept_in_flight_does_not_hold_the_verifier() -> None:
    started = time.monotonic()
    status, reason = check_strict(IN_FLIGHT, LARGE_REQUEST_TEST, "f")
    assert status == "failed" and "ended before" in reason, reason
    assert time.monotonic() - started < 10.0


# While the verifier reads the program's names (it reads the value of a
# builtin subclass then, and this child calls its function one), the child
# answers with an endless stream of requests of its own.
FLOOD_WHILE_BOUND = (
    RAW
    + """
def f(x):
    return x
for _m in list(sys.modules.values()):
    if hasattr(_m, "as_base") and hasattr(_m, "exception_tree"):
        _old = _m.base
        _m.base = lambda v, old=_old: "int" if callable(v) and not isinstance(v, type) else old(v)
    _peer = getattr(_m, "_Peer", None)
    if isinstance(_peer, type) and hasattr(_peer, "serve"):
        def _flood(self, op):
            import msgspec, threading
            fd = _fd()
            def drain():
                while os.read(fd, 1 << 16):
                    pass
                os._exit(0)
            threading.Thread(target=drain, daemon=True).start()
            one = msgspec.msgpack.encode(["op", 5, "len"])
            burst = (struct.pack("<I", len(one)) + one) * 4096
            while True:
                os.write(fd, burst)
        _peer.serve = _flood
"""
)


def test_a_flood_of_requests_before_the_test_runs_is_the_tests_timeout() -> None:
    """The test's CPU budget runs from the child's first word, so the
    verifier ends the check itself (not killed by its CPU ceiling, which
    costs the slot a restart)."""

    async def go() -> tuple[str, str]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=6.0, wall_s=30.0)) as pool:
            task = Checked(
                program=FLOOD_WHILE_BOUND,
                entry="f",
                setup="def check(candidate):\n    assert candidate(3) == 3\n",
                driver="check(f)",
                cpu_s=1.0,
            )
            out = await pool.execute(task)
            return out.status, out.reason

    status, reason = anyio.run(go)
    assert status == "timeout" and "the test ran out of its CPU budget" in reason, reason
