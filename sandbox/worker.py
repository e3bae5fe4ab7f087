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
import shutil
import signal
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
    from . import fairness, harness, layers, protocol
except ImportError:
    import fairness  # type: ignore[no-redef,import-not-found]
    import harness  # type: ignore[no-redef,import-not-found]
    import layers  # type: ignore[no-redef,import-not-found]
    import protocol  # type: ignore[no-redef,import-not-found]

# Warm the modules candidates commonly import, so each fork gets them free.
import bisect  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401

import msgspec

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
RESULT_CAP = 4 * 1024 * 1024

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
        self.out_fd = os.memfd_create("candidate-output", 0)
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

    def run(self, job: protocol.Job) -> protocol.Outcome:
        workdir = self.workdir
        env: dict[str, str] | None = None
        try:
            os.mkdir(workdir, 0o700)
        except FileExistsError:
            # The last candidate left something rmtree could not remove: use
            # a fresh directory and tell the child its own HOME/TMPDIR.
            workdir = os.path.join(self.work_root, str(job.id))
            os.mkdir(workdir, 0o700)
            env = self.env
        uid = self.conf.uid
        if uid is not None:
            os.chown(workdir, uid, uid)
        os.ftruncate(self.out_fd, 0)
        os.lseek(self.out_fd, 0, os.SEEK_SET)
        token = self.secret + job.id.to_bytes(8, "little", signed=False)
        r, w = os.pipe()
        tree_cpu0 = fairness.children_cpu_ms()
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                die_with_parent()
                harness.child_main(
                    program=job.program,
                    value_expr=job.value_expr,
                    token=token,
                    result_fd=w,
                    out_fd=self.out_fd,
                    workdir=workdir,
                    env=env,
                    limits=self.limit_map,
                    confine=self._confine,
                )
            finally:
                os._exit(70)
        os.close(w)
        try:
            data, wall_killed, too_big = self._wait(pid, r, t0)
            run_delay = fairness.run_delay_ms(pid) if wall_killed else 0.0
            _, status, usage = os.wait4(pid, 0)
        finally:
            os.close(r)
        wall_ms = (time.perf_counter() - t0) * 1000.0
        cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000.0
        self._cleanup(pid)
        tail = self._tail()
        shutil.rmtree(workdir, ignore_errors=True)
        oom = layers.oom_kills(self.conf)
        oom_killed, self.oom_seen = oom > self.oom_seen, oom
        outcome = self._judge(job, token, data, status, wall_killed, too_big, wall_ms, cpu_ms, tail)
        if outcome.status == "timeout" and wall_killed:
            # Starved by the machine, not the candidate's timeout: infra_error.
            tree_cpu = fairness.children_cpu_ms() - tree_cpu0
            starved = fairness.starved(self.limits.wall_s, wall_ms, tree_cpu, run_delay)
            if starved is not None:
                outcome = msgspec.structs.replace(outcome, status="infra_error", reason=starved)
        if oom_killed and outcome.status != "passed":
            reason = "memory limit exceeded (all of the candidate's processes together)"
            if outcome.reason:
                reason += f"; {outcome.reason}"
            outcome = msgspec.structs.replace(outcome, status="error", reason=reason)
        return outcome

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

    def _tail(self) -> str:
        size = os.fstat(self.out_fd).st_size
        n = min(size, self.limits.output_tail)
        if n <= 0:
            return ""
        data = os.pread(self.out_fd, n, size - n)
        return data.decode("utf-8", "replace")

    def _judge(
        self,
        job: protocol.Job,
        token: bytes,
        data: bytes,
        status: int,
        wall_killed: bool,
        too_big: bool,
        wall_ms: float,
        cpu_ms: float,
        tail: str,
    ) -> protocol.Outcome:
        def out(kind: str, reason: str = "", value: bytes | None = None) -> protocol.Outcome:
            return protocol.Outcome(
                id=job.id,
                status=kind,
                reason=reason,
                value=value,
                wall_ms=wall_ms,
                cpu_ms=cpu_ms,
                output_tail=tail,
            )

        report = None if too_big else harness.parse_report(data, token)
        if report is not None:
            kind, payload = report
            if kind == harness.PASSED:
                return out("passed")
            if kind == harness.VALUE:
                return out("passed", value=payload)
            text = payload.decode("utf-8", "replace")
            if kind == harness.FAILED:
                return out("failed", text)
            return out("error", text)
        if too_big:
            return out("error", "result too large")
        if wall_killed:
            return out("timeout", f"wall-clock backstop of {self.limits.wall_s:g}s exceeded")
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            budget_ms = self.limits.cpu_s * 1000.0
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_ms >= budget_ms * 0.95):
                return out("timeout", f"CPU budget of {self.limits.cpu_s:g}s exceeded")
            if sig == signal.SIGXFSZ:
                return out("error", "file size limit exceeded (output or file too large)")
            return out("error", f"killed by signal {signal.Signals(sig).name}")
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        return out("failed", f"exited with status {code} before the check completed")


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


class FrameReader:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = os.read(self.fd, max(65536, n - len(self.buf)))
            if not chunk:
                raise EOFError
            self.buf += chunk
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def frame(self) -> bytes:
        (size,) = protocol.HEADER.unpack(self.read(protocol.HEADER.size))
        return self.read(size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def main() -> None:
    die_with_parent()
    # No SIGINT handling: the template has a session of its own, so a
    # terminal's Ctrl-C never reaches it (the engine decides when it stops).
    reader = FrameReader(0)
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
    decoder = msgspec.msgpack.Decoder(protocol.Job)
    # Everything the template holds now is permanent: frozen objects are never
    # scanned by a child's collector, so children copy fewer pages on write.
    gc.freeze()
    while True:
        try:
            job = decoder.decode(reader.frame())
        except EOFError:
            break
        outcome = template.run(job)
        _write_all(1, protocol.encode_frame(outcome))
    template._cleanup(-1)
    shutil.rmtree(template.work_root, ignore_errors=True)
    layers.teardown(template.conf)


if __name__ == "__main__":
    main()
