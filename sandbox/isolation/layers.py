"""Isolation layers of a sandbox template, each a small detect-and-set-up step.

Layers come in two halves. The template half runs once, when a template
process starts (namespaces, the tmpfs, cgroups, the prepared Landlock
ruleset, the seccomp filter): it is free per candidate. The child half
(`confine_child`) runs in every forked child before the candidate's code and
is kept to a handful of syscalls, because it is paid per candidate. Between
candidates, `clear` removes whatever the last one left (processes, see
`reaper`; SysV IPC objects). The Landlock ruleset has a module of its own
(`landlock_rules`), as do cgroups, namespaces and the seccomp filter.

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
import ctypes
import os
import resource
import shutil
import struct
import sys
from dataclasses import dataclass, field

from .. import frames
from . import (
    cgroupfs,
    cgroups,
    landlock_rules,
    marks,
    namespaces,
    reaper,
    seccomp_filter,
    sharedwd,
    views,
)

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

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _write(path: str, text: str) -> None:
    # Plain descriptors: in a freshly forked child the text-file machinery
    # costs five times as much (its first use copies the pages it touches).
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


@dataclass
class Confinement:
    """What a template set up, and what each child must apply to itself."""

    layers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    host_pid: int = 0
    """The template's pid as the engine sees it (it is 1 in its namespace)."""
    uid: int | None = None
    drop_caps: bool = False
    nproc: int | None = None
    """RLIMIT_NPROC a child sets itself (user namespace: counted per namespace)."""
    ruleset_fd: int | None = None
    slot: cgroups.SlotCgroups = field(default_factory=cgroups.SlotCgroups)
    pid_init: bool = False
    """We are init of our own PID namespace: kill(-1) reaches every candidate."""
    ipc_private: bool = False
    ipc_ids: marks.IpcIds | None = None
    """Tells whether a candidate moved the SysV id cursors (see `marked`)."""
    net_counters: marks.NetCounters | None = None
    """Tells whether a candidate moved the network counters (see `marked`)."""
    pids: namespaces.PidShuffle | None = None
    """Randomises each candidate's pid (see `namespaces.PidShuffle`)."""
    shared_dir: str = ""
    """Where each served job's tmpfs is attached, shared with the verifier
    (see `sharedwd`); "" without a mount namespace of our own."""
    shared_root: str | None = None
    """A work root candidates can write to (no uid of their own): emptied
    after every candidate, so nothing left there reaches the next one."""

    @property
    def cgroups(self) -> list[str]:
        return self.slot.dirs

    def record(self, name: str, problem: str | None) -> bool:
        if problem is None:
            self.layers.append(name)
            return True
        self.missing.append(name)
        self.warnings.append(f"{name} unavailable: {problem}")
        return False


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


# ---- child half: per candidate, right after fork -----------------------------


def confine_child(conf: Confinement) -> None:
    """Apply the per-process half of the layers to this forked child.

    Runs before any candidate code; raises OSError if a layer that the
    template reported cannot be applied, so the job becomes an error rather
    than an unconfined run.
    """
    if conf.slot.oom_events is not None:
        # Under memory pressure the kernel must pick the candidate, never
        # the template sharing its cgroup.
        _write("/proc/self/oom_score_adj", "1000")
    if conf.uid is not None:
        os.setgroups([])
        os.setresgid(conf.uid, conf.uid, conf.uid)
        os.setresuid(conf.uid, conf.uid, conf.uid)
    elif conf.drop_caps:
        _drop_capabilities()
        if conf.nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (conf.nproc, conf.nproc))
    if conf.ruleset_fd is not None:
        landlock_rules.restrict_self(conf.ruleset_fd)


def _drop_capabilities() -> None:
    capset = seccomp_filter.number("capset")
    if capset is None:
        raise OSError(0, f"no syscall table for {os.uname().machine}: cannot drop capabilities")
    header = ctypes.create_string_buffer(struct.pack("=Ii", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(24)  # two zeroed cap_user_data_t
    if int(_libc.syscall(capset, header, data)) != 0:
        raise OSError(ctypes.get_errno(), "capset")
