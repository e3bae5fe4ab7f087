"""One sandbox template: its isolation, set up once, and the job runner.

`Template` is the state a template process keeps for its whole life (its
limits, secret, layers and work dir); `Template.run` runs one job: it forks
a child (see `harness`), waits on a pidfd with a wall-clock backstop, reaps
it, kills whatever the child left behind (see `reaper`), reads a short tail
of the captured output, removes the throwaway directory, and has `verdict`
decide the Outcome. The frame loop around it is `worker`'s.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import random
import signal
import socket
import struct
import sys
import time

import msgspec

from .. import frames, protocol
from ..isolation import fairness, layers, reaper, sharedwd, workdir
from ..protocol.served import ceiling_s
from ..values import filetap, protocols, realclasses
from . import forkparent, harness, verdict

PR_SET_PDEATHSIG = 1
RESULT_CAP = 4 * 1024 * 1024
_JOB_ID = struct.Struct("<Q")

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, arg: int) -> bool:
    return int(_libc.prctl(option, arg, 0, 0, 0)) == 0


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class SetupFault(Exception):
    """A job failed before its child was forked: the template's state or the
    machine's, never the candidate's (none of its code has run). The job is
    an engine fault and the template is replaced."""


class Template:
    """State of one template: its limits, secret, output memfd, counters."""

    def __init__(self, hello: protocol.Hello) -> None:
        self.hello = hello
        self.limits = hello.limits
        self.secret = os.urandom(16)
        self.token = b""
        self.out_fd = -1
        self.work_root = hello.work_root
        os.makedirs(self.work_root, mode=0o700, exist_ok=True)
        if hello.shared_dir:
            os.makedirs(hello.shared_dir, mode=0o700, exist_ok=True)
        self.conf = layers.setup(
            mode=hello.isolation,
            work_root=self.work_root,
            memory_mb=self.limits.memory_mb,
            disk_mb=self.limits.disk_mb,
            nproc=self.limits.nproc,
            site_dirs=sys.argv[1:],
            shared_dir=hello.shared_dir,
        )
        if self.conf.uid is not None:
            os.chmod(self.work_root, 0o711)  # the child's uid must reach its dir
        self.layers = forkparent.process_layers(self.conf, hello.hide, hello.isolation)
        self.warnings: list[str] = self.conf.warnings
        self.missing: list[str] = self.conf.missing
        self.pid_init = "pid-namespace" in self.conf.layers and os.getpid() == 1
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
        private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS  # never shared with a child
        self.report = mmap.mmap(-1, RESULT_CAP + (1 << 16), flags=private)
        """The child's report, read in place and wiped after every job: a
        candidate's text never becomes an object the template frees. A
        private anonymous mapping, so only the pages a report filled exist, and the
        wipe gives them back (fewer pages to copy at every fork)."""
        self.report_size = 0
        # A fresh tmpfs per job where this template has its own mounts: the
        # whole tree a candidate wrote goes with one unmount, however deep.
        self.fresh_mounts = "disk-tmpfs" in self.conf.layers
        self.link = _link(hello.link_fd)
        self.shared = self.conf.shared_dir if self.link is not None else ""
        """Where a served job's work dir is attached, shared with its check."""
        self.shared_fd = -1
        """The job's detached tmpfs, passed to the verifier with the channel."""
        random.seed(protocol.RANDOM_SEED)
        self.random_state = random.getstate()
        """Every child starts from it: ``random`` reseeds itself from the
        system's entropy in a forked child, so the child restores it."""
        if self.conf.cgroups:
            # The candidates share our cgroups: under memory pressure the
            # kernel must never pick the template (children reset this).
            forkparent.protect_from_oom()

    def run(self, job: protocol.JobHead, program: frames.JobReader) -> protocol.Outcome:
        limits = self.limits.for_task(job.cpu_s)
        try:
            wdir, env = self._fresh_workdir(job)
            # Nothing a candidate could mark survives it: a fresh output file
            # (locks and flags set on the last one die with it), a random pid.
            self.out_fd = _output_file()
            token = self.token = self.secret + job.id.to_bytes(8, "little", signed=False)
            channel = self._channel(job) if job.kind == "serve" else None
            r, w = os.pipe()
            if self.conf.pids is not None:
                self.conf.pids.next()
            tree = fairness.TreeCpu(self.conf.slot)
            realclasses.settle()  # the children then find no standard module to walk
            protocols.warm()
            t0 = time.perf_counter()
            pid = os.fork()
        except Exception as exc:
            raise SetupFault(f"sandbox setup failed: {exc!r}") from exc
        if pid == 0:
            try:
                os.close(r)
                self._child(job, program.take(job.size), token, w, wdir, env, channel, limits)
            finally:
                os._exit(70)
        program.wipe(job.size)  # the child has its copy; ours must not reach the next one
        os.close(w)
        try:
            size, wall_killed, too_big, stopped = self._wait(job, pid, r, t0 + limits.wall_s)
            self.report_size = size
            run_delay = fairness.run_delay_ms(pid) if wall_killed else 0.0
            _, status, usage = os.wait4(pid, 0)
        finally:
            os.close(r)
            if channel is not None:
                _hang_up(channel)
        wall_ms = (time.perf_counter() - t0) * 1000.0
        self.cleanup(pid)
        report = harness.parse_report(memoryview(self.report)[:size], token)
        # A child that could not be set up was failed by the template's own
        # state (none of the candidate's code had run): the next job gets a
        # fresh template.
        retire = layers.marked(self.conf) or (report is not None and report[0] == harness.SETUP)
        # The whole tree's CPU (helpers nobody waited for included), never
        # less than what the child and the processes it waited for used.
        cpu_ms = max((usage.ru_utime + usage.ru_stime) * 1000.0, tree.used_ms())
        tail = self._read_tail()
        os.close(self.out_fd)
        self._discard_workdir(wdir)
        oom = layers.oom_kills(self.conf)
        oom_killed, self.oom_seen = oom > self.oom_seen, oom
        ending = verdict.Ending(
            status=status,
            wall_killed=wall_killed,
            too_big=too_big,
            wall_ms=wall_ms,
            cpu_ms=cpu_ms,
            run_delay_ms=run_delay,
            oom_killed=oom_killed,
            report=report,
            tail_size=tail,
            stopped=stopped,
        )
        out = verdict.outcome(job, limits, ending)
        return msgspec.structs.replace(out, retire=True) if retire else out

    def _child(
        self,
        job: protocol.JobHead,
        program: bytes,
        token: bytes,
        result_fd: int,
        wdir: str,
        env: dict[str, str] | None,
        channel: int | None,
        limits: protocol.Limits,
    ) -> None:
        """In the forked child: run the job (never returns to the template)."""
        random.setstate(self.random_state)
        if not self.pid_init:
            # As init of its PID namespace the template takes every child
            # with it when it dies; otherwise each child asks for that.
            die_with_parent()
        if wdir == self.shared and wdir:
            sharedwd.readable_tempfiles()
            filetap.tap(wdir)
        harness.child_main(
            task=protocol.task_of(job, program),
            token=token,
            result_fd=result_fd,
            out_fd=self.out_fd,
            workdir=wdir,
            env=env,
            limits=self._limit_map(job, limits),
            channel_fd=channel,
            confine=self._confine,
        )

    def _limit_map(
        self, job: protocol.JobHead, limits: protocol.Limits
    ) -> dict[str, float | int | None]:
        """The child's rlimits: a served child may go past its budget, up to
        a ceiling, for what serving the verifier costs it (`protocol.served`;
        the engine holds it to its exact share)."""
        if job.kind == "serve":
            return {**self.limit_map, "cpu_s": limits.cpu_s, "cpu_hard_s": ceiling_s(limits.cpu_s)}
        if limits is self.limits:
            return self.limit_map
        return {**self.limit_map, "cpu_s": limits.cpu_s}

    def _fresh_workdir(self, job: protocol.JobHead) -> tuple[str, dict[str, str] | None]:
        """The job's empty work dir, and the environment to give the child
        when it is not the usual one (None: inherit the template's). A
        served job's is shared with its check where the kernel allows."""
        if job.kind == "serve" and self.shared:
            try:
                self.shared_fd = sharedwd.pair(self.limits.disk_mb, self.shared)
            except OSError as exc:
                self.warnings.append(f"no work directory shared with the verifier: {exc}")
                self.shared = ""
            else:
                return self.shared, self.env
        spare = os.path.join(self.work_root, str(job.id))
        wdir = workdir.fresh(
            self.workdir,
            spare,
            mounts=self.fresh_mounts,
            disk_mb=self.limits.disk_mb,
            uid=self.conf.uid,
        )
        # Moved to the spare: tell the child its own HOME/TMPDIR.
        return wdir, (None if wdir == self.workdir else self.env)

    def _discard_workdir(self, path: str) -> None:
        if path == self.shared and path:
            sharedwd.detach(path)
        else:
            workdir.discard(path, mounts=self.fresh_mounts)

    def _channel(self, job: protocol.JobHead) -> int:
        """A fresh socket pair for a served job: one end goes to the
        verifier (tagged with the job id), the other to the child."""
        if self.link is None:
            raise RuntimeError("a served job needs a verifier link")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.conf.net_counters is not None:
            ends = (os.fstat(ours.fileno()).st_ino, os.fstat(theirs.fileno()).st_ino)
            self.conf.net_counters.channel = frozenset(str(i).encode() for i in ends)
        fds = [theirs.fileno()]
        if self.shared_fd >= 0:
            fds.append(self.shared_fd)
        try:
            socket.send_fds(self.link, [_JOB_ID.pack(job.id)], fds)
        finally:
            theirs.close()
            if self.shared_fd >= 0:
                os.close(self.shared_fd)
                self.shared_fd = -1
        return ours.detach()

    def _confine(self) -> None:
        layers.confine_child(self.conf)

    def _wait(
        self, job: protocol.JobHead, pid: int, r: int, deadline: float
    ) -> tuple[int, bool, bool, bool]:
        """Collect the child's report until it exits, the backstop fires, or
        (a served job) the verifier says its verdict is already against the
        answer, so a child still running a call past its limit is stopped."""
        link = self.link.fileno() if self.link is not None and job.kind == "serve" else -1
        waited = forkparent.wait(
            pid,
            r,
            memoryview(self.report)[: RESULT_CAP + 1],
            deadline,
            gone=lambda: self._engine_gone(pid),
            stop_fd=link,
            told_to_stop=lambda: self._told_to_stop(job.id),
        )
        return waited.size, waited.wall_killed, waited.too_big, waited.stopped

    def _engine_gone(self, pid: int) -> None:
        self.cleanup(pid)
        layers.teardown(self.conf)
        os._exit(0)

    def _told_to_stop(self, job_id: int) -> bool:
        """Did the verifier say it has decided against this job? (Words
        about earlier jobs, which ended first, are read and dropped.)"""
        assert self.link is not None
        try:
            data = self.link.recv(_JOB_ID.size * 16, socket.MSG_DONTWAIT)
        except OSError:
            return False
        ids = {_JOB_ID.unpack_from(data, i)[0] for i in range(0, len(data) - 7, _JOB_ID.size)}
        return job_id in ids

    def cleanup(self, pid: int) -> None:
        """Kill the child's group and reap every orphan this subreaper got."""
        if pid > 0:
            reaper.kill_group(pid)
        layers.clear(self.conf)
        reaper.kill_children()

    def _read_tail(self) -> int:
        """Read the last bytes of the child's output into the tail buffer
        (never into a Python object: see `send`); return how many."""
        size = os.fstat(self.out_fd).st_size
        n = min(size, len(self.tail))
        if n <= 0:
            return 0
        return os.preadv(self.out_fd, [memoryview(self.tail)[:n]], size - n)

    def send(self, outcome: protocol.Outcome) -> None:
        """The outcome frame, then the raw reason and tail bytes; then both
        buffers are wiped."""
        frames.write_all(1, protocol.encode_frame(outcome))
        if outcome.reason_size:
            report = harness.parse_report(memoryview(self.report)[: self.report_size], self.token)
            assert report is not None, "a reason is sent only for a parsed report"
            frames.write_all(1, report[1][: outcome.reason_size])
        if self.report_size:
            used = -(-self.report_size // mmap.PAGESIZE) * mmap.PAGESIZE
            self.report.madvise(mmap.MADV_DONTNEED, 0, used)  # reads as zeros from now
        self.report_size = 0
        n = outcome.tail_size
        if n:
            frames.write_all(1, memoryview(self.tail)[:n])
            self.tail[:n] = bytes(n)


MFD_NOEXEC_SEAL = 0x0008


def _output_file() -> int:
    """A memory file for one candidate's stdout and stderr (never executable
    where the kernel knows how to seal that)."""
    try:
        return os.memfd_create("candidate-output", MFD_NOEXEC_SEAL)
    except OSError:
        return os.memfd_create("candidate-output", 0)  # kernels before 6.3


def _hang_up(fd: int) -> None:
    """Shut the child's end of its channel down once the child has ended,
    then close our copy. Closing alone would not end it: the child can put
    that end in flight (SCM_RIGHTS into the verifier's own receive queue),
    where it outlives every process of the candidate's, and the verifier
    would wait for it, or block writing to it, until the engine gave up on
    the slot. A shutdown reaches the socket itself wherever it is held."""
    sock = socket.socket(fileno=fd)
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # never connected, or the verifier's end is gone already
    finally:
        sock.close()


def _link(fd: int) -> socket.socket | None:
    """The verifier link the engine passed, if any."""
    return socket.socket(fileno=fd) if fd >= 0 else None
