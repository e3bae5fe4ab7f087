"""The verifier: a trusted process per sandbox slot that runs the tests.

Started by the engine like a template (absolute interpreter, no site hooks,
an allowlisted environment), it never runs model code. For each `Check` it
runs the test's setup in fresh globals with the real builtins, binds the
entry point to a proxy, and runs the driver (``check(candidate)``). Each call
of the proxy sends the arguments as plain data over the job's channel to the
candidate's child, which runs the candidate's function and sends back a
plain value or the exception's type and message. So the test's comparisons
only ever see fresh builtin values, and nothing the candidate's process does
(frames, heap, builtins, trace hooks, fds, exit paths) can reach the code
that decides the verdict: a check passes only if the test, run here, returns.

The channel arrives from the slot's template over a Unix socket as an
``SCM_RIGHTS`` descriptor tagged with the job id, one per job. The verifier is
not dumpable (no ptrace, no /proc/<pid>/mem), and ``random`` is reset to one
fixed state before every check, so randomised tests are reproducible.
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import os
import random
import resource
import signal
import socket
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from types import CodeType
from typing import Any


def _bootstrap() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    for path in sys.argv[1:]:
        if path not in sys.path:
            sys.path.append(path)


if __name__ == "__main__":
    _bootstrap()

try:
    from . import frames, plain, protocol
except ImportError:
    import frames  # type: ignore[no-redef,import-not-found]
    import plain  # type: ignore[no-redef,import-not-found]
    import protocol  # type: ignore[no-redef,import-not-found]

import msgspec

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
CACHE = 256
"""Compiled tests kept (per problem): a run revisits each one n times."""
_ID = struct.Struct("<Q")


class CandidateGone(BaseException):
    """The candidate's child stopped answering (died, exited, was killed)."""


class CheckTimeout(BaseException):
    """The test's own CPU budget ran out in the verifier."""


class CandidateExit(BaseException):
    """The candidate's function raised SystemExit or another BaseException-only type."""


class CandidateError(Exception):
    """The candidate's function raised an exception of a type the verifier
    does not rebuild (not a builtin exception)."""


_child_message = msgspec.msgpack.Decoder(protocol.ChildMessage)  # type: ignore[var-annotated]


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

    def receive(self) -> Any:
        (size,) = struct.unpack("<I", self._take(4))
        if size > plain.MAX_BYTES + 1024:
            raise CandidateGone("the candidate's value is too large")
        try:
            return _child_message.decode(self._take(size))
        except msgspec.DecodeError:
            raise CandidateGone("the candidate's process sent a malformed message") from None

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            try:
                chunk = os.read(self.fd, 1 << 20)
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

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            payload = plain.dumps([list(args), kwargs])
        except plain.NotPlain as exc:
            raise CheckSetupError(
                f"the test passed an argument that is not plain data: {exc}"
            ) from None
        try:
            os.write(self.fd, protocol.encode_frame(protocol.CallArgs(args=payload)))
        except OSError:
            raise CandidateGone(
                "the candidate's process ended before the check completed"
            ) from None
        reply = self.receive()
        if isinstance(reply, protocol.Returned):
            try:
                return plain.loads(reply.value)
            except plain.NotPlain as exc:
                raise CandidateError(f"the candidate returned {exc}") from None
        if isinstance(reply, protocol.Raised):
            raise _rebuild(reply)
        raise CandidateGone("the candidate's process answered out of turn")


class CheckSetupError(Exception):
    """The test cannot be run in this model (an engine/suite limitation)."""


def _rebuild(raised: protocol.Raised) -> BaseException:
    """A fresh exception of the candidate's builtin type, or a stand-in."""
    message = raised.message[:2000]
    cls = getattr(builtins, raised.type_name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        if not issubclass(cls, Exception):
            return CandidateExit(f"{raised.type_name}: {message}")
        try:
            return cls(message)
        except Exception:
            pass
    return CandidateError(f"{raised.type_name}: {message}")


def _reason(exc: BaseException) -> str:
    text = str(exc)
    name = type(exc).__name__
    if isinstance(exc, CandidateError | CandidateExit | CandidateGone):
        return text[:500]
    return (f"{name}: {text}" if text else name)[:500]


_armed = False
"""True only while a test's driver runs, so a late timer signal is ignored."""


def _on_prof(signum: int, frame: object) -> None:
    if _armed:
        raise CheckTimeout


class Verifier:
    def __init__(self, hello: protocol.VerifierHello) -> None:
        self.hello = hello
        self.link = socket.socket(fileno=hello.link_fd)
        random.seed(protocol.RANDOM_SEED)
        self.random_state = random.getstate()
        self.cache: OrderedDict[tuple[str, str], tuple[CodeType, CodeType]] = OrderedDict()
        signal.signal(signal.SIGPROF, _on_prof)

    def compiled(self, check: protocol.Check) -> tuple[CodeType, CodeType]:
        key = (check.setup, check.driver)
        hit = self.cache.get(key)
        if hit is None:
            hit = (
                compile(check.setup, "<test>", "exec"),
                compile(check.driver, "<test driver>", "exec"),
            )
            self.cache[key] = hit
            if len(self.cache) > CACHE:
                self.cache.popitem(last=False)
        else:
            self.cache.move_to_end(key)
        return hit

    def channel_for(self, job_id: int) -> int:
        """The job's channel, passed by the template (one per job, in order)."""
        self.link.settimeout(self.hello.wall_s + 5.0)
        data, fds, _, _ = socket.recv_fds(self.link, _ID.size, 1)
        if len(data) != _ID.size or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise EOFError("the template's link closed")
        (got,) = _ID.unpack(data)
        if got != job_id:
            os.close(fds[0])
            raise LookupError(f"channel for job {got}, expected {job_id}")
        return fds[0]

    def run(self, check: protocol.Check) -> protocol.CheckResult:
        def result(status: str, reason: str = "") -> protocol.CheckResult:
            return protocol.CheckResult(id=check.id, status=status, reason=reason)

        try:
            setup, driver = self.compiled(check)
        except SyntaxError as exc:
            return result("error", f"the test does not compile: {exc}")
        fd = self.channel_for(check.id)
        os.set_blocking(fd, True)
        chan = Channel(fd, time.monotonic() + self.hello.wall_s + 2.0)
        try:
            scope: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
            try:
                exec(setup, scope)
            except Exception as exc:
                return result("error", f"the test's setup failed: {_reason(exc)}")
            try:
                first = chan.receive()
            except CandidateGone as exc:
                return result("failed", str(exc))
            if isinstance(first, protocol.LoadFailed):
                status = first.status if first.status in ("failed", "error") else "failed"
                return result(status, first.reason[:500])
            if not isinstance(first, protocol.Loaded):
                return result("failed", "the candidate's process answered out of turn")

            def candidate(*args: Any, **kwargs: Any) -> Any:
                return chan.call(args, kwargs)

            candidate.__name__ = check.entry
            scope[check.entry] = candidate
            random.setstate(self.random_state)
            return self._drive(driver, scope, result)
        finally:
            chan.close()
            os.close(fd)

    def _drive(
        self,
        driver: CodeType,
        scope: dict[str, Any],
        result: Callable[..., protocol.CheckResult],
    ) -> protocol.CheckResult:
        global _armed
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, self.hello.cpu_s)
        try:
            exec(driver, scope)
            _armed = False
        except CheckTimeout:
            return result("timeout", f"the test ran out of its CPU budget of {self.hello.cpu_s:g}s")
        except CheckSetupError as exc:
            return result("error", str(exc)[:500])
        except BaseException as exc:
            return result("failed", _reason(exc))
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_PROF, 0)
        return result("passed")


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    reader = frames.FrameReader(0)
    try:
        hello = msgspec.msgpack.decode(reader.frame(), type=protocol.VerifierHello)
    except EOFError:
        return
    if hello.memory_mb > 0:
        limit = hello.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    verifier = Verifier(hello)
    decoder = msgspec.msgpack.Decoder(protocol.Check)
    gc.freeze()
    while True:
        try:
            check = decoder.decode(reader.frame())
        except EOFError:
            break
        outcome = verifier.run(check)
        frames.write_all(1, protocol.encode_frame(outcome))


if __name__ == "__main__":
    main()
