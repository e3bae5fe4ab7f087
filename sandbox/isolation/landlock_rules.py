"""The Landlock layer: a ruleset prepared once per template, applied per child.

The template opens the allowed paths and builds the ruleset while it still
can (`prepare`); each forked child only restricts itself with it
(`restrict_self`: two syscalls). Rights are chosen by the kernel's Landlock
ABI, so an older kernel gets what it knows and nothing it would refuse.
"""

from __future__ import annotations

import ctypes
import os
import struct

PR_SET_NO_NEW_PRIVS = 38

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

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_PATH_BENEATH = struct.Struct("=Qi")  # struct landlock_path_beneath_attr (packed)


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def abi() -> int:
    version = int(
        _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    )
    return max(version, 0)


def prepare(read_roots: list[str], write_roots: list[str]) -> tuple[int | None, str | None]:
    """The ruleset fd every child restricts itself with, or None and why not."""
    version = abi()
    if version < 1:
        return None, "kernel has no Landlock"
    fs_write = FS_WRITE_FILE | FS_WRITE_TREE
    if version >= 2:
        fs_write |= FS_REFER
    if version >= 3:
        fs_write |= FS_TRUNCATE
    fs_read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    fs_all = fs_read | fs_write | (FS_IOCTL_DEV if version >= 5 else 0)
    net = NET_ALL if version >= 4 else 0
    attr = struct.pack("=QQQ", fs_all, net, SCOPE_ALL if version >= 6 else 0)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = int(_libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), 0))
    if fd < 0:
        return None, f"landlock_create_ruleset failed: {_errno_text()}"
    # No new privileges, once, here: the template never executes anything,
    # and its children inherit it, which restricting themselves requires.
    if int(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0:
        os.close(fd)
        return None, f"no_new_privs failed: {_errno_text()}"
    rules = [(p, fs_read) for p in read_roots] + [(p, fs_all) for p in write_roots]
    truncate = FS_TRUNCATE if version >= 3 else 0
    rules.append(("/dev/null", FS_READ_FILE | FS_WRITE_FILE | truncate))
    for path, access in rules:
        problem = _allow(fd, path, access)
        if problem is not None:
            os.close(fd)
            return None, problem
    return fd, None


def _allow(ruleset: int, path: str, access: int) -> str | None:
    """Add one path-beneath rule; a path this machine lacks needs none."""
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not os.path.isdir(path):
            access &= FS_EXECUTE | FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        rule = ctypes.create_string_buffer(_PATH_BENEATH.pack(access, target), 12)
        if int(_libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, rule, 0)):
            return f"landlock_add_rule({path}) failed: {_errno_text()}"
        return None
    finally:
        os.close(target)


def restrict_self(ruleset: int) -> None:
    """Confine this (forked) process with the prepared ruleset (its
    template set no_new_privs when it made it); OSError if the kernel
    refuses, so the job fails rather than running unconfined."""
    if int(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)
