"""What a candidate sees of /dev and /proc (in the template's mount
namespace): the harmless device nodes only, and no host-wide counter."""

from __future__ import annotations

import os

from .namespaces import MS_BIND, MS_NOEXEC, MS_NOSUID, MS_RDONLY, _errno_text, _libc, hide

MS_REMOUNT = 32
MS_MOVE = 0x2000
DEV_NODES = ("null", "zero", "full", "random", "urandom")
"""What /dev holds for candidates (with the fd links and empty shm dirs):
no ptys, no disks, no other devices, no host-wide budget behind a node."""


def minimal_dev(staging: str) -> str | None:
    """Put a read-only tmpfs over /dev (in our mount namespace) holding only
    `DEV_NODES` (bound from the host's), ``fd``/``stdin``/``stdout``/
    ``stderr`` links and empty ``shm`` and ``mqueue`` directories. Built at
    ``staging`` (an empty directory), then moved onto /dev."""
    opts = b"size=64k,nr_inodes=64,mode=0755"
    if int(_libc.mount(b"tmpfs", staging.encode(), b"tmpfs", MS_NOSUID | MS_NOEXEC, opts)):
        return f"cannot mount a tmpfs for /dev: {_errno_text()}"
    try:
        for name in DEV_NODES:
            node = os.path.join(staging, name)
            open(node, "w").close()
            if int(_libc.mount(f"/dev/{name}".encode(), node.encode(), None, MS_BIND, None)):
                return f"cannot bind /dev/{name}: {_errno_text()}"
        for name in ("shm", "mqueue"):
            os.mkdir(os.path.join(staging, name), 0o555)
        os.symlink("/proc/self/fd", os.path.join(staging, "fd"))
        for fd, name in enumerate(("stdin", "stdout", "stderr")):
            os.symlink(f"/proc/self/fd/{fd}", os.path.join(staging, name))
    except OSError as exc:
        return f"cannot build /dev: {exc.strerror}"
    if int(_libc.mount(staging.encode(), b"/dev", None, MS_MOVE, None)):
        return f"cannot move the new /dev into place: {_errno_text()}"
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC
    if int(_libc.mount(None, b"/dev", None, flags, None)):
        return f"cannot make /dev read-only: {_errno_text()}"
    return None


PROC_DIRS = ("/proc/sys", "/proc/pressure")
PROC_FILES = tuple(
    f"/proc/{name}"
    for name in (
        "stat",
        "vmstat",
        "meminfo",
        "zoneinfo",
        "buddyinfo",
        "pagetypeinfo",
        "slabinfo",
        "vmallocinfo",
        "diskstats",
        "partitions",
        "swaps",
        "interrupts",
        "softirqs",
        "schedstat",
        "sched_debug",
        "loadavg",
        "locks",
        "keys",
        "key-users",
        "timer_list",
        "kallsyms",
        "cgroups",
    )
)
"""Host-wide counters a candidate can move and a later one read back (the
dentry and inode counts and file handles under /proc/sys/fs, processes
forked and context switches, page-cache and free memory, VM events,
pressure, every file lock on the host): hidden from candidates. What they
need of /proc (their own processes, /proc/self, cpuinfo) stays."""


def mask_proc() -> str | None:
    """Cover `PROC_DIRS` with empty read-only tmpfs and bind /dev/null over
    `PROC_FILES` (in our mount namespace; after the template's own writes
    under /proc/sys)."""
    problem = hide(PROC_DIRS)
    if problem is not None:
        return problem
    for path in PROC_FILES:
        if not os.path.exists(path):
            continue
        if int(_libc.mount(b"/dev/null", path.encode(), None, MS_BIND, None)):
            return f"cannot mask {path}: {_errno_text()}"
    return None
