"""Sandbox template process: pre-warmed, clean, forks one child per job.

Started by the engine as ``<abs python> -s -S -P worker.py SITE_DIR...`` with
an allowlisted environment (never the engine's), so the template's memory
holds no API key and forking it is safe. It reads `protocol` frames on stdin
and writes one Outcome per Job on stdout. Per job it forks a child (see
`harness`), waits on a pidfd with a wall-clock backstop, reaps it, kills
whatever the child left behind (its process group, and as a child subreaper
any daemon that escaped the group), reads a short tail of the captured
output, and removes the throwaway directory.

Isolation (see `layers`): at start the template sets up, once, whatever
layers ``Hello.isolation`` asks for and the machine allows (namespaces, a
private tmpfs work root, cgroups it joins itself so every child starts in
them, a prepared Landlock ruleset); each child then applies its cheap half
(uid drop, Landlock) before any candidate code runs. The Ready frame lists
the layers in force and a warning for each one that is not.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import os
import select
import signal
import socket
import struct
import sys
import time


def _bootstrap() -> None:
    # Site directories (for msgspec, and so candidates can import what the
    # user installed, as under the official harnesses) come from argv, not
    # from the environment. -P leaves our own directory off sys.path.
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    for path in sys.argv[1:]:
        if path not in sys.path:
            sys.path.append(path)


if __name__ == "__main__":
    _bootstrap()

try:
    from . import fairness, harness, layers, protocol, workdir
except ImportError:
    import fairness  # type: ignore[no-redef,import-not-found]
    import harness  # type: ignore[no-redef,import-not-found]
    import layers  # type: ignore[no-redef,import-not-found]
    import protocol  # type: ignore[no-redef,import-not-found]
    import workdir  # type: ignore[no-redef,import-not-found]

# Warm the modules candidates commonly import, so each fork gets them free.
import bisect  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
import random
import re  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401

import msgspec

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
RESULT_CAP = 4 * 1024 * 1024
REASON_BYTES = 2000
RANDOM_SEED = 0
"""Same seed as the verifier's: tests see the same random numbers in both
scoring models, and every run sees the same ones."""
_JOB_ID = struct.Struct("<Q")

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg: int) -> bool:
    return int(_libc.prctl(option, arg, 0, 0, 0)) == 0


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Template:
    """State of one template: its limits, secret, output memfd, counters."""

    def __init__(self, hello: protocol.Hello) -> None:
        self.hello = hello
        self.limits = hello.limits
        self.secret = os.urandom(16)
        self.out_fd = -1
        self.work_root = hello.work_root
        os.makedirs(self.work_root, mode=0o700, exist_ok=True)
        self.conf = layers.setup(
            mode=hello.isolation,
            work_root=self.work_root,
            memory_mb=self.limits.memory_mb,
            disk_mb=self.limits.disk_mb,
            nproc=self.limits.nproc,
            site_dirs=sys.argv[1:],
        )
        if self.conf.uid is not None:
            os.chmod(self.work_root, 0o711)  # the child's uid must reach its dir
        self.layers: list[str] = ["rlimits", "process-group", "fresh-env", "workdir"]
        self.warnings: list[str] = self.conf.warnings
        self.missing: list[str] = self.conf.missing
        if prctl(PR_SET_CHILD_SUBREAPER, 1):
            self.layers.append("subreaper")
        else:
            self.missing.append("subreaper")
            self.warnings.append("child subreaper unavailable: setsid daemons may survive")
        self.layers.extend(self.conf.layers)
        self.limit_map: dict[str, float | int | None] = {
            "cpu_s": self.limits.cpu_s,
            "memory_mb": self.limits.memory_mb,
            "fsize_mb": self.limits.fsize_mb,
            "nofile": self.limits.nofile,
            # Root ignores RLIMIT_NPROC and users share its count, so it only
            # means something under a uid of our own.
            "nproc": self.limits.nproc if self.conf.uid is not None else None,
        }
        self.env = dict(hello.env)
        # Candidates get this environment by inheritance: install it in the
        # template once, with a fixed per-slot work dir as HOME and TMPDIR.
        self.workdir = os.path.join(self.work_root, "cand")
        os.environ.clear()
        os.environ.update(self.env)
        os.environ["HOME"] = self.workdir
        os.environ["TMPDIR"] = self.workdir
        self.oom_seen = layers.oom_kills(self.conf)
        self.tail = bytearray(self.limits.output_tail)
        # A fresh tmpfs per job where this template has its own mounts: the
        # whole tree a candidate wrote goes with one unmount, however deep.
        self.fresh_mounts = "disk-tmpfs" in self.conf.layers
        if hello.hide and hello.isolation != "minimal":
            problems = workdir.hide(hello.hide) if self.fresh_mounts else ["no mount namespace"]
            if problems:
                self.missing.append("answer-key-hidden")
                self.warnings.append(f"answer-key-hidden unavailable: {'; '.join(problems)}")
            else:
                self.layers.append("answer-key-hidden")
        self.link = _link(hello.link_fd)
        random.seed(RANDOM_SEED)
        if self.conf.cgroups:
            # The candidates share our cgroups: under memory pressure the
            # kernel must never pick the template (children reset this).
            _protect_from_oom()

    def run(self, job: protocol.JobHead, program: JobReader) -> protocol.Outcome:
        wdir, env = self._fresh_workdir(job.id)
        # Nothing a candidate could mark survives it: a fresh output file
        # (locks and flags set on the last one die with it), a random pid.
        self.out_fd = _output_file()
        token = self.secret + job.id.to_bytes(8, "little", signed=False)
        channel = self._channel(job) if job.kind == "serve" else None
        r, w = os.pipe()
        if self.conf.pids is not None:
            self.conf.pids.next()
        tree = fairness.TreeCpu(self.conf.slot)
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                die_with_parent()
                harness.child_main(
                    task=protocol.task_of(job, program.take(job.size)),
                    token=token,
                    result_fd=w,
                    out_fd=self.out_fd,
                    workdir=wdir,
                    env=env,
                    limits=self.limit_map,
                    channel_fd=channel,
                    confine=self._confine,
                )
            finally:
                os._exit(70)
        program.wipe(job.size)  # the child has its copy; ours must not reach the next one
        os.close(w)
        if channel is not None:
            os.close(channel)
        try:
            data, wall_killed, too_big = self._wait(pid, r, t0)
            run_delay = fairness.run_delay_ms(pid) if wall_killed else 0.0
            _, status, usage = os.wait4(pid, 0)
        finally:
            os.close(r)
        wall_ms = (time.perf_counter() - t0) * 1000.0
        self._cleanup(pid)
        # The whole tree's CPU (helpers nobody waited for included), never
        # less than what the child and the processes it waited for used.
        cpu_ms = max((usage.ru_utime + usage.ru_stime) * 1000.0, tree.used_ms())
        tail = self._read_tail()
        os.close(self.out_fd)
        self._discard_workdir(wdir)
        oom = layers.oom_kills(self.conf)
        oom_killed, self.oom_seen = oom > self.oom_seen, oom
        outcome = self._judge(job, token, data, status, wall_killed, too_big, wall_ms, cpu_ms, tail)
        if outcome.status == "timeout" and wall_killed:
            # Starved by the machine, not the candidate's timeout: infra_error.
            starved = fairness.starved(self.limits.wall_s, wall_ms, cpu_ms, run_delay)
            if starved is not None:
                outcome = msgspec.structs.replace(outcome, status="infra_error", reason=starved)
        if oom_killed:
            reason = "memory limit exceeded (all of the candidate's processes together)"
            if outcome.reason:
                reason += f"; {outcome.reason}"
            outcome = msgspec.structs.replace(outcome, status="error", reason=reason)
        return outcome

    def _fresh_workdir(self, job_id: int) -> tuple[str, dict[str, str] | None]:
        """The job's empty work dir, and the environment to give the child
        when it is not the usual one (None: inherit the template's)."""
        uid = self.conf.uid
        if self.fresh_mounts:
            os.makedirs(self.workdir, mode=0o700, exist_ok=True)
            workdir.mount_workdir(self.workdir, self.limits.disk_mb, uid)
            return self.workdir, None
        wdir, env = self.workdir, None
        try:
            os.mkdir(wdir, 0o700)
        except FileExistsError:
            # The last candidate left something that could not be removed:
            # use a fresh directory and tell the child its own HOME/TMPDIR.
            wdir = os.path.join(self.work_root, str(job_id))
            os.mkdir(wdir, 0o700)
            env = self.env
        if uid is not None:
            os.chown(wdir, uid, uid)
        return wdir, env

    def _discard_workdir(self, path: str) -> None:
        if self.fresh_mounts:
            workdir.unmount_workdir(path)
        else:
            workdir.remove_tree(path)

    def _channel(self, job: protocol.JobHead) -> int:
        """A fresh socket pair for a served job: one end goes to the
        verifier (tagged with the job id), the other to the child."""
        if self.link is None:
            raise RuntimeError("a served job needs a verifier link")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self.link, [_JOB_ID.pack(job.id)], [theirs.fileno()])
        finally:
            theirs.close()
        return ours.detach()

    def _confine(self) -> None:
        layers.confine_child(self.conf)

    def _wait(self, pid: int, r: int, t0: float) -> tuple[bytes, bool, bool]:
        """Collect the child's report until it exits or the backstop fires."""
        pidfd = os.pidfd_open(pid)
        os.set_blocking(r, False)
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.register(r, select.POLLIN)
        poller.register(0, 0)  # hang-up only: the engine went away
        chunks: list[bytes] = []
        size = 0
        deadline = t0 + self.limits.wall_s
        wall_killed = too_big = False
        r_open = True
        try:
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    _killpg(pid)
                    wall_killed = True
                    break
                events = poller.poll(left * 1000.0)
                exited = False
                for fd, ev in events:
                    if fd == 0 and ev & (select.POLLHUP | select.POLLERR):
                        _killpg(pid)
                        self._cleanup(pid)
                        layers.teardown(self.conf)
                        os._exit(0)
                    if fd == r and r_open:
                        chunk = _read_some(r)
                        if chunk:
                            chunks.append(chunk)
                            size += len(chunk)
                            if size > RESULT_CAP:
                                too_big = True
                                _killpg(pid)
                        elif chunk is not None:
                            poller.unregister(r)
                            r_open = False
                    if fd == pidfd:
                        exited = True
                if exited or too_big:
                    break
            # Drain what the child wrote just before exiting.
            while r_open and size <= RESULT_CAP:
                chunk = _read_some(r)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(pidfd)
        return b"".join(chunks), wall_killed, too_big

    def _cleanup(self, pid: int) -> None:
        """Kill the child's group and reap every orphan this subreaper got."""
        if pid > 0:
            _killpg(pid)
        layers.clear(self.conf)
        for _ in range(1000):
            kids = _children()
            if not kids:
                break
            for kid in kids:
                try:
                    os.kill(kid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            while True:
                try:
                    reaped, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if reaped == 0:
                    time.sleep(0.0005)
                    break

    def _read_tail(self) -> int:
        """Read the last bytes of the child's output into the tail buffer
        (never into a Python object: see `send`); return how many."""
        size = os.fstat(self.out_fd).st_size
        n = min(size, len(self.tail))
        if n <= 0:
            return 0
        return os.preadv(self.out_fd, [memoryview(self.tail)[:n]], size - n)

    def send(self, outcome: protocol.Outcome) -> None:
        """The outcome frame, then the raw tail bytes; then the tail is wiped."""
        n = outcome.tail_size
        _write_all(1, protocol.encode_frame(outcome))
        if n:
            _write_all(1, memoryview(self.tail)[:n])
            self.tail[:n] = bytes(n)

    def _judge(
        self,
        job: protocol.JobHead,
        token: bytes,
        data: bytes,
        status: int,
        wall_killed: bool,
        too_big: bool,
        wall_ms: float,
        cpu_ms: float,
        tail: int,
    ) -> protocol.Outcome:
        def out(kind: str, reason: str = "", value: bytes | None = None) -> protocol.Outcome:
            return protocol.Outcome(
                id=job.id,
                status=kind,
                reason=reason,
                value=value,
                wall_ms=wall_ms,
                cpu_ms=cpu_ms,
                tail_size=tail,
            )

        # How the child ended comes first: a child that was killed, ran out
        # of time or died is never passed, whatever it wrote before.
        if too_big:
            return out("error", "result too large")
        if wall_killed:
            return out("timeout", f"wall-clock backstop of {self.limits.wall_s:g}s exceeded")
        budget_ms = self.limits.cpu_s * 1000.0
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_ms >= budget_ms * 0.95):
                return out("timeout", f"CPU budget of {self.limits.cpu_s:g}s exceeded")
            if sig == signal.SIGXFSZ:
                return out("error", "file size limit exceeded (output or file too large)")
            return out("error", f"killed by signal {signal.Signals(sig).name}")
        if cpu_ms > budget_ms:
            # RLIMIT_CPU counts whole seconds per process and can be ignored
            # until the hard limit; the budget is the exact total of the
            # child and the descendants it waited for.
            return out("timeout", f"CPU budget of {self.limits.cpu_s:g}s exceeded")
        report = harness.parse_report(data, token)
        if report is not None:
            kind, payload = report
            # A reason is at most a few KB, whatever the child wrote.
            text = payload[:REASON_BYTES].decode("utf-8", "replace")
            if kind == harness.ERROR:
                return out("error", text)
            if job.kind == "serve":
                pass  # a served child's word is never a verdict
            elif kind == harness.PASSED and job.kind == "program":
                return out("passed")
            elif kind == harness.VALUE and job.kind == "call":
                return out("passed", value=payload)
            elif kind == harness.FAILED:
                return out("failed", text)
        if job.kind == "serve":
            return out("exited")
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        return out("failed", f"exited with status {code} before the check completed")


MFD_NOEXEC_SEAL = 0x0008


def _output_file() -> int:
    """A memory file for one candidate's stdout and stderr (never executable
    where the kernel knows how to seal that)."""
    try:
        return os.memfd_create("candidate-output", MFD_NOEXEC_SEAL)
    except OSError:
        return os.memfd_create("candidate-output", 0)  # kernels before 6.3


def _protect_from_oom() -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("-1000")
    except OSError:
        pass  # not privileged: the children's +1000 still points the kernel at them


def _link(fd: int) -> socket.socket | None:
    """The verifier link the engine passed, if any."""
    return socket.socket(fileno=fd) if fd >= 0 else None


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _children() -> list[int]:
    kids: list[int] = []
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return kids
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                kids.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return kids


def _read_some(fd: int) -> bytes | None:
    """Read available bytes; b'' at EOF, None if nothing is ready."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError as exc:
        if exc.errno == errno.EINTR:
            return None
        return b""


class JobReader:
    """Reads the engine's frames on stdin exactly (never ahead), and each
    job's program bytes straight into one reusable buffer that is wiped
    after every fork (see `protocol.JobHead`)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray(1 << 16)

    def _exactly(self, view: memoryview) -> None:
        while view:
            n = os.readv(self.fd, [view])
            if n == 0:
                raise EOFError
            view = view[n:]

    def frame(self) -> bytes:
        head = bytearray(protocol.HEADER.size)
        self._exactly(memoryview(head))
        (size,) = protocol.HEADER.unpack(head)
        body = bytearray(size)
        self._exactly(memoryview(body))
        return bytes(body)

    def read_program(self, size: int) -> None:
        if size > len(self.buf):
            self.wipe(len(self.buf))
            self.buf = bytearray(max(size, 2 * len(self.buf)))
        self._exactly(memoryview(self.buf)[:size])

    def take(self, size: int) -> bytes:
        """The program, as the child's own object (call after fork only)."""
        return bytes(self.buf[:size])

    def wipe(self, size: int) -> None:
        self.buf[:size] = bytes(size)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def main() -> None:
    die_with_parent()
    # No SIGINT handling: the template has a session of its own, so a
    # terminal's Ctrl-C never reaches it (the engine decides when it stops).
    reader = JobReader(0)
    try:
        hello = msgspec.msgpack.decode(reader.frame(), type=protocol.Hello)
    except EOFError:
        return
    template = Template(hello)
    _write_all(
        1,
        protocol.encode_frame(
            protocol.Ready(
                pid=template.conf.host_pid,
                layers=template.layers,
                warnings=template.warnings,
                missing=template.missing,
                cgroups=template.conf.cgroups,
            )
        ),
    )
    decoder = msgspec.msgpack.Decoder(protocol.JobHead)
    # Everything the template holds now is permanent: frozen objects are never
    # scanned by a child's collector, so children copy fewer pages on write.
    gc.freeze()
    while True:
        try:
            job = decoder.decode(reader.frame())
            reader.read_program(job.size)
        except EOFError:
            break
        try:
            outcome = template.run(job, reader)
        except Exception as exc:
            # Something this candidate did broke the template (its cleanup,
            # say): that is the candidate's error, and a fresh template
            # serves the next job.
            reason = f"the sandbox could not recover from this candidate: {exc!r}"[:500]
            _write_all(
                1, protocol.encode_frame(protocol.Outcome(id=job.id, status="error", reason=reason))
            )
            break
        template.send(outcome)
    template._cleanup(-1)
    workdir.remove_tree(template.work_root)
    layers.teardown(template.conf)


if __name__ == "__main__":
    main()
