"""Isolation layers of a sandbox template, each a small detect-and-set-up step.

Layers come in two halves. The template half (`setup`, here) runs once,
when a template process starts (namespaces, the tmpfs, cgroups, the prepared
Landlock ruleset, the seccomp filter): it is free per candidate. The child
half (`confine.confine_child`) runs in every forked child before the
candidate's code and is kept to a handful of syscalls, because it is paid
per candidate. Between candidates, `between_jobs.clear` removes whatever the
last one left (processes, see `reaper`; SysV IPC objects). All three share
the `Confinement` record (`confinement`), and this module offers them under
one name, the one templates and the verifier use. The Landlock ruleset has a
module of its own (`landlock_rules`), as do cgroups, namespaces and the
seccomp filter.

Every template-level step returns ``None`` when the layer is in force, or a
one-line reason why it is not; `setup` collects them into the layers, the
missing ones and the warnings the template reports in its Ready frame.
Layer names are stable: they are recorded in summary.json.

    unprivileged-uid   root engine: each template's children run as their own
                       uid (200000 + template pid), so RLIMIT_NPROC holds and
                       they cannot signal, ptrace or read /proc of the engine,
                       the template or another slot.
    user-namespace     unprivileged engine: the same namespaces from a user
                       namespace; capabilities are dropped in the child, and
                       RLIMIT_NPROC counts the namespace's processes only.
    pid-namespace      the template is init of its own PID namespace with its
                       own /proc (hidepid): candidates see no other process,
                       cannot signal the template, and nothing outlives it.
    network-namespace  no interfaces up, loopback down: every connect fails.
    ipc-namespace      SysV objects are private to the template, capped, and
                       removed after every candidate; a candidate that took
                       ids retires its template (the id cursors would carry
                       a count to the next one).
    landlock           writes only beneath the work root and to /dev/null;
                       reads and execution only beneath system and Python
                       directories; no TCP bind/connect; no signals or
                       abstract sockets out of the candidate's domain.
    seccomp            no Unix, netlink, packet or vsock sockets, no new
                       namespaces, no io_uring, keyrings, bpf, ptrace, or
                       scheduling changes (see `seccomp_filter`).
    cgroup-memory      one memory limit over all of a candidate's processes
                       (and the files it writes to the tmpfs).
    cgroup-pids        one process-count limit over all of them; also the
                       list the template kills after every candidate.
    cgroup-cpu         one bounded CPU allotment (equal weight, at most one
                       CPU) per slot: a fork-and-spin candidate slows only
                       itself.
    disk-tmpfs         the work root is a private, size-capped tmpfs.
    no-atime           reads change no access time (every mount noatime in
                       the template's mount namespace).
    minimal-dev        /dev is a read-only tmpfs with null, zero, full, random,
                       urandom and the fd links only: no ptys (a host-wide
                       budget), no disks, no other device.
    proc-masked        host-wide counters in /proc (under /proc/sys, stat,
                       meminfo, vmstat, locks, pressure, ...) read as empty:
                       a candidate can move them, a later one could read them.
    private-shm        /dev/shm and /dev/mqueue are empty and read-only:
                       other programs' POSIX shared memory is out of reach.

The cgroup layers use v1 or v2, whichever carries the controller (see
`cgroups`).
"""

from __future__ import annotations

import contextlib
import os
import sys

from . import (
    cgroupfs,
    cgroups,
    landlock_rules,
    marks,
    namespaces,
    seccomp_filter,
    sharedwd,
    views,
)
from .between_jobs import clear as clear
from .between_jobs import marked as marked
from .between_jobs import oom_kills as oom_kills
from .between_jobs import teardown as teardown
from .confine import confine_child as confine_child
from .confinement import Confinement as Confinement

UID_BASE = 200_000
REQUIRED_ROOT = (
    "unprivileged-uid",
    "pid-namespace",
    "network-namespace",
    "ipc-namespace",
    "landlock",
    "seccomp",
    "cgroup-memory",
    "cgroup-pids",
    "cgroup-cpu",
    "disk-tmpfs",
    "minimal-dev",
    "proc-masked",
    "private-shm",
    "no-atime",
    "subreaper",
)
# Directories a candidate may read and execute from (besides the work root
# and the interpreter's own paths). Everything else, such as /work, /home,
# /root, /tmp and /var, where data files and journals live, is unreadable.
# Of /sys only the CPU topology (the C library counts CPUs there): the rest,
# /sys/fs/cgroup above all, holds counters that the slots' candidates could
# use to signal each other or the candidates after them.
READ_ROOTS = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc",
    "/dev",
    "/proc",
    "/sys/devices/system/cpu",
)
# Readable directories whose content belongs to other programs, emptied in
# the template's mount namespace.
HIDDEN = ("/dev/shm", "/dev/mqueue")


# ---- template half: once per template process --------------------------------


def can_switch_uid() -> str | None:
    """Root with CAP_SETUID and CAP_SETGID can hand each child its own uid."""
    if os.geteuid() != 0:
        return "the engine is not root"
    try:
        with open("/proc/self/status") as fh:
            caps = next(int(line.split()[1], 16) for line in fh if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return "cannot read capabilities"
    if caps & 0b11000000 != 0b11000000:
        return "CAP_SETUID/CAP_SETGID missing"
    return None


def _resident_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def setup(
    *,
    mode: str,
    work_root: str,
    memory_mb: int,
    disk_mb: int,
    nproc: int,
    site_dirs: list[str],
    shared_dir: str = "",
) -> Confinement:
    """Set up every layer the mode asks for; never raises for a missing one.

    Order matters. cgroups are prepared first, while cgroup files still show
    pids as the engine sees them, with the template's own resident memory
    added to the limit (it shares its children's cgroup). The user namespace
    (unprivileged engine) grants what the rest needs. Entering the PID
    namespace forks: from there on this process is its init. Mounts come
    before the Landlock ruleset opens its paths, and the seccomp filter,
    which refuses new namespaces, comes last.
    """
    out = Confinement(host_pid=os.getpid())
    if mode == "minimal":
        return out
    limit = (memory_mb + disk_mb + 64) * 1024 * 1024 + _resident_bytes()
    slot = cgroups.prepare(
        name=f"{cgroups.PREFIX}{os.getpid()}",
        engine_pid=os.getppid(),
        memory_bytes=limit,
        nproc=nproc + 1,
    )
    root_uid = _identity(out, nproc)
    in_pid_ns = namespaces.pid_namespace()
    out.pid_init = in_pid_ns is None
    out.host_pid = _host_pid()
    if root_uid:
        out.uid = UID_BASE + out.host_pid
    cgroups.join(slot)
    out.slot = slot
    if out.record("network-namespace", namespaces.network_namespace()):
        out.net_counters = marks.NetCounters()
    out.ipc_private = out.record("ipc-namespace", namespaces.ipc_namespace(memory_mb))
    if out.ipc_private:
        out.ipc_ids = marks.IpcIds()
    interpreter = [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        os.path.dirname(os.path.dirname(__file__)),
    ]
    code_dirs = [d for d in (*interpreter, *site_dirs) if os.path.isdir(d)]
    mounts = _mounts(out, work_root, disk_mb, code_dirs)
    if out.record("pid-namespace", in_pid_ns or mounts or namespaces.mount_proc()):
        out.record("memfd-noexec", namespaces.memfd_noexec())
        out.pids, problem = namespaces.pid_shuffle()
        out.record("pid-shuffle", problem)
    out.record("proc-masked", mounts or views.mask_proc())
    reads = [*READ_ROOTS, *code_dirs]
    if shared_dir and mounts is None:
        out.shared_dir = sharedwd.prepare(shared_dir) or ""  # read-only between jobs
    writes = [work_root, shared_dir] if out.shared_dir else [work_root]
    out.ruleset_fd, problem = landlock_rules.prepare(sorted(set(reads)), writes)
    out.record("landlock", problem)
    for ctrl in cgroupfs.CONTROLLERS:
        out.record(cgroups.LAYERS[ctrl], slot.problems.get(ctrl))
    out.record("seccomp", seccomp_filter.install())
    # Last, so every mount made above is covered.
    out.record("no-atime", mounts or namespaces.no_atime())
    if out.uid is None:
        out.shared_root = work_root
    return out


def _identity(out: Confinement, nproc: int) -> bool:
    """Root: True (children get a uid of their own once our pid is known).
    Unprivileged: enter a user namespace."""
    if can_switch_uid() is None:
        return True
    if os.geteuid() == 0:
        out.record("unprivileged-uid", can_switch_uid())
    elif out.record("user-namespace", namespaces.user_namespace()):
        out.drop_caps = True
        out.nproc = nproc + 2  # the template and its wrapper count too
    return False


def _mounts(out: Confinement, work_root: str, disk_mb: int, code_dirs: list[str]) -> str | None:
    """A private mount namespace with the tmpfs work root, and the code
    directories reachable for the candidates' uid. Returns why there is no
    mount namespace, if there is none."""
    mounts = namespaces.mount_namespace()
    out.record("disk-tmpfs", mounts or namespaces.private_tmpfs(work_root, disk_mb))
    out.record("minimal-dev", mounts or _minimal_dev(work_root))
    out.record("private-shm", mounts or namespaces.hide(HIDDEN))
    if out.uid is not None:
        problem = namespaces.expose(code_dirs, work_root) if mounts is None else None
        if problem is None and mounts is not None and not all(map(namespaces.reachable, code_dirs)):
            problem = "the interpreter is in a directory other users cannot enter"
        if not out.record("unprivileged-uid", problem):
            out.uid = None
    return mounts


def _minimal_dev(work_root: str) -> str | None:
    staging = os.path.join(work_root, ".dev")
    os.makedirs(staging, exist_ok=True)
    try:
        return views.minimal_dev(staging)
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(staging)


def _host_pid() -> int:
    """Our pid in the host's namespace: /proc is still the host's here."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()
