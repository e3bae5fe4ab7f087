"""Namespaces and mounts a template sets up once for all of its candidates.

Each step returns ``None`` when it is in force, or a one-line reason why not
(see `layers.setup`, which orders and records them). Nothing here runs per
candidate except `remove_ipc_objects`, which costs three syscalls when the
candidate left no SysV object behind.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
SYS_MOUNT_SETATTR = 442  # the same number on every architecture
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_NOATIME = 0x10
MOUNT_ATTR__ATIME = 0x70

# SysV IPC: ctl commands, and the per-namespace sysctls that bound what a
# candidate can create (used where no memory cgroup charges it).
IPC_RMID = 0
IPC_INFO_CMDS = {"shm": 14, "msg": 12, "sem": 19}  # SHM_INFO, MSG_INFO, SEM_INFO
IPC_OBJECTS_MAX = 32

_libc = ctypes.CDLL(None, use_errno=True)


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


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


class _MountAttr(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clr", "propagation", "userns")]


def no_atime() -> str | None:
    """Every mount of our namespace ``noatime``: a read sets a file's access
    time (relatime: once a day per file) on the host's filesystem, where the
    next candidate, or a later run, could stat it, one bit per readable file.
    Mounts made later (the work tmpfs, bind mounts) copy the flag."""
    attr = _MountAttr(MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME, 0, 0)
    size = ctypes.sizeof(attr)
    args = (SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), size)
    if int(_libc.syscall(*args)) != 0:
        return f"cannot turn access times off: {_errno_text()}"
    return None


def pid_namespace() -> str | None:
    """Continue as process 1 of a new PID namespace.

    The calling process forks once: the child, init of the new namespace,
    returns and becomes the template; the original process stays behind as
    a wrapper that holds nothing, waits, and exits with the template's
    status, so the engine's view of its process is unchanged. As init, the
    template cannot be signalled from inside (a candidate can neither kill
    nor stop it), adopts every orphan, and takes every process of the
    namespace down with it. Candidates see only their namespace's pids, once
    `mount_proc` gives it its own /proc.
    """
    problem = unshare(CLONE_NEWPID)
    if problem is not None:
        return problem
    wrapper = os.pidfd_open(os.getpid())
    pid = os.fork()
    if pid == 0:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if select.select([wrapper], [], [], 0)[0]:
            os._exit(1)  # the wrapper died before the death signal was armed
        os.close(wrapper)
        return None
    _wait_as_wrapper(pid)
    raise AssertionError("unreachable")  # pragma: no cover


def _wait_as_wrapper(pid: int) -> None:
    """Hold no descriptor (the engine's pipes must see EOF when the template
    exits), wait for the template, and leave with its status."""
    os.closerange(0, 65536)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(70)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def mount_proc() -> str | None:
    """Mount a /proc of our own PID namespace, other users' processes hidden.

    Only the namespace's processes are listed; with ``hidepid=invisible`` a
    candidate running under its own uid does not even see the template.
    """
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    for opts in (b"hidepid=invisible", b"hidepid=2", None):
        if int(_libc.mount(b"proc", b"/proc", b"proc", flags, opts)) == 0:
            return None
    return f"cannot mount /proc for the PID namespace: {_errno_text()}"


def memfd_noexec() -> str | None:
    """No memory file in our PID namespace can be executed (vm.memfd_noexec=2,
    Linux 6.3+): Landlock confines execution to system directories, and a
    memfd (the candidate's own stdout included) is not in any directory."""
    try:
        _write("/proc/sys/vm/memfd_noexec", "2")
    except FileNotFoundError:
        return "the kernel has no vm.memfd_noexec (Linux 6.3+)"
    except OSError as exc:
        return f"cannot set vm.memfd_noexec: {exc.strerror}"
    return None


class PidShuffle:
    """Picks the pid of each candidate at random (ns_last_pid of our own PID
    namespace), so a candidate cannot leave a message in the pid the next
    one gets."""

    def __init__(self) -> None:
        self.fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC)
        with open("/proc/sys/kernel/pid_max") as fh:
            self.top = max(2000, min(int(fh.read()), 1 << 22) - 1000)

    def next(self) -> None:
        pick = 1000 + int.from_bytes(os.urandom(4), "little") % (self.top - 1000)
        try:
            os.pwrite(self.fd, str(pick).encode(), 0)
        except OSError:
            pass  # a pid in use: the kernel keeps counting from where it was


def pid_shuffle() -> tuple[PidShuffle | None, str | None]:
    try:
        return PidShuffle(), None
    except (OSError, ValueError) as exc:
        return None, f"cannot set the next pid: {exc}"


def ipc_namespace(memory_mb: int) -> str | None:
    """A SysV IPC namespace of our own, with small per-namespace limits.

    Objects a candidate creates are invisible to the host and to other
    templates, are removed after every candidate (`remove_ipc_objects`) and
    die with the namespace. The sysctls (best effort: an unprivileged user
    namespace may not own them) cap the number of objects and the shared
    memory total, which matters where no memory cgroup charges them.
    """
    problem = unshare(CLONE_NEWIPC)
    if problem is not None:
        return problem
    total = max(1, memory_mb) * 1024 * 1024
    for name, value in (
        ("kernel/shmmni", str(IPC_OBJECTS_MAX)),
        ("kernel/shmall", str(total // os.sysconf("SC_PAGE_SIZE"))),
        ("kernel/shmmax", str(total)),
        ("kernel/shm_rmid_forced", "1"),
        ("kernel/msgmni", str(IPC_OBJECTS_MAX)),
        ("kernel/sem", f"250 8000 32 {IPC_OBJECTS_MAX}"),
    ):
        try:
            _write(f"/proc/sys/{name}", value)
        except OSError:
            pass
    return None


class _IpcInfo(ctypes.Structure):
    # Large enough for struct shm_info, msginfo and seminfo alike.
    _fields_ = [("words", ctypes.c_int * 32)]


_INFO = _IpcInfo()
_INFO_REF = ctypes.byref(_INFO)


def _objects_in_use() -> int:
    """SysV objects in our namespace, from three *_INFO calls (no /proc read)."""
    total = 0
    if _libc.shmctl(0, IPC_INFO_CMDS["shm"], _INFO_REF) >= 0:
        total += _INFO.words[0]  # shm_info.used_ids
    if _libc.msgctl(0, IPC_INFO_CMDS["msg"], _INFO_REF) >= 0:
        total += _INFO.words[0]  # msginfo.msgpool: queues in use
    if _libc.semctl(0, 0, IPC_INFO_CMDS["sem"], _INFO_REF) >= 0:
        total += _INFO.words[7]  # seminfo.semusz: sets in use
    return total


def remove_ipc_objects() -> int:
    """Remove every SysV object in our IPC namespace; return how many.

    Only candidates create objects here, and every candidate process is
    gone when this runs, so everything listed is a leftover. A segment
    still attached by a dying process is destroyed at its last detach.
    """
    if _objects_in_use() == 0:
        return 0
    removed = 0
    for kind, ctl in (("shm", _libc.shmctl), ("msg", _libc.msgctl), ("sem", _libc.semctl)):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            ident = int(row.split()[1])
            args = (ident, 0, IPC_RMID) if kind == "sem" else (ident, IPC_RMID, None)
            if int(ctl(*args)) == 0:
                removed += 1
    return removed


def private_tmpfs(path: str, size_mb: int) -> str | None:
    """Mount a size-capped tmpfs at `path` (inside our mount namespace)."""
    opts = f"size={max(1, size_mb)}m,nr_inodes=65536,mode=0711".encode()
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if int(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, opts)) != 0:
        return f"cannot mount tmpfs: {_errno_text()}"
    return None


def hide(paths: tuple[str, ...]) -> str | None:
    """Cover each existing directory of `paths` with an empty read-only
    tmpfs (in our mount namespace): host POSIX shared memory and message
    queues in /dev/shm and /dev/mqueue are world-listable, often readable."""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY
    for path in paths:
        if not os.path.isdir(path):
            continue
        if int(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, b"size=4k,mode=0555")):
            return f"cannot cover {path}: {_errno_text()}"
    return None


def reachable(path: str) -> bool:
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
        if reachable(d):
            continue
        blocked = _blocked_ancestor(d)
        if blocked is None:
            return f"{d} is not readable by other users"
        if keep == blocked or keep.startswith(blocked + "/"):
            return f"the work root is inside {blocked}, which other users cannot enter"
        plans.setdefault(blocked, []).append(d)
    for blocked, targets in plans.items():
        problem = _cover_and_bind(blocked, targets)
        if problem is not None:
            return problem
    unreachable = [d for d in wanted if not reachable(d)]
    if unreachable:
        return f"{unreachable[0]} is not readable by other users"
    return None


def _cover_and_bind(blocked: str, targets: list[str]) -> str | None:
    fds = [os.open(d, os.O_PATH | os.O_CLOEXEC) for d in targets]
    try:
        opts = b"size=64k,mode=0711"
        if int(_libc.mount(b"tmpfs", blocked.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts)):
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
    return None
