"""The verifier: a trusted process per sandbox slot that runs the tests.

Started by the engine like a template (absolute interpreter, no site hooks,
an allowlisted environment), it never runs model code. For each `Check` it
runs the trusted prelude (a prompt) and the test's setup in fresh globals
with the real builtins, binds the entry point and every name the test uses
that the candidate's program defines to handles on the child's objects
(see `handles`), and runs the driver (``check(candidate)``). The test sees
what it would see in the single program, values rebuilt by trusted code and
handles whose ``==``, ``bool``, ``hash`` and ordering are never the
candidate's to answer, and nothing the candidate's process does (frames,
heap, builtins, trace hooks, fds, exit paths) can reach the code that
decides the verdict: a check passes only if the test, run here, returns.

Frames to the engine go out on a descriptor of their own; what the test
prints is captured (bounded) and reported with the verdict.

The channel arrives from the slot's template over a Unix socket as an
``SCM_RIGHTS`` descriptor tagged with the job id, one per job. The verifier is
not dumpable (no ptrace, no /proc/<pid>/mem), and ``random`` is reset to one
fixed state before every check, so randomised tests are reproducible.
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import math
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
from types import CodeType, FunctionType
from typing import Any

import msgspec

from . import cgroups, frames, handles, protocol, session, testrandom, timers
from .channel import Channel
from .testcode import Capture, Compiled, TestBroken, guarded

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
CACHE = 256
"""Compiled tests kept (per problem): a run revisits each one n times."""
CACHE_CHARS = 256 * 1024 * 1024
"""...and no more test text than this in all: a test can hold megabytes of
data (a competitive-programming problem's inputs), kept twice (the text and
the compiled constants)."""
TEST_MODULE = "__main__"
_ID = struct.Struct("<Q")
CandidateGone = handles.CandidateGone
CandidateExit = handles.CandidateExit
CandidateError = handles.CandidateError
CheckSetupError = handles.CheckSetupError
CheckTimeout, CallTimeLimit = timers.CheckTimeout, timers.CallTimeLimit
WITHIN, within = timers.WITHIN, timers.within


def _reason(exc: BaseException) -> str:
    name = type(exc).__name__
    try:  # str() can run the candidate's code (handles in args): a name will do
        text = str(exc)
    except BaseException:
        return name[:500]
    if isinstance(exc, CandidateError | CandidateExit | CandidateGone | handles.Refused):
        return text[:500]
    return (f"{name}: {text}" if text else name)[:500]


class Verifier:
    def __init__(self, hello: protocol.VerifierHello, out_fd: int) -> None:
        self.hello = hello
        self.out_fd = out_fd
        self.link = socket.socket(fileno=hello.link_fd)
        testrandom.watch_random()
        random.seed(protocol.RANDOM_SEED)
        self.random_state = random.getstate()
        self.cache: OrderedDict[tuple[str, str, str], Compiled | TestBroken] = OrderedDict()
        self.cache_chars = 0
        timers.install()
        self.cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]

    def compiled(self, check: protocol.Check) -> Compiled:
        key = (check.prelude, check.setup, check.driver)
        hit = self.cache.get(key)
        if hit is None:
            try:
                hit = Compiled(check)
            except TestBroken as exc:
                hit = exc
            self.cache[key] = hit
            self.cache_chars += sum(map(len, key))
            while len(self.cache) > 1 and (
                len(self.cache) > CACHE or self.cache_chars > CACHE_CHARS
            ):
                old, _ = self.cache.popitem(last=False)
                self.cache_chars -= sum(map(len, old))
        else:
            self.cache.move_to_end(key)
        if isinstance(hit, TestBroken):
            raise hit
        return hit

    def channel_for(self, job_id: int, wall_s: float) -> int:
        """The job's channel, passed by the template (one per job, in order)."""
        self.link.settimeout(wall_s + 5.0)
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

    def stop(self, job_id: int) -> None:
        """Tell the template the test timed out on this job: a child still
        busy in a call (past its limit) is stopped instead of left to run
        out its budget. Only then: any other way, a child that does not end
        is judged by how it ends, as the single program would be."""
        try:
            self.link.send(_ID.pack(job_id), socket.MSG_DONTWAIT)
        except OSError:
            pass  # the template is gone, or its end is full: the budget ends it

    def cpu_ceiling(self, cpu_s: float) -> None:
        """Let the kernel end us (SIGXCPU) once this check has used its CPU
        budget and a margin: the test's timer cannot interrupt C code (a
        candidate's reply being decoded), the kernel's limit can. The engine
        reads that death as the answer's timeout."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s) + CPU_MARGIN_S
        resource.setrlimit(resource.RLIMIT_CPU, (soft, self.cpu_hard))

    def run(self, check: protocol.Check) -> protocol.CheckResult:
        capture = Capture()

        def result(status: str, reason: str = "") -> protocol.CheckResult:
            return protocol.CheckResult(
                id=check.id, status=status, reason=reason, output=capture.text()
            )

        cpu_s, wall_s = self.hello.cpu_s, self.hello.wall_s
        if check.cpu_s > 0:
            cpu_s, wall_s = check.cpu_s, wall_s * check.cpu_s / cpu_s
        # The channel is taken first, whatever happens: the template passes
        # one per job, and the child waits on it until it is closed.
        fd = self.channel_for(check.id, wall_s)
        os.set_blocking(fd, True)
        chan = Channel(fd, time.monotonic() + wall_s + 2.0)
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        self.cpu_ceiling(cpu_s)
        try:
            verdict = self._check(check, chan, result, cpu_s)
            if verdict.status == "timeout":
                self.stop(check.id)
            return verdict
        finally:
            sys.stdout, sys.stderr = stdout, stderr
            chan.close()
            os.close(fd)

    def _check(
        self,
        check: protocol.Check,
        chan: Channel,
        result: Callable[..., protocol.CheckResult],
        cpu_s: float,
    ) -> protocol.CheckResult:
        try:
            code = self.compiled(check)
        except TestBroken as exc:
            return result("error", str(exc)[:500])
        scope: dict[str, Any] = {
            "__name__": TEST_MODULE,
            "__builtins__": builtins,
            WITHIN: within,
        }
        random.setstate(self.random_state)
        try:
            if code.prelude is not None:
                exec(code.prelude, scope)
            before = dict(scope)
            exec(code.setup, scope)
        except Exception as exc:
            return result("error", f"the test's setup failed: {_reason(exc)}")
        ours = {k for k, v in scope.items() if k not in before or before[k] is not v}
        prelude = {k: v for k, v in before.items() if k not in ours}
        twins = _twins(code.prelude, prelude)
        talk = session.Session(chan, TEST_MODULE, twins)
        # The budget runs from the child's first word: serving what it asks
        # while its names are read counts too (a flood of requests there is
        # the answer's timeout, not a verifier killed by its CPU ceiling).
        timers.arm(cpu_s)
        try:
            return self._meet(check, code, scope, ours, prelude, talk, chan, result)
        except CheckTimeout:
            return result("timeout", f"the test ran out of its CPU budget of {cpu_s:g}s")
        finally:
            timers.disarm()

    def _meet(
        self,
        check: protocol.Check,
        code: Compiled,
        scope: dict[str, Any],
        ours: set[str],
        prelude: dict[str, Any],
        talk: session.Session,
        chan: Channel,
        result: Callable[..., protocol.CheckResult],
    ) -> protocol.CheckResult:
        """Read the child's names, bind them, and run the driver."""
        try:
            first = chan.receive()
        except CandidateGone as exc:
            return result("failed", str(exc))
        if isinstance(first, protocol.LoadFailed):
            status = first.status if first.status in ("failed", "error") else "failed"
            return result(status, first.reason[:500])
        if not isinstance(first, protocol.Loaded):
            return result("failed", "the candidate's process answered out of turn")
        try:
            self._bind(scope, check.entry, first.names, code.names - ours, talk, prelude)
        except CheckTimeout:
            raise
        except BaseException as exc:  # the child died, exited or refused a read
            return result("failed", f"the candidate's names could not be read: {_reason(exc)}")
        random.setstate(self.random_state)
        talk.random_state = random.getstate()
        talk.seeds, talk.uses = testrandom.seedings()
        return self._drive(code.driver, scope, result)

    def _bind(
        self,
        scope: dict[str, Any],
        entry: str,
        names: list[Any],
        wanted: set[str],
        talk: session.Session,
        prelude: dict[str, Any],
    ) -> None:
        """Point the test's names at the candidate's definitions, as the
        single program would resolve them, except the builtins (the test
        keeps the real ones) and the prelude's modules and constants (a
        candidate that rebinds ``math`` to an object whose ``fabs`` says 0
        must not decide the test's comparisons). A class the prelude defines
        is the candidate's, as in the single program (its instances are
        compared through the prelude's twin). A function the prelude
        defines too is `guarded`: the prelude's own answer must agree."""
        found: dict[str, Any] = {}
        for item in names[:10_000]:
            if type(item) is list and len(item) == 2 and type(item[0]) is str:
                name = item[0]
                if name == WITHIN:
                    continue
                if name == entry or (name in wanted and not hasattr(builtins, name)):
                    found[name] = item[1]
        for name, tree in found.items():
            trusted = prelude.get(name, _UNSET)
            if name != entry and trusted is not _UNSET and not isinstance(trusted, type):
                if not isinstance(trusted, FunctionType):
                    continue  # the prompt's module or constant stays the test's
            value = talk.decode(tree)
            if name != entry and isinstance(trusted, FunctionType):
                value = guarded(name, value, trusted)
            elif name != entry and isinstance(trusted, type):
                talk.guard_class(name, value, trusted)
            scope[name] = value
        if entry not in found:

            def candidate(*args: Any, **kwargs: Any) -> Any:
                return talk.ask(-1, "call", (entry, args, kwargs or None))

            candidate.__name__ = entry
            scope[entry] = candidate

    def _drive(
        self,
        driver: CodeType,
        scope: dict[str, Any],
        result: Callable[..., protocol.CheckResult],
    ) -> protocol.CheckResult:
        try:
            exec(driver, scope)
            timers.disarm()
        except CheckTimeout:
            raise
        except CallTimeLimit as exc:
            return result("timeout", str(exc))
        except CheckSetupError as exc:
            return result("error", str(exc)[:500])
        except BaseException as exc:
            timers.disarm()  # the verdict is in: no late CPU signal inside _reason
            return result("failed", _reason(exc))
        return result("passed")


def _twins(prelude_code: CodeType | None, prelude: dict[str, Any]) -> dict[str, type]:
    """The prelude's own classes by name, for comparing instances of the
    candidate's classes of those names. Taken from a run of the prelude of
    their own: the test's scope rebinds the prelude's names to the
    candidate's definitions, and a method that names its own class (``isinstance(o,
    P)`` in ``__eq__``) must find the prelude's class, as in one program."""
    names = {k for k, v in prelude.items() if isinstance(v, type) and v.__module__ == TEST_MODULE}
    if not names or prelude_code is None:
        return {}
    private: dict[str, Any] = {"__name__": TEST_MODULE, "__builtins__": builtins, WITHIN: within}
    state = random.getstate()
    try:
        exec(prelude_code, private)
    except Exception:
        private = prelude
    finally:
        random.setstate(state)
    return {
        v.__qualname__: v
        for k, v in private.items()
        if k in names and isinstance(v, type) and v.__module__ == TEST_MODULE
    }


_UNSET = object()
CPU_MARGIN_S = 2
"""CPU seconds past a check's budget before the kernel ends the verifier."""
VERIFIER_PIDS = 32
"""Tasks the verifier's cgroup admits: the verifier, and threads a test starts."""


def _charge(hello: protocol.VerifierHello) -> protocol.VerifierReady:
    """Move into cgroups of our own beside the slot's, with the same CPU
    allotment and a memory limit at our address-space limit: what a
    candidate's values make a test do is charged and bounded, never the
    host's. Named after our pid, so a successor sweeps them if we die."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    mine = cgroups.prepare(
        name=f"{cgroups.PREFIX}{os.getpid()}",
        engine_pid=os.getppid(),
        memory_bytes=hello.memory_mb * 1024 * 1024 if hello.memory_mb > 0 else total,
        nproc=VERIFIER_PIDS,
    )
    cgroups.join(mine)
    return protocol.VerifierReady(cgroups=mine.dirs, missing=sorted(mine.problems))


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Frames go out on a descriptor of their own; whatever the test writes
    # to fds 1 and 2 (below Python's sys.stdout) is dropped.
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    reader = frames.FrameReader(0)
    try:
        hello = msgspec.msgpack.decode(reader.frame(), type=protocol.VerifierHello)
    except EOFError:
        return
    frames.spin(hello.spin_s)
    if hello.memory_mb > 0:
        limit = hello.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    own = _charge(hello)
    frames.write_all(out_fd, protocol.encode_frame(own))
    verifier = Verifier(hello, out_fd)
    decoder = msgspec.msgpack.Decoder(protocol.Check)
    gc.freeze()
    while True:
        try:
            check = decoder.decode(reader.frame())
        except EOFError:
            break
        outcome = verifier.run(check)
        frames.write_all(out_fd, protocol.encode_frame(outcome))


if __name__ == "__main__":
    main()
