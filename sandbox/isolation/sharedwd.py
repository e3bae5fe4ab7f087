"""The directory a check and its candidate share: one tmpfs, two mounts.

Under strict scoring the test runs in the verifier and the candidate in the
template, two processes with mount namespaces of their own. The official
single program sees one directory, and real tests lean on it: the test
writes a temporary file and passes its path to the candidate, or reads a
file the candidate wrote. So for each served job the template makes one
detached tmpfs (the new mount API: ``fsopen``/``fsmount``), attaches a
clone of it at the slot's shared path in its own namespace, and passes the
detached original to the verifier with the job's channel; the verifier
attaches it at the same path in its namespace. Both sides start in that
directory (cwd, HOME and TMPDIR), so a path the test passes as an argument
names the same file on both sides. Each side lazily unmounts it after the
job, and the superblock, with everything in it, goes with the last mount.

The directory is sticky and world-writable, and reachable only by the two
uids of the slot (the mount namespaces and Landlock keep everyone else
out): the candidate may add files, but cannot remove, rename or replace the
test's, and the check's umask (022) leaves them read-only to it. Its size
is the candidate's disk quota, and its pages are charged to the cgroup of
whoever wrote them. `guard` protects the test's own writes; the threat
analysis is in docs/sandbox.md.
"""

from __future__ import annotations

import ctypes
import os
import stat
from typing import Any

_libc = ctypes.CDLL(None, use_errno=True)

# x86_64 and aarch64 share the numbers of the syscalls added since 5.x.
SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_FSOPEN = 430
SYS_FSCONFIG = 431
SYS_FSMOUNT = 432
FSOPEN_CLOEXEC = 1
FSCONFIG_SET_STRING = 1
FSCONFIG_CMD_CREATE = 6
FSMOUNT_CLOEXEC = 1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MOUNT_ATTR_NOEXEC = 0x8
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = os.O_CLOEXEC
AT_EMPTY_PATH = 0x1000
AT_FDCWD = -100
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MNT_DETACH = 2
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
JOB = "job"
"""The directory under the slot's shared root where each job's tmpfs goes."""
MODE = "1777"
"""Sticky and writable by both uids: each may add files and remove only its own."""


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def make(size_mb: int) -> int:
    """A new, detached, empty tmpfs of ``size_mb`` (its mount's fd)."""
    fs = _check(_libc.syscall(SYS_FSOPEN, b"tmpfs", FSOPEN_CLOEXEC), "fsopen")
    try:
        for key, value in (("size", f"{max(1, size_mb)}m"), ("nr_inodes", "65536"), ("mode", MODE)):
            ret = _libc.syscall(
                SYS_FSCONFIG, fs, FSCONFIG_SET_STRING, key.encode(), value.encode(), 0
            )
            _check(ret, f"fsconfig {key}")
        _check(_libc.syscall(SYS_FSCONFIG, fs, FSCONFIG_CMD_CREATE, None, None, 0), "fsconfig")
        attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
        return _check(_libc.syscall(SYS_FSMOUNT, fs, FSMOUNT_CLOEXEC, attrs), "fsmount")
    finally:
        os.close(fs)


def clone(mount_fd: int) -> int:
    """A second detached mount of the same tmpfs (kernels since 6.15 clone
    detached mounts)."""
    flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH
    return _check(_libc.syscall(SYS_OPEN_TREE, mount_fd, b"", flags), "open_tree")


def attach(mount_fd: int, path: str) -> None:
    """Attach a detached mount at ``path`` in our mount namespace."""
    ret = _libc.syscall(
        SYS_MOVE_MOUNT, mount_fd, b"", AT_FDCWD, path.encode(), MOVE_MOUNT_F_EMPTY_PATH
    )
    _check(ret, f"move_mount to {path}")


def detach(path: str) -> None:
    """Drop our mount at ``path`` (lazily: a dead process's fd cannot stop it)."""
    _check(_libc.umount2(path.encode(), MNT_DETACH), f"umount {path}")


def prepare(root: str) -> str | None:
    """Cover ``root`` (in our mount namespace) with a small read-only tmpfs
    holding one empty directory, ``root/job``, where each job's tmpfs is
    attached; returns that path, or None if it cannot be made. Landlock's
    write rule goes on ``root``: a rule on a mount point itself would not
    cover what is mounted on it (Landlock skips hidden mount points)."""
    path = os.path.join(root, JOB)
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc.mount(b"tmpfs", root.encode(), b"tmpfs", flags, b"size=4k,mode=0755") != 0:
        return None
    try:
        os.mkdir(path, 0o755)
    except OSError:
        return None
    remount = MS_REMOUNT | MS_BIND | MS_RDONLY | flags
    if _libc.mount(None, root.encode(), None, remount, None) != 0:
        return None
    return path


def pair(size_mb: int, path: str) -> int:
    """Make the job's tmpfs, attach it at ``path`` here, and return the
    detached mount to pass to the other side."""
    original = make(size_mb)
    try:
        ours = clone(original)
        try:
            attach(ours, path)
        finally:
            os.close(ours)
    except BaseException:
        os.close(original)
        raise
    return original


class _ReadableOs:
    """``os`` as ``tempfile`` sees it in a shared directory: files it makes
    are readable (0644) and directories enterable (0755) by the other side,
    as they are for the one process of the single program (in the check,
    `open_dirs` then opens its directories to the candidate's files).
    Write access stays the owner's. Everything else is the real ``os``."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def open(self, path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        return int(self._real.open(path, flags, 0o644 if mode == 0o600 else mode, **kw))

    def mkdir(self, path: Any, mode: int = 0o777, **kw: Any) -> None:
        self._real.mkdir(path, 0o755 if mode == 0o700 else mode, **kw)


def readable_tempfiles() -> None:
    """Make ``tempfile`` in this process leave its files and directories
    readable by the other side of the shared directory (see `_ReadableOs`)."""
    import tempfile

    if not isinstance(tempfile._os, _ReadableOs):  # type: ignore[attr-defined]
        tempfile._os = _ReadableOs(os)  # type: ignore[attr-defined]


def open_dirs(root: str) -> None:
    """In the check: a directory the test's code makes in the shared
    directory ``root`` with its owner's write bit (``os.mkdir``, so
    ``os.makedirs``, ``pathlib`` and ``tempfile``) is made sticky and open
    to all (1777), as the shared directory is: the candidate may add its
    output files there, as one program can, and cannot change, rename or
    remove the test's (the kernel's sticky rule). One the test makes
    without its owner's write bit stays as made: one program cannot write
    there either."""
    real = os.mkdir

    def mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real(path, mode, dir_fd=dir_fd)
        if dir_fd is None and _inside(root, path):
            if os.stat(path).st_mode & _OWNER_WX == _OWNER_WX:
                os.chmod(path, int(MODE, 8))

    mkdir.__doc__ = real.__doc__
    os.mkdir = mkdir


def _inside(root: str, path: Any) -> bool:
    try:
        full = os.path.abspath(os.fsdecode(path))
    except (OSError, TypeError, ValueError):
        return False
    return full.startswith(root.rstrip("/") + "/")


_OWNER_WX = stat.S_IWUSR | stat.S_IXUSR
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
REFUSED: list[str] = []
"""What `guard` refused in this check's process, first first: the check
fails with it even if the test catches the ``PermissionError`` (a test
expecting a read-only file would take the guard's refusal for the
candidate's ``chmod``)."""


def guard(root: str) -> None:
    """Make every open for writing in this (check) process refuse a path
    in the shared directory that the candidate could have prepared: a
    directory on the way, or the file itself, that is not ours (a symlink
    out of the directory, the candidate's file the test would write into
    and the candidate could rewrite). A name the test creates is created
    by us first, exclusively and without following a symlink, so once the
    open goes ahead the sticky directory keeps it ours. Refusals are
    ``PermissionError`` with a reason, which fails the check."""
    import sys

    busy: list[bool] = []  # the hook's own opens are not checked again

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _REMOVALS and not busy and len(args) >= 2:
            busy.append(True)
            try:
                _check_removal(root, args[0], args[_REMOVALS[event]])
            finally:
                busy.clear()
            return
        if event != "open" or busy or len(args) != 3 or not isinstance(args[2], int):
            return
        if not isinstance(args[0], str | bytes | os.PathLike):
            return
        busy.append(True)
        try:
            if args[2] & _WRITES:
                _check_write(root, os.fsdecode(args[0]), args[2])
            else:
                _check_read(root, os.fsdecode(args[0]))
        finally:
            busy.clear()

    sys.addaudithook(hook)


UNREADABLE: list[str] = []
"""Files of the candidate's in the shared directory that the test opened
to read and its user may not (a mode for the candidate's user only, such
as 0600): a ``PermissionError`` on one is named, not the answer's fault
(in one program the two are one user)."""


def _check_read(root: str, path: str) -> None:
    full = os.path.abspath(path)
    if not full.startswith(root + os.sep) or len(UNREADABLE) >= 100:
        return
    try:
        st = os.stat(full)
    except OSError:
        return
    if st.st_uid != os.getuid() and not st.st_mode & stat.S_IROTH:
        UNREADABLE.append(full)


_REMOVALS = {"os.remove": 1, "os.rmdir": 1, "os.rename": 2, "os.replace": 2}
"""Audit events that remove a name, and where each has the source's ``dir_fd``."""
UNREMOVABLE: list[str] = []
"""Names in the shared directory the test removed or renamed that the
kernel refuses it: the candidate's own in a sticky directory, or any in a
directory the candidate made. A ``PermissionError`` there is named (in one
program the two are one user), even when the test's runner caught it."""


def _check_removal(root: str, path: Any, dir_fd: Any) -> None:
    if len(UNREMOVABLE) >= 100:
        return
    try:
        name = os.fsdecode(path)
        if os.path.isabs(name):
            base = ""
        elif type(dir_fd) is int and dir_fd >= 0:
            base = os.readlink(f"/proc/self/fd/{dir_fd}")
        else:
            base = os.getcwd()
        full = os.path.normpath(os.path.join(base, name))
        if not full.startswith(root + os.sep):
            return
        parent, st = os.stat(os.path.dirname(full)), os.lstat(full)
    except (OSError, TypeError, ValueError):
        return
    me = os.getuid()
    if parent.st_uid != me and not parent.st_mode & stat.S_IWOTH:
        UNREMOVABLE.append(full)  # a directory the candidate made
    elif parent.st_mode & stat.S_ISVTX and st.st_uid != me and parent.st_uid != me:
        UNREMOVABLE.append(full)  # the candidate's name in a sticky directory


def _check_write(root: str, path: str, flags: int) -> None:
    try:
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
    except OSError:
        return  # a working directory that is gone: the open itself fails
    if not full.startswith(root + os.sep):
        return
    *dirs, name = full[len(root) + 1 :].split(os.sep)
    me = os.getuid()
    at = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in dirs:
            sub = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at)
            os.close(at)
            at = sub
            st = os.fstat(at)
            if st.st_uid != me or not stat.S_ISDIR(st.st_mode):
                _refuse(f"a directory the candidate's process made is on the way to {name!r}")
                raise PermissionError(f"{full}: a directory the candidate made is on the way")
        if flags & os.O_CREAT and not flags & os.O_EXCL:
            try:
                excl = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
                os.close(os.open(name, excl, 0o666, dir_fd=at))
                return
            except FileExistsError:
                pass
        try:
            st = os.stat(name, dir_fd=at, follow_symlinks=False)
        except FileNotFoundError:
            return  # the open itself fails (no O_CREAT) or creates exclusively
        if st.st_uid != me or not stat.S_ISREG(st.st_mode):
            _refuse(f"{name!r} is a name the candidate's process made")
            raise PermissionError(
                f"{full}: the candidate made this name; the test may not write it"
            )
    finally:
        os.close(at)


def _refuse(what: str) -> None:
    REFUSED.append(
        f"strict scoring: the test may not write where the candidate could rewrite it: {what}"
    )
