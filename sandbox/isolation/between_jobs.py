"""Between candidates: what the last one left is removed, and a template a
candidate marked is retired.

Runs in the template after every candidate (`clear`, `marked`, `oom_kills`)
and once when it ends (`teardown`). Its own module because it is paid per
candidate in the template, apart from the once-per-template setup
(`layers`) and the child's own half (`confine`).
"""

from __future__ import annotations

import contextlib
import os
import shutil

from .. import frames
from . import cgroups, namespaces, reaper
from .confinement import Confinement


def teardown(conf: Confinement) -> None:
    """Leave and remove our cgroups (best effort: the engine retries rmdir)."""
    cgroups.teardown(conf.slot)


def clear(conf: Confinement) -> int:
    """Remove what the last candidate left: every process but the template
    (SIGKILL), then its SysV IPC objects and, where candidates share the
    work root's owner, everything in the work root. Returns the processes
    killed.

    Cheap when nothing is left: one small read (the slot's cgroup.procs, or
    the template's list of children) and three IPC_INFO calls.
    """
    if conf.slot.procs is not None:
        killed = reaper.kill_listed(conf.slot.procs)
    elif conf.pid_init:
        killed = reaper.kill_namespace()
    else:
        killed = 0
    if conf.ipc_private:
        namespaces.remove_ipc_objects()
    if conf.shared_root is not None:
        _empty(conf.shared_root)
    return killed


def marked(conf: Confinement) -> bool:
    """Did the last candidate move the SysV id cursors or the network
    counters (`marks`)? Then its template must be retired: the next
    candidate could read them. Every probe is asked each time, so each
    keeps its reading current."""
    probes = [p for p in (conf.ipc_ids, conf.net_counters) if p is not None]
    return any([p.moved() for p in probes])


def _empty(root: str) -> None:
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def oom_kills(conf: Confinement) -> int:
    """The memory cgroup's OOM-kill counter (0 without a memory cgroup)."""
    if conf.slot.oom_events is None:
        return 0
    for line in frames.read_kept(conf.slot.oom_events).splitlines():
        if line.startswith(b"oom_kill "):
            return int(line.split()[1])
    return 0
