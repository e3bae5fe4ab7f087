"""Isolation layers of a sandbox template, each a small detect-and-set-up step.

Layers come in two halves. The template half runs once, when a template
process starts (namespaces, the tmpfs, cgroups, the prepared Landlock
ruleset): it is free per candidate. The child half (`confine_child`) runs in
every forked child before the candidate's code and is kept to a handful of
syscalls, because it is paid per candidate.

Every template-level step returns ``None`` when the layer is in force, or a
one-line reason why it is not; `setup` collects them into the layers and
warnings the template reports in its Ready frame. Layer names are stable:
they are recorded in summary.json.

    unprivileged-uid   root engine: each template's children run as their own
                       uid (200000 + template pid), so RLIMIT_NPROC holds and
                       they cannot signal, ptrace or read /proc of the engine,
                       the template or another slot.
    user-namespace     unprivileged engine: the same namespaces from a user
                       namespace; capabilities are dropped in the child.
    network-namespace  no interfaces up, loopback down: every connect fails.
    landlock           writes only beneath the work root and to /dev/null;
                       reads and execution only beneath system and Python
                       directories; no TCP bind/connect; no signals or
                       abstract sockets out of the candidate's domain.
    cgroup-memory      one memory limit over all of a candidate's processes
                       (and the files it writes to the tmpfs).
    cgroup-pids        one process-count limit over all of them; also the
                       list the template kills after every candidate.
    disk-tmpfs         the work root is a private, size-capped tmpfs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import struct
import sys
from dataclasses import dataclass, field

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38

SYS_CAPSET = 126
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

# Landlock filesystem rights, by the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_WRITE_TREE = sum(1 << n for n in range(4, 13))  # remove_*, make_*
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_ALL = 0b11  # ABI 4: bind_tcp, connect_tcp
SCOPE_ALL = 0b11  # ABI 6: abstract unix sockets, signals

UID_BASE = 200_000
REQUIRED_ROOT = (
    "unprivileged-uid",
    "network-namespace",
    "landlock",
    "cgroup-memory",
    "cgroup-pids",
    "disk-tmpfs",
    "subreaper",
)
# Directories a candidate may read and execute from (besides the work root
# and the interpreter's own paths). Everything else, such as /work, /home,
# /root, /tmp and /var, where data files and journals live, is unreadable.
READ_ROOTS = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/dev", "/proc", "/sys")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_PATH_BENEATH = struct.Struct("=Qi")  # struct landlock_path_beneath_attr (packed)


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


@dataclass
class Confinement:
    """What a template set up, and what each child must apply to itself."""

    layers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    uid: int | None = None
    drop_caps: bool = False
    ruleset_fd: int | None = None
    cgroups: list[str] = field(default_factory=list)
    pids_procs: str | None = None
    oom_control: str | None = None

    def record(self, name: str, problem: str | None) -> bool:
        if problem is None:
            self.layers.append(name)
            return True
        self.missing.append(name)
        self.warnings.append(f"{name} unavailable: {problem}")
        return False


# ---- template half: once per template process --------------------------------


def unshare(flags: int) -> str | None:
    if int(_libc.unshare(flags)) != 0:
        return f"unshare failed: {_errno_text()}"
    return None


def user_namespace() -> str | None:
    """Enter a user namespace mapping only our own ids (unprivileged engine)."""
    uid, gid = os.geteuid(), os.getegid()
    problem = unshare(CLONE_NEWUSER)
    if problem is not None:
        return problem
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        return f"cannot map ids: {exc.strerror}"
    return None


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


def network_namespace() -> str | None:
    """A fresh network namespace: no interface is up, not even loopback."""
    return unshare(CLONE_NEWNET)


def mount_namespace() -> str | None:
    """A private mount namespace: what the template mounts, only it sees."""
    problem = unshare(CLONE_NEWNS)
    if problem is not None:
        return problem
    if int(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)) != 0:
        return f"cannot make mounts private: {_errno_text()}"
    return None


def private_tmpfs(path: str, size_mb: int) -> str | None:
    """Mount a size-capped tmpfs at `path` (inside our mount namespace)."""
    opts = f"size={max(1, size_mb)}m,nr_inodes=65536,mode=0711".encode()
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if int(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, opts)) != 0:
        return f"cannot mount tmpfs: {_errno_text()}"
    return None


def _reachable(path: str) -> bool:
    """Can a uid other than the owner enter every component and list `path`?"""
    try:
        if os.stat(path).st_mode & 0o005 != 0o005:
            return False
        parent = os.path.dirname(path)
        while parent != "/":
            if os.stat(parent).st_mode & 0o001 == 0:
                return False
            parent = os.path.dirname(parent)
    except OSError:
        return False
    return True


def _blocked_ancestor(path: str) -> str | None:
    """The topmost directory above `path` that other uids cannot enter."""
    parts = [p for p in path.split("/") if p]
    for n in range(1, len(parts)):
        prefix = "/" + "/".join(parts[:n])
        if os.stat(prefix).st_mode & 0o001 == 0:
            return prefix
    return None


def expose(dirs: list[str], keep: str) -> str | None:
    """Make `dirs` reachable by the candidates' uid, in our mount namespace.

    An interpreter installed under a private directory (pyenv in /root, say)
    is unreachable for another uid. Rather than loosen permissions on the
    host, the private ancestor is covered by an empty tmpfs and only the
    needed directories are bind-mounted back into it; the rest of it (keys,
    shell history) is then hidden from candidates as well.
    """
    wanted = sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)})
    wanted = [d for d in wanted if not any(d.startswith(o + "/") for o in wanted if o != d)]
    plans: dict[str, list[str]] = {}
    for d in wanted:
        if _reachable(d):
            continue
        blocked = _blocked_ancestor(d)
        if blocked is None:
            return f"{d} is not readable by other users"
        if keep == blocked or keep.startswith(blocked + "/"):
            return f"the work root is inside {blocked}, which other users cannot enter"
        plans.setdefault(blocked, []).append(d)
    for blocked, targets in plans.items():
        fds = [os.open(d, os.O_PATH | os.O_CLOEXEC) for d in targets]
        try:
            if (
                int(
                    _libc.mount(
                        b"tmpfs",
                        blocked.encode(),
                        b"tmpfs",
                        MS_NOSUID | MS_NODEV,
                        b"size=64k,mode=0711",
                    )
                )
                != 0
            ):
                return f"cannot cover {blocked}: {_errno_text()}"
            for d, fd in zip(targets, fds, strict=True):
                os.makedirs(d, exist_ok=True)
                parent = d
                while parent != blocked:
                    os.chmod(parent, 0o711)
                    parent = os.path.dirname(parent)
                source = f"/proc/self/fd/{fd}".encode()
                if int(_libc.mount(source, d.encode(), None, MS_BIND | MS_REC, None)) != 0:
                    return f"cannot bind {d}: {_errno_text()}"
        finally:
            for fd in fds:
                os.close(fd)
    unreachable = [d for d in wanted if not _reachable(d)]
    if unreachable:
        return f"{unreachable[0]} is not readable by other users"
    return None


def _own_cgroup(controller: str) -> str | None:
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, names, path = line.rstrip("\n").split(":", 2)
            if controller in names.split(","):
                return path
    return None


def cgroup_v1(controller: str, settings: dict[str, str], out: Confinement) -> str | None:
    """Create a child of our own v1 cgroup, set its limits and move in.

    The template itself joins the cgroup, so every forked child is in it from
    its first instruction at no cost per candidate. Nested under the engine's
    own cgroup, so whatever limits the engine runs under still apply.
    """
    base = f"/sys/fs/cgroup/{controller}"
    try:
        parent = _own_cgroup(controller)
        if parent is None or not os.path.isdir(base):
            return f"no v1 {controller} controller mounted"
        _sweep_stale(base + parent)
        path = os.path.join(base + parent, f"aioeval-{os.getpid()}")
        os.mkdir(path, 0o755)
        out.cgroups.append(path)
        for name, value in settings.items():
            if os.path.exists(os.path.join(path, name)):
                _write(os.path.join(path, name), value)
        _write(os.path.join(path, "cgroup.procs"), str(os.getpid()))
    except OSError as exc:
        return f"cannot set up a {controller} cgroup: {exc.strerror}"
    return None


def _sweep_stale(parent: str) -> None:
    """Remove cgroups left by templates that died without tearing down.

    A template killed with its engine (SIGKILL, parent-death signal) cannot
    remove its own cgroups; the next template in the same place does. Only
    empty ones named after a dead pid go: rmdir refuses anything non-empty.
    """
    try:
        names = [n for n in os.listdir(parent) if n.startswith("aioeval-")]
    except OSError:
        return
    for name in names:
        pid = name.removeprefix("aioeval-")
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(parent, name))
        except OSError:
            pass


def _resident_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def landlock_abi() -> int:
    abi = int(_libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION))
    return max(abi, 0)


def landlock_ruleset(read_roots: list[str], write_roots: list[str], out: Confinement) -> str | None:
    """Prepare (not apply) the ruleset every child restricts itself with."""
    abi = landlock_abi()
    if abi < 1:
        return "kernel has no Landlock"
    fs_write = FS_WRITE_FILE | FS_WRITE_TREE
    if abi >= 2:
        fs_write |= FS_REFER
    if abi >= 3:
        fs_write |= FS_TRUNCATE
    fs_read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    fs_all = fs_read | fs_write | (FS_IOCTL_DEV if abi >= 5 else 0)
    attr = struct.pack("=QQQ", fs_all, NET_ALL if abi >= 4 else 0, SCOPE_ALL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = int(_libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), 0))
    if fd < 0:
        return f"landlock_create_ruleset failed: {_errno_text()}"
    rules = [(p, fs_read) for p in read_roots] + [(p, fs_all) for p in write_roots]
    rules.append(("/dev/null", FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)))
    for path, access in rules:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # not on this machine: nothing to allow
        try:
            if not os.path.isdir(path):
                access &= FS_EXECUTE | FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
            rule = ctypes.create_string_buffer(_PATH_BENEATH.pack(access, target), 12)
            if int(_libc.syscall(SYS_LANDLOCK_ADD_RULE, fd, LANDLOCK_RULE_PATH_BENEATH, rule, 0)):
                os.close(fd)
                return f"landlock_add_rule({path}) failed: {_errno_text()}"
        finally:
            os.close(target)
    out.ruleset_fd = fd
    return None


def setup(
    *,
    mode: str,
    work_root: str,
    memory_mb: int,
    disk_mb: int,
    nproc: int,
    site_dirs: list[str],
) -> Confinement:
    """Set up every layer the mode asks for; never raises for a missing one.

    Order matters: the user namespace first (it grants what the others need
    when unprivileged); mounts before the Landlock ruleset opens its paths;
    cgroups last, so the memory limit can add the template's own resident
    memory (the template shares its children's cgroup).
    """
    out = Confinement()
    if mode == "minimal":
        return out
    if can_switch_uid() is None:
        out.uid = UID_BASE + os.getpid()
    elif os.geteuid() == 0:
        out.record("unprivileged-uid", can_switch_uid())
    elif out.record("user-namespace", user_namespace()):
        out.drop_caps = True
    out.record("network-namespace", network_namespace())
    interpreter = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(__file__)]
    code_dirs = [d for d in (*interpreter, *site_dirs) if os.path.isdir(d)]
    mounts = mount_namespace()
    out.record("disk-tmpfs", mounts or private_tmpfs(work_root, disk_mb))
    if out.uid is not None:
        problem = expose(code_dirs, work_root) if mounts is None else None
        if problem is None and mounts is not None and not all(map(_reachable, code_dirs)):
            problem = "the interpreter is in a directory other users cannot enter"
        if not out.record("unprivileged-uid", problem):
            out.uid = None
    reads = [*READ_ROOTS, *code_dirs]
    out.record("landlock", landlock_ruleset(sorted(set(reads)), [work_root], out))
    # Headroom for the template itself and the kernel's share of the children.
    limit = (memory_mb + disk_mb + 64) * 1024 * 1024 + _resident_bytes()
    mem = {"memory.limit_in_bytes": str(limit), "memory.memsw.limit_in_bytes": str(limit)}
    if out.record("cgroup-memory", cgroup_v1("memory", mem, out)):
        out.oom_control = os.path.join(out.cgroups[-1], "memory.oom_control")
    if out.record("cgroup-pids", cgroup_v1("pids", {"pids.max": str(nproc + 1)}, out)):
        out.pids_procs = os.path.join(out.cgroups[-1], "cgroup.procs")
    return out


def teardown(conf: Confinement) -> None:
    """Leave and remove our cgroups (best effort: the engine retries rmdir)."""
    for path in reversed(conf.cgroups):
        with contextlib.suppress(OSError):
            _write(os.path.join(os.path.dirname(path), "cgroup.procs"), str(os.getpid()))
            os.rmdir(path)


def kill_cgroup(conf: Confinement) -> int:
    """SIGKILL every process in the slot's pids cgroup except the template.

    Cheap when empty (one small read). A process forking while we kill is
    caught on the next pass; pids.max bounds how many there can be.
    """
    if conf.pids_procs is None:
        return 0
    me = os.getpid()
    killed = 0
    for _ in range(10_000):
        with open(conf.pids_procs, "rb") as fh:
            pids = [int(p) for p in fh.read().split() if int(p) != me]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        _reap_some()
    return killed


def _reap_some() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def oom_kills(conf: Confinement) -> int:
    """The cgroup's OOM-kill counter (0 without a memory cgroup)."""
    if conf.oom_control is None:
        return 0
    with open(conf.oom_control, "rb") as fh:
        for line in fh:
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
    if conf.cgroups:
        # Under memory pressure the kernel must pick the candidate, never
        # the template sharing its cgroup.
        _write("/proc/self/oom_score_adj", "1000")
    if conf.uid is not None:
        os.setgroups([])
        os.setresgid(conf.uid, conf.uid, conf.uid)
        os.setresuid(conf.uid, conf.uid, conf.uid)
    elif conf.drop_caps:
        _drop_capabilities()
    if conf.ruleset_fd is not None:
        if int(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if int(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, conf.ruleset_fd, 0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(conf.ruleset_fd)


def _drop_capabilities() -> None:
    header = ctypes.create_string_buffer(struct.pack("=Ii", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(24)  # two zeroed cap_user_data_t
    if int(_libc.syscall(SYS_CAPSET, header, data)) != 0:
        raise OSError(ctypes.get_errno(), "capset")
