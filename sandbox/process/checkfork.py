"""The verifier's warm parent: confined once, one fresh child per check.

A test is the problem's code, and problems come from outside (a dataset
from the internet, a caller's problem, a model-written test): it is run as
warily as a candidate. The verifier process sets up the template's layers
once (`layers.setup`: a uid of its own for the checks, PID, network, IPC
and mount namespaces, cgroups, Landlock, the seccomp filter), then for each
`Check` the engine sends it:

1. reads the frame into one buffer, decoding only the check's id and
   budget, and takes the job's channel from the template over the link;
2. forks a child, which isolates itself as a candidate's child does
   (`harness.isolate`: a session of its own, the layers' uid and Landlock,
   rlimits, only its channel and report pipe open, a fresh work directory
   as its only writable place: the one its candidate shares when the
   template passes it, see `sharedwd`), then decodes and runs the check
   and reports on a private pipe;
3. wipes the buffer, waits for the child with a wall-clock backstop, kills
   whatever it left (its threads die with it, processes by the reaper,
   SysV objects are removed), discards its work directory, and forwards
   its result (or the timeout or error its end says) to the engine.

So nothing a test does (patched builtins or modules, ``sys`` settings, a
decimal context, threads, files) reaches the next check, and the parent,
which never runs problem code and never holds a test or a verdict as an
object, has nothing of another check for a later one to read. State of the
namespaces that cannot be wiped (`marks`) retires the verifier when a check
moved it, as it retires a template.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import socket
import struct
import sys
import tempfile
import time
from collections.abc import Callable

import msgspec

from .. import frames, protocol
from ..isolation import layers, reaper, sharedwd, workdir
from . import forkparent, harness

PIDS = 48
"""Tasks a verifier's cgroup admits besides itself: a check, the threads
and processes its test starts, and the threads standing for the
candidate's that call the test's code (`strict.lanes`, at most 16)."""
CPU_MARGIN_S = 2
"""CPU seconds past a check's budget before the kernel ends its process."""
RESULT_CAP = 256 * 1024
"""Bytes a check may report: a result is a status, 500 characters of reason
and 2,000 of what the test printed."""
READY = b"R"
"""The check's process is isolated; its result frame follows."""
SETUP = b"S"
"""The check's process could not be isolated (the engine's fault, never the
answer's: no code of the problem or the candidate has run)."""
PR_SET_PDEATHSIG = 1
_ID = struct.Struct("<Q")
_libc = ctypes.CDLL(None, use_errno=True)

Judge = Callable[[memoryview, int], protocol.CheckResult]
"""Runs in the child: decodes the check from its frame and judges it on
the channel descriptor it is given."""


class _Head(msgspec.Struct, array_like=True):
    """The parts of a `protocol.Check` frame the parent reads (the texts
    stay raw, in the buffer that is wiped after the fork)."""

    id: int
    setup: msgspec.Raw
    driver: msgspec.Raw
    entry: msgspec.Raw
    prelude: msgspec.Raw
    cpu_s: float = 0.0


_heads = msgspec.msgpack.Decoder(_Head)


class _Said(msgspec.Struct, array_like=True):
    """The head of a check's result frame, checked before it is forwarded."""

    id: int
    status: str
    reason: msgspec.Raw = msgspec.Raw(b"")
    output: msgspec.Raw = msgspec.Raw(b"")
    retire: bool = False
    stop: bool = False


_said = msgspec.msgpack.Decoder(_Said)
STATUSES = ("passed", "failed", "error", "timeout")


class CheckFork:
    """The verifier process's state: its layers, link, buffers and work dir."""

    def __init__(self, hello: protocol.VerifierHello, out_fd: int, judge: Judge) -> None:
        self.hello = hello
        self.out_fd = out_fd
        self.judge = judge
        self.work_root = hello.work_root or tempfile.mkdtemp(prefix="aioeval-verifier-")
        os.makedirs(self.work_root, mode=0o700, exist_ok=True)
        if hello.shared_dir:
            os.makedirs(hello.shared_dir, mode=0o700, exist_ok=True)
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
        self.conf = layers.setup(
            mode=hello.isolation,
            work_root=self.work_root,
            memory_mb=hello.memory_mb if hello.memory_mb > 0 else total_mb,
            disk_mb=hello.disk_mb,
            nproc=PIDS,
            site_dirs=sys.argv[1:],
            shared_dir=hello.shared_dir,
        )
        if self.conf.uid is not None:
            os.chmod(self.work_root, 0o711)  # the checks' uid must reach its dir
        self.layers = forkparent.process_layers(self.conf, hello.hide, hello.isolation)
        self.pid_init = "pid-namespace" in self.conf.layers and os.getpid() == 1
        self.mounts = "disk-tmpfs" in self.conf.layers
        self.workdir = os.path.join(self.work_root, "check")
        # Each check inherits this environment: the engine's allowlisted one,
        # with the check's work dir (the shared one, where there is one) as
        # HOME and TMPDIR.
        os.environ["HOME"] = os.environ["TMPDIR"] = self.conf.shared_dir or self.workdir
        self.limits: dict[str, float | int | None] = {
            "memory_mb": hello.memory_mb,
            "fsize_mb": hello.fsize_mb,
            "nofile": hello.nofile,
            "nproc": PIDS if self.conf.uid is not None else None,
        }
        self.link = socket.socket(fileno=hello.link_fd)
        self.reader = frames.JobReader(0)
        private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        self.report = mmap.mmap(-1, RESULT_CAP + 1, flags=private)
        if self.conf.cgroups:
            forkparent.protect_from_oom()

    def ready(self) -> protocol.VerifierReady:
        return protocol.VerifierReady(
            cgroups=self.conf.cgroups,
            missing=self.conf.missing,
            layers=self.layers,
            warnings=self.conf.warnings,
        )

    def serve(self) -> None:
        """Judge checks until the engine closes stdin or a check retires us."""
        while True:
            try:
                size = self.reader.frame_size()
                self.reader.read_program(size)
            except EOFError:
                return
            frame, retire = self.check(size)
            frames.write_all(self.out_fd, frame)
            del frame
            self.report.madvise(mmap.MADV_DONTNEED)  # what was forwarded reads as zeros
            if retire:
                return

    def close(self) -> None:
        self.sweep(-1)
        workdir.remove_tree(self.work_root)
        layers.teardown(self.conf)

    def check(self, size: int) -> tuple[bytes | memoryview, bool]:
        """Run the check in the buffer's first `size` bytes in a fresh child:
        the frame to send the engine, and whether to retire after it."""
        job_id, cpu_s, wall_s = self._budget(size)
        # The channel is taken first, whatever happens: the template passes
        # one per job, and the candidate's child waits on it until it closes.
        fd, shared = self.channel_for(job_id, wall_s)
        try:
            wdir = self._workdir(job_id, shared)
            r, w = os.pipe()
            if self.conf.pids is not None:
                self.conf.pids.next()
            pid = forkparent.fork()
        except Exception as exc:
            os.close(fd)
            reason = f"the verifier could not start a check: {exc!r}"
            return _frame(job_id, "infra_error", reason[:500], retire=True), True
        if pid == 0:
            self._child(size, fd, w, wdir, cpu_s)
        self.reader.wipe(size)  # the child has its copy; ours reaches no later check
        os.close(w)
        os.close(fd)
        oom = layers.oom_kills(self.conf)
        try:
            deadline = time.perf_counter() + cpu_s + wall_s
            view = memoryview(self.report)
            waited = forkparent.wait(pid, r, view, deadline, gone=lambda: self._gone(pid))
            _, status = os.waitpid(pid, 0)
        finally:
            os.close(r)
        self.sweep(pid)
        if wdir == self.conf.shared_dir:
            sharedwd.detach(wdir)
        else:
            workdir.discard(wdir, mounts=self.mounts)
        ending = _Ending(status, waited, cpu_s + wall_s, layers.oom_kills(self.conf) > oom)
        frame, timeout, retire = _result(job_id, view[: waited.size], ending)
        if timeout:
            self.stop(job_id)
        if layers.marked(self.conf) and not retire:
            # We exit after it, so rebuilding the frame here leaves nothing behind.
            old = msgspec.msgpack.decode(frame[protocol.HEADER.size :], type=protocol.CheckResult)
            frame, retire = protocol.encode_frame(msgspec.structs.replace(old, retire=True)), True
        return frame, retire

    def _budget(self, size: int) -> tuple[int, float, float]:
        """The check's id, CPU budget and wall-clock limit (read without
        decoding any of its texts)."""
        head = _heads.decode(memoryview(self.reader.buf)[:size])
        job_id, asked = head.id, head.cpu_s
        del head  # its raw fields point into the buffer
        cpu_s, wall_s = self.hello.cpu_s, self.hello.wall_s
        if asked > 0 and cpu_s > 0:
            cpu_s, wall_s = asked, wall_s * asked / cpu_s
        return job_id, cpu_s, wall_s

    def channel_for(self, job_id: int, wall_s: float) -> tuple[int, int]:
        """The job's channel, passed by the template (one per job, in order),
        and the job's work directory tmpfs when the template shares one
        (-1: none)."""
        self.link.settimeout(wall_s + 5.0)
        data, fds, _, _ = socket.recv_fds(self.link, _ID.size, 2)
        if len(data) != _ID.size or not fds:
            for fd in fds:
                os.close(fd)
            raise EOFError("the template's link closed")
        (got,) = _ID.unpack(data)
        if got != job_id:
            for fd in fds:
                os.close(fd)
            raise LookupError(f"channel for job {got}, expected {job_id}")
        return fds[0], fds[1] if len(fds) > 1 else -1

    def _workdir(self, job_id: int, shared: int) -> str:
        """The check's work dir: the candidate's tmpfs attached at the same
        path as in the template when it shares one, else a fresh private one."""
        if shared >= 0:
            try:
                if self.conf.shared_dir:
                    sharedwd.attach(shared, self.conf.shared_dir)
                    return self.conf.shared_dir
            finally:
                os.close(shared)
        return workdir.fresh(
            self.workdir,
            os.path.join(self.work_root, str(job_id)),
            mounts=self.mounts,
            disk_mb=self.hello.disk_mb,
            uid=self.conf.uid,
        )

    def stop(self, job_id: int) -> None:
        """Tell the template the test timed out on this job: a child still
        busy in a call (past its limit) is stopped instead of left to run
        out its budget. Only then: any other way, a child that does not end
        is judged by how it ends, as the single program would be."""
        try:
            self.link.send(_ID.pack(job_id), socket.MSG_DONTWAIT)
        except OSError:
            pass  # the template is gone, or its end is full: the budget ends it

    def sweep(self, pid: int) -> None:
        """Kill the check's group and everything else it left, and reap."""
        if pid > 0:
            reaper.kill_group(pid)
        layers.clear(self.conf)
        reaper.kill_children()

    def _gone(self, pid: int) -> None:
        self.sweep(pid)
        layers.teardown(self.conf)
        os._exit(0)

    def _child(self, size: int, fd: int, w: int, wdir: str, cpu_s: float) -> None:
        """In the forked child: isolate, judge, report (never returns)."""
        try:
            if not self.pid_init:
                _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            limits = {**self.limits, "cpu_s": cpu_s + CPU_MARGIN_S}
            # In a shared dir the test's files stay read-only to the candidate.
            os.umask(0o022)
            if wdir == self.conf.shared_dir:
                sharedwd.readable_tempfiles()
            if os.environ.get("HOME") != wdir:
                os.environ["HOME"] = os.environ["TMPDIR"] = wdir
            harness.isolate(w, 1, wdir, None, limits, fd, self._confine)
        except BaseException as exc:
            frames.write_all(w, SETUP + f"the verifier could not isolate a check: {exc!r}".encode())
            os._exit(71)
        try:
            frames.write_all(w, READY)
            if wdir == self.conf.shared_dir:
                sharedwd.guard(wdir)
                sharedwd.open_dirs(wdir)
            result = self.judge(memoryview(self.reader.buf)[:size], fd)
            frames.write_all(w, protocol.encode_frame(result))
        finally:
            os._exit(0)

    def _confine(self) -> None:
        layers.confine_child(self.conf)


class _Ending:
    """How a check's process ended, for when it reported no result."""

    def __init__(self, status: int, waited: forkparent.Waited, budget: float, oom: bool) -> None:
        self.status = status
        self.waited = waited
        self.budget = budget
        self.oom = oom

    def verdict(self) -> tuple[str, str]:
        """Its status and reason: out of CPU (the kernel's ceiling: SIGXCPU,
        then SIGKILL) or past the wall-clock backstop is the answer's
        timeout, as for a candidate; anything else is an error."""
        sig = os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else 0
        if self.waited.wall_killed:
            return "timeout", _too_long(f"{self.budget:g}s")
        if self.oom:
            return "error", "the check ran out of memory in the verifier"
        if self.waited.too_big:
            return "error", "the check's process reported more than a result"
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return "timeout", _too_long("its CPU budget")
        how = f"signal {sig}" if sig else f"exit status {os.waitstatus_to_exitcode(self.status)}"
        return "error", f"the check's process ended without a verdict ({how})"


def _too_long(what: str) -> str:
    return f"the verifier could not finish judging this answer within {what}"


def _result(
    job_id: int, report: memoryview, ending: _Ending
) -> tuple[bytes | memoryview, bool, bool]:
    """The frame to forward (the child's own, in place, when it is a result
    for this job), whether to stop the candidate's child (a timeout, or a
    call past its limit), and whether to retire."""
    said = _parse(report, job_id)
    if said is not None:
        return report[1:], said.status == "timeout" or said.stop, False
    if report[:1] == SETUP:
        text = report[1:].tobytes().decode("utf-8", "replace")[:500]
        return _frame(job_id, "infra_error", text, retire=True), False, True
    status, reason = ending.verdict()
    return _frame(job_id, status, reason), status == "timeout", False


def _parse(report: memoryview, job_id: int) -> _Said | None:
    """The result frame after the child's READY mark, if it is one whole
    frame for this job with a status a check can have."""
    head = protocol.HEADER.size
    if len(report) < 1 + head or report[:1] != READY:
        return None
    (n,) = protocol.HEADER.unpack(report[1 : 1 + head])
    if n != len(report) - 1 - head:
        return None
    try:
        said = _said.decode(report[1 + head :])
    except msgspec.DecodeError:
        return None
    return said if said.id == job_id and said.status in STATUSES else None


def _frame(job_id: int, status: str, reason: str, *, retire: bool = False) -> bytes:
    result = protocol.CheckResult(id=job_id, status=status, reason=reason, retire=retire)
    return protocol.encode_frame(result)
