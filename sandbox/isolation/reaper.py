"""Killing and reaping what a candidate left behind, inside its template.

Three views of "everything the candidate started", from the most to the
least complete: the slot's cgroup.procs (`kill_listed`), the template's PID
namespace (`kill_namespace`, as its init), and the template's children as a
child subreaper (`kill_children`: orphans, a setsid daemon included, are
re-parented to it). The template uses whichever it has, then the last one
always. These run in the template process, between two candidates, where
blocking is the point: nothing else may run until the slot is clean.
"""

from __future__ import annotations

import os
import signal
import time

from .. import frames

ROUNDS = 10_000
"""Upper bound on kill passes; a process forking while we kill is caught on
the next pass, and pids.max (or RLIMIT_NPROC) bounds how many there can be."""


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (the candidate's session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_listed(procs: str) -> int:
    """SIGKILL every process listed in a cgroup.procs except this one;
    return how many were signalled."""
    me = os.getpid()
    killed = 0
    for _ in range(ROUNDS):
        pids = [int(p) for p in frames.read_kept(procs).split() if int(p) not in (0, me)]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        reap_some()
    return killed


def kill_namespace() -> int:
    """As init of the namespace: kill(-1) reaches every process in it but us.

    Every live process descends from the template, and an orphan is
    re-parented to it, so "no children" means nothing is left.
    """
    if os.getpid() != 1:
        return 0  # never kill(-1) outside a namespace of our own
    killed = 0
    for n in range(ROUNDS):
        if not _has_children():
            break
        try:
            os.kill(-1, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
        reap_some()
        time.sleep(0 if n < 100 else 0.001)
    return killed


def kill_children() -> None:
    """SIGKILL and reap every child of this (subreaper) process until none is left."""
    for _ in range(1000):
        kids = children()
        if not kids:
            break
        for kid in kids:
            try:
                os.kill(kid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if reap_some():
            time.sleep(0.0005)  # killed, not yet gone: give them a moment


def children() -> list[int]:
    """This process's children, from every one of its threads."""
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


def _has_children() -> bool:
    with open("/proc/thread-self/children", "rb") as fh:
        return bool(fh.read().strip())


def reap_some() -> bool:
    """Reap every child that has already exited, without waiting; True if
    some child is still running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
