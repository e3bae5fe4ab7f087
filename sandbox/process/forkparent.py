"""What the two processes that fork one confined child per job share: a
template (one candidate per child) and a verifier (one check per child).

`fork` forks without Python's own after-fork work; `process_layers` lists their layers in the order reported (after
`layers.setup`), covering the answer keys; `protect_from_oom` keeps the
kernel's OOM killer on the children; `wait` collects a child's report from
its private pipe into a buffer of the parent's own (never into a Python
object: the buffer is wiped after the job) until the child exits, the
deadline passes, the report outgrows its cap, or, for a template, the
verifier says it has decided against the job. An engine that went away
(stdin hung up) ends the whole process at once.
"""

from __future__ import annotations

import ctypes
import os
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import frames
from ..isolation import reaper, workdir
from ..isolation.layers import Confinement

_active_count = threading.active_count
"""Bound at import: a check's test finds it named (`strict.measures`)."""

PR_SET_CHILD_SUBREAPER = 36
BASE = ("rlimits", "process-group", "fresh-env", "workdir")
"""Layers every such process has, in any mode."""

_libc = ctypes.CDLL(None, use_errno=True)
_held = ctypes.PyDLL(None, use_errno=True)
"""The C library, called with the GIL held."""


def fork() -> int:
    """`os.fork` for a process of one thread, without Python's work in the
    child: the C library's fork (its own ``pthread_atfork`` handlers run),
    called with the GIL held. That work (the ``os.register_at_fork`` hooks:
    ``threading`` rebuilding its thread table and locks, ``logging`` its
    handlers' locks, ``random`` reseeding itself from the system; the
    interpreter's locks) undoes what other threads left mid-way at the fork.
    With one thread nothing is held or half-done, so the child's state is
    the parent's as it stands, and the child skips some fifty page copies
    of that work. Each child sets ``random`` to its own start state anyway.
    With more threads than one: `os.fork`."""
    if _active_count() != 1:
        return os.fork()
    pid = int(_held.fork())
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return pid


def process_layers(conf: Confinement, hide: list[str], isolation: str) -> list[str]:
    """The layers in the order reported: `BASE`, the child subreaper, what
    `layers.setup` set up, and the answer keys `hide` covered where there
    are mounts of our own. Each one missing is recorded in ``conf``."""
    names = list(BASE)
    if int(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0:
        names.append("subreaper")
    else:
        conf.missing.append("subreaper")
        conf.warnings.append("child subreaper unavailable: setsid daemons may survive")
    names.extend(conf.layers)
    if hide and isolation != "minimal":
        mounts = "disk-tmpfs" in conf.layers
        problems = workdir.hide(hide) if mounts else ["no mount namespace"]
        if problems:
            conf.missing.append("answer-key-hidden")
            conf.warnings.append(f"answer-key-hidden unavailable: {'; '.join(problems)}")
        else:
            names.append("answer-key-hidden")
    return names


def protect_from_oom() -> None:
    """Under memory pressure in the cgroups we share with our children, the
    kernel must never pick us (each child sets +1000 for itself)."""
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("-1000")
    except OSError:
        pass  # not privileged: the children's +1000 still points the kernel at them


@dataclass
class Waited:
    """How the wait for a child ended."""

    size: int = 0
    """Bytes of report collected."""
    wall_killed: bool = False
    """The deadline passed: its group was killed."""
    too_big: bool = False
    """Its report passed the cap: its group was killed."""
    stopped: bool = False
    """Told to stop while it still ran: its group was killed."""


def wait(
    pid: int,
    r: int,
    view: memoryview,
    deadline: float,
    *,
    gone: Callable[[], None],
    stop_fd: int = -1,
    told_to_stop: Callable[[], bool] | None = None,
) -> Waited:
    """Collect the child's report from pipe `r` into `view` until the child
    `pid` exits (or is killed: see `Waited`). ``gone`` is called (and must
    not return) when the engine hangs up; `told_to_stop` is asked whenever
    `stop_fd` is readable."""
    pidfd = os.pidfd_open(pid)
    os.set_blocking(r, False)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(r, select.POLLIN)
    poller.register(0, 0)  # hang-up only: the engine went away
    if stop_fd >= 0:
        poller.register(stop_fd, select.POLLIN)
    cap = len(view)
    out = Waited()
    r_open = True
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                reaper.kill_group(pid)
                out.wall_killed = True
                break
            exited = False
            for fd, ev in poller.poll(left * 1000.0):
                if fd == 0 and ev & (select.POLLHUP | select.POLLERR):
                    reaper.kill_group(pid)
                    gone()
                if fd == r and r_open:
                    n = frames.read_into(r, view[out.size :])
                    if n:
                        out.size += n
                        if out.size >= cap:
                            out.too_big = True
                            reaper.kill_group(pid)
                    elif n is not None:
                        poller.unregister(r)
                        r_open = False
                if fd == pidfd:
                    exited = True
                if fd == stop_fd and told_to_stop is not None and told_to_stop():
                    out.stopped = True
            if out.stopped and exited:
                out.stopped = False  # it ended on its own: judged by how
            elif out.stopped:
                reaper.kill_group(pid)
            if exited or out.too_big or out.stopped:
                break
        # Drain what the child wrote just before exiting.
        while r_open and out.size < cap:
            n = frames.read_into(r, view[out.size :])
            if not n:
                break
            out.size += n
    finally:
        os.close(pidfd)
    return out
